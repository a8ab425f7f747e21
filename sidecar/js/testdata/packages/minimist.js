const argv = require('minimist')(['-x', '3', '-y', '4', '-n5', '-abc', '--beep=boop', 'foo', '--no-ding', '--', '--rest'], { boolean: ['ding'] });
console.log(argv);
