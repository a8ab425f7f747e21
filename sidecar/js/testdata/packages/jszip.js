const JSZip = require('jszip');
const fs = require('fs');
(async () => {
  const date = new Date('2024-01-02T03:04:05Z');
  const zip = new JSZip();
  zip.file('hello.txt', 'Hello world\n', { date });
  zip.file('sub/data.json', JSON.stringify({ a: 1 }), { date, createFolders: false });
  const buf = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
  fs.writeFileSync('out.zip', buf);
  const back = await JSZip.loadAsync(fs.readFileSync('out.zip'));
  console.log(Object.keys(back.files), await back.file('sub/data.json').async('string'));
})();
