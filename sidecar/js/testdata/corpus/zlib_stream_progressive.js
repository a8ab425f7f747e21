// zlib streams give output as their input goes, not only at the end: a
// decompressor's output for each chunk written, a compressor's on flush.
const zlib = require('zlib');
const text = Array.from({ length: 20000 }, (_, i) => `line ${i} ${'xyz'.repeat(i % 11)}`).join('\n');
const gz = zlib.gzipSync(text);
const steps = [];
const gunzip = zlib.createGunzip();
let got = 0;
gunzip.on('data', (c) => { got += c.length; });
gunzip.on('end', () => {
  console.log('gunzip', got === Buffer.byteLength(text), 'output before end:', steps.some((n) => n > 0), steps[steps.length - 1] < got);
  flushes();
});
const write = (i) => {
  if (i >= gz.length) { gunzip.end(); return; }
  gunzip.write(gz.subarray(i, i + 4096), () => setImmediate(() => { steps.push(got); write(i + 4096); }));
};
write(0);

function flushes() {
  const deflate = zlib.createDeflate();
  const parts = [];
  deflate.on('data', (c) => parts.push(c));
  deflate.write('hello, ');
  deflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
    const early = Buffer.concat(parts);
    console.log('flushed output', early.length > 0, zlib.inflateSync(early, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).toString());
    deflate.end('world');
    deflate.on('end', () => {
      console.log('deflate', zlib.inflateSync(Buffer.concat(parts)).toString());
      bomb();
    });
  });
}

// 64 MiB of zeros from a small input comes out in pieces, not one buffer.
function bomb() {
  const small = zlib.gzipSync(Buffer.alloc(64 << 20));
  const g = zlib.createGunzip();
  let total = 0, max = 0;
  g.on('data', (c) => { total += c.length; max = Math.max(max, c.length); });
  g.on('end', () => { console.log('bomb', small.length < 1 << 20, total, max <= 1 << 20); truncated(); });
  g.end(small);
}

function truncated() {
  const u = zlib.createUnzip();
  u.on('data', () => {});
  u.on('error', (e) => {
    console.log('truncated', e.code, e.errno, e.message);
    const z = zlib.createUnzip();
    const out = [];
    z.on('data', (c) => out.push(c));
    z.on('end', () => console.log('unzip of deflate', Buffer.concat(out).toString()));
    z.end(zlib.deflateSync('deflate data'));
  });
  u.end(gz.subarray(0, gz.length - 10));
}
