// Web streams as Node has them globally: readers, pull sources with
// backpressure, TransformStream, pipeTo/pipeThrough, tee, from, the text
// and compression streams, cancel and abort; and AbortController.
const log = (...a) => console.log(...a);
const readAll = async (rs) => { const r = rs.getReader(); const out = []; for (;;) { const { value, done } = await r.read(); if (done) return out; out.push(value); } };
(async () => {
  let pulls = 0;
  const counted = new ReadableStream({
    start(c) { log('start', c.desiredSize); },
    pull(c) { pulls++; if (pulls > 3) c.close(); else c.enqueue(pulls); },
  }, { highWaterMark: 2 });
  log('locked', counted.locked, Object.prototype.toString.call(counted));
  log('read', await readAll(counted), 'pulls', pulls);

  const upper = new TransformStream({ transform(chunk, c) { c.enqueue(chunk.toUpperCase()); }, flush(c) { c.enqueue('!'); } });
  log('pipeThrough', await readAll(ReadableStream.from(['a', 'b', 'c']).pipeThrough(upper)));

  const written = [];
  const sink = new WritableStream({
    write(chunk) { written.push(chunk); return new Promise((r) => setTimeout(r, 1)); },
    close() { written.push('closed'); },
  }, new CountQueuingStrategy({ highWaterMark: 2 }));
  const w = sink.getWriter();
  log('desiredSize', w.desiredSize);
  w.write('x'); w.write('y');
  log('after two writes', w.desiredSize);
  await w.ready;
  await w.close();
  log('written', written);

  const dest = [];
  await ReadableStream.from([1, 2, 3]).pipeTo(new WritableStream({ write(c) { dest.push(c * 10); } }));
  log('pipeTo', dest);

  const [a, b] = ReadableStream.from(['t1', 't2']).tee();
  log('tee', await readAll(a), await readAll(b));

  const bytes = await readAll(ReadableStream.from(['héllo ', 'wörld']).pipeThrough(new TextEncoderStream()));
  log('encoded', bytes.map((u) => u.length), bytes[0] instanceof Uint8Array);
  const dec = await readAll(ReadableStream.from([new Uint8Array([0xe2, 0x82]), new Uint8Array([0xac, 0x41])]).pipeThrough(new TextDecoderStream()));
  log('decoded', dec);

  const text = 'compress me '.repeat(500);
  const gz = await readAll(ReadableStream.from([new TextEncoder().encode(text)]).pipeThrough(new CompressionStream('gzip')));
  const round = await readAll(ReadableStream.from(gz).pipeThrough(new DecompressionStream('gzip')).pipeThrough(new TextDecoderStream()));
  log('compression round trip', round.join('') === text, gz[0][0], gz[0][1]);

  let cancelled;
  const c = new ReadableStream({ pull(ctl) { ctl.enqueue('v'); }, cancel(r) { cancelled = r; } });
  const reader = c.getReader();
  log('first', await reader.read());
  try { c.getReader(); } catch (e) { log('second reader', e.name, e.code); }
  await reader.cancel('enough');
  log('cancel reason', cancelled, await reader.read());

  const failing = new ReadableStream({ start(ctl) { ctl.error(new Error('boom')); } });
  try { await failing.getReader().read(); } catch (e) { log('errored', e.message); }

  const aborted = [];
  const ws = new WritableStream({ abort(r) { aborted.push(r); } });
  await ws.getWriter().abort('stop');
  log('abort', aborted);

  const ac = new AbortController();
  ac.signal.addEventListener('abort', () => log('abort event', ac.signal.aborted));
  ac.abort();
  log('reason', ac.signal.reason.name, ac.signal.reason.message, ac.signal.reason.code, ac.signal.reason instanceof Error);
  try { ac.signal.throwIfAborted(); } catch (e) { log('throwIfAborted', e === ac.signal.reason); }
  log('AbortSignal.abort', AbortSignal.abort('why').reason, typeof require('stream/web').ReadableStream);
  const et = new EventTarget();
  et.addEventListener('ping', (e) => log('ping', e.type, e.target === et), { once: true });
  et.dispatchEvent(new Event('ping'));
  et.dispatchEvent(new Event('ping'));
})();
