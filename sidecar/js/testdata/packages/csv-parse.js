const { parse } = require('csv-parse/sync');
console.log(parse('a,b\n1,"x, y"\n2,"multi\nline"\n', { columns: true }));
