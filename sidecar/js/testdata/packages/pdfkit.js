// compress: false: pdfkit deflates through node:zlib, and Go's deflate gives other (valid) bytes than zlib's.
const PDFDocument = require('pdfkit');
const fs = require('fs');
const doc = new PDFDocument({ size: 'A6', compress: false, info: { CreationDate: new Date('2024-01-02T03:04:05Z'), Title: 'Kit' } });
const out = fs.createWriteStream('out.pdf');
doc.pipe(out);
doc.fontSize(14).text('Hello from PDFKit', 30, 30).moveDown().fontSize(9).text('A second line, wrapped '.repeat(5), { width: 200 });
doc.rect(30, 150, 80, 40).stroke();
doc.end();
out.on('finish', () => console.log('written', fs.statSync('out.pdf').size > 500));
