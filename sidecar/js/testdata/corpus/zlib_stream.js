// zlib streams: gzip and deflate through pipeline, round trips, errors.
const zlib = require('zlib');
const { Readable, Writable, pipeline } = require('stream');
const collect = (done) => { const parts = []; return new Writable({ write(c, e, cb) { parts.push(c); cb(); }, final(cb) { done(Buffer.concat(parts)); cb(); } }); };
const text = Array.from({ length: 3000 }, (_, i) => `row ${i} ${'abc'.repeat(i % 7)}`).join('\n');
const chunks = text.match(/[^]{1,1000}/g);
pipeline(Readable.from(chunks), zlib.createGzip(), zlib.createGunzip(), collect((b) => console.log('gzip round trip', b.toString() === text, b.length)), (err) => {
  console.log('pipeline', err);
  const gz = zlib.createGzip();
  pipeline(Readable.from([text]), gz, collect((b) => console.log('gunzipSync', zlib.gunzipSync(b).toString() === text, b[0], b[1], gz.bytesWritten)), () => {
    const d = zlib.createDeflate({ level: 9 });
    d.end(Buffer.from(text));
    const parts = [];
    d.on('data', (c) => parts.push(c));
    d.on('end', () => {
      console.log('inflateSync', zlib.inflateSync(Buffer.concat(parts)).toString() === text, d instanceof require('stream').Transform, typeof zlib.Gzip);
      const bad = zlib.createGunzip();
      bad.on('error', (e) => {
        console.log('error', e.code, e.errno, e.message);
        const raw = zlib.createInflateRaw();
        raw.on('data', (c) => console.log('raw', c.toString()));
        raw.end(zlib.deflateRawSync(Buffer.from('raw deflate')));
      });
      bad.end(Buffer.from('not gzip data'));
    });
  });
});
