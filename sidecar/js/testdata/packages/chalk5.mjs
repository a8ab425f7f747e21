import chalk, { Chalk } from 'chalk5';
const c = new Chalk({ level: 2 });
console.log(JSON.stringify(c.hex('#ff8800').underline('x')), chalk.level >= 0);
