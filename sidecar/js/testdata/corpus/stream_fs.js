// fs streams are node:stream's: pipe with backpressure, pipeline, events, ranges.
const fs = require('fs');
const { pipeline, Transform } = require('stream');
const w = fs.createWriteStream('big.txt');
let i = 0;
const writeMore = () => {
  let ok = true;
  while (i < 2000 && ok) ok = w.write(`line ${i++}\n`);
  if (i < 2000) w.once('drain', writeMore); else w.end();
};
writeMore();
w.on('finish', () => console.log('finish', w.bytesWritten, w.writableFinished));
w.on('close', () => {
  console.log('close', fs.statSync('big.txt').size);
  const upper = new Transform({ transform(c, e, cb) { cb(null, c.toString().toUpperCase()); } });
  pipeline(fs.createReadStream('big.txt'), upper, fs.createWriteStream('upper.txt'), (err) => {
    console.log('pipeline', err, fs.readFileSync('upper.txt', 'utf8').split('\n')[1999]);
    const r = fs.createReadStream('big.txt', { start: 5, end: 14, encoding: 'utf8' });
    const got = [];
    r.on('open', () => got.push('open'));
    r.on('data', (d) => got.push(JSON.stringify(d)));
    r.on('end', () => got.push('end'));
    r.on('close', () => {
      console.log(got.join(' '));
      fs.createReadStream('missing.txt').on('error', (e) => console.log('error', e.code, e.syscall)).on('close', () => console.log('closed after error'));
    });
  });
});
