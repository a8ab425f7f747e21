const chalk = require('chalk');
const c = new chalk.Instance({ level: 1 });
console.log(JSON.stringify(c.red.bold('x') + c.bgBlue('y')), chalk.supportsColor, typeof chalk.level);
