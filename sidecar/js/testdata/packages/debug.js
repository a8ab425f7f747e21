const debug = require('debug');
debug.enable('app:*');
const log = debug('app:db');
log.log = (...args) => console.log('logged', args.length);
log.useColors = false;
console.log(log.enabled, debug('other').enabled, debug.enabled('app:x'));
log('query %s', 'select');
