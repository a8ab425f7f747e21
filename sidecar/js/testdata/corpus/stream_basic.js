// node:stream: event order, backpressure, Transform, pipeline, async iteration.
const { Readable, Writable, Transform, PassThrough, pipeline, finished } = require('stream');
const sp = require('stream/promises');
const log = [];
const r = new Readable({ read() {} });
r.on('data', (d) => log.push('data ' + d));
r.on('end', () => log.push('end'));
r.on('close', () => { log.push('close'); console.log(log.join(', ')); step2(); });
r.push('a'); r.push('b'); r.push(null);
log.push('sync done');

function step2() {
  const seen = [];
  let i = 0;
  const src = new Readable({ highWaterMark: 4, read() { i++; this.push(i <= 5 ? 'x'.repeat(3) + i : null); } });
  const slow = new Writable({
    highWaterMark: 5,
    write(chunk, enc, cb) { seen.push(chunk.toString()); setTimeout(cb, 1); },
  });
  const upper = new Transform({
    transform(chunk, enc, cb) { cb(null, chunk.toString().toUpperCase()); },
    flush(cb) { this.push('!'); cb(); },
  });
  pipeline(src, upper, slow, (err) => {
    console.log('pipeline', err, seen.join('|'), slow.writableFinished, src.destroyed);
    step3();
  });
}

function step3() {
  const w = new Writable({ highWaterMark: 3, write(c, e, cb) { setImmediate(cb); } });
  const res = [w.write('ab'), w.write('cd'), w.writableNeedDrain, w.writableLength];
  w.on('drain', () => { res.push('drain'); w.end('z', () => { res.push('end cb'); }); });
  w.on('finish', () => res.push('finish'));
  w.on('close', () => { console.log(res.join(' ')); step4(); });
}

async function step4() {
  const out = [];
  for await (const chunk of Readable.from(['p', 'q', 'r'])) out.push(chunk);
  const p = new PassThrough();
  p.end(Buffer.from('pass'));
  const parts = [];
  for await (const c of p) parts.push(c.toString());
  console.log(out, parts, await Readable.from([1, 2, 3]).toArray());
  const bad = new Readable({ read() { this.destroy(new Error('boom')); } });
  try { await sp.pipeline(bad, new PassThrough()); } catch (e) { console.log('rejected', e.message); }
  const w = new Writable({ write(c, e, cb) { cb(); } });
  w.end();
  try { w.write('late'); } catch (e) { console.log('threw', e.code); }
  w.on('error', (e) => console.log('error event', e.code, e.message));
  finished(w, (e) => console.log('finished', e && e.code));
  const enc = new Readable({ read() {} });
  enc.setEncoding('utf8');
  enc.push(Buffer.from([0xe2, 0x82])); enc.push(Buffer.from([0xac])); enc.push(null);
  enc.on('data', (d) => console.log('decoded', JSON.stringify(d)));
  const paused = Readable.from(['1', '2'], { objectMode: true });
  paused.on('readable', function () { let c; while ((c = this.read()) !== null) console.log('read', c); });
  paused.on('end', () => console.log('readable end', paused.readableEnded, paused instanceof require('stream').Stream, Writable.prototype instanceof require('events')));
  try { new Writable().write(null); } catch (e) { console.log(e.name, e.code, e.message); }
}
