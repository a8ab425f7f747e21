const ini = require('ini');
const cfg = ini.parse('; c\nscope = global\n[db]\nuser = dbuser\nport = 5432\n[db.ro]\nflag = true\n');
console.log(cfg);
require('fs').writeFileSync('out.ini', ini.stringify({ a: 1, sec: { b: 'two' } }));
