const XLSX = require('xlsx');
const wb = XLSX.utils.book_new();
XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['name', 'n'], ['a', 1], ['b', 2.5], ['c', { f: 'SUM(B2:B3)' }]]), 'Data');
const buf = XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' });
const back = XLSX.read(buf);
console.log(back.SheetNames, XLSX.utils.sheet_to_csv(back.Sheets.Data), back.Sheets.Data['!ref']);
XLSX.writeFile(back, 'x.csv', { bookType: 'csv' });
XLSX.writeFile(wb, 'x.xlsx', { compression: true });
console.log(XLSX.utils.sheet_to_json(XLSX.readFile('x.xlsx').Sheets.Data));
