const { PDFDocument, StandardFonts, rgb } = require('pdf-lib');
const fs = require('fs');
(async () => {
  const doc = await PDFDocument.create();
  const when = new Date('2024-01-02T03:04:05Z');
  doc.setCreationDate(when); doc.setModificationDate(when); doc.setTitle('Report');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([300, 200]);
  page.drawText('Hello from pdf-lib', { x: 20, y: 150, size: 18, font, color: rgb(0.1, 0.2, 0.7) });
  page.drawRectangle({ x: 20, y: 20, width: 100, height: 50, borderColor: rgb(1, 0, 0), borderWidth: 2 });
  const bytes = await doc.save({ useObjectStreams: false });
  fs.writeFileSync('out.pdf', bytes);
  const back = await PDFDocument.load(bytes);
  console.log(back.getPageCount(), back.getTitle(), font.widthOfTextAtSize('Hello', 18));
})();
