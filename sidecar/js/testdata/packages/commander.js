const { Command } = require('commander');
const program = new Command();
program.name('tool').option('-d, --debug', 'debug').option('-n, --count <n>', 'count', parseFloat).argument('<file>');
program.exitOverride();
program.parse(['node', 'tool', '-d', '-n', '3', 'x.txt']);
console.log(program.opts(), program.args);
console.log(program.helpInformation());
