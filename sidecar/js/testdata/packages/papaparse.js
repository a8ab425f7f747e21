const Papa = require('papaparse');
const r = Papa.parse('name,age\n"Smith, J",42\nAnn,7\n', { header: true, dynamicTyping: true, skipEmptyLines: true });
console.log(r.data, r.errors.length, Papa.unparse([{ a: 1, b: 'x,y' }, { a: 2, b: 'z' }]));
