const ms = require('ms');
console.log(ms('2 days'), ms('1.5h'), ms(60000), ms(ms('10 hours'), { long: true }));
