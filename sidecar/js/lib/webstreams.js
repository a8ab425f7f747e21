// node:stream/web and the globals Node has from it: ReadableStream,
// WritableStream, TransformStream with their default readers, writers and
// controllers, the queuing strategies, TextEncoderStream and
// TextDecoderStream. Queues, backpressure (desiredSize, ready), pipeTo,
// pipeThrough, tee and async iteration follow the WHATWG algorithms in
// their default (non-byte) form; byte streams and BYOB readers throw
// ERR_SQLFS_UNSUPPORTED. CompressionStream and DecompressionStream run
// over node:zlib's streams.
const unsupported = (what) => { throw native.unsupported(`stream/web ${what}`); };
const typeError = (code, msg) => { const e = new TypeError(msg); e.code = code; return e; };
const invalidState = (msg) => typeError('ERR_INVALID_STATE', `Invalid state: ${msg}`);
const deferred = () => {
  let resolve, reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
};
const settled = (p) => { p.catch(() => {}); return p; };
const sizeOf = (strategy) => {
  const size = strategy && strategy.size;
  return typeof size === 'function' ? (chunk) => size(chunk) : () => 1;
};
const hwmOf = (strategy, fallback) => {
  const h = strategy && strategy.highWaterMark !== undefined ? Number(strategy.highWaterMark) : fallback;
  if (Number.isNaN(h) || h < 0) throw new RangeError(`The value of "strategy.highWaterMark" is invalid. Received ${h}`);
  return h;
};
const call = (obj, name, args, fallback) => {
  const fn = obj && obj[name];
  if (fn === undefined) return Promise.resolve(fallback);
  try { return Promise.resolve(fn.apply(obj, args)); } catch (e) { return Promise.reject(e); }
};

class CountQueuingStrategy {
  constructor({ highWaterMark }) { this.highWaterMark = highWaterMark; }

  get size() { return () => 1; }
}
class ByteLengthQueuingStrategy {
  constructor({ highWaterMark }) { this.highWaterMark = highWaterMark; }

  get size() { return (chunk) => chunk.byteLength; }
}

// ---- readable ----

class ReadableStreamDefaultController {
  constructor(stream, source, hwm, size) {
    this._stream = stream;
    this._source = source;
    this._hwm = hwm;
    this._size = size;
    this._queue = [];
    this._queueSize = 0;
    this._closeRequested = false;
    this._started = false;
    this._pulling = false;
    this._pullAgain = false;
  }

  get desiredSize() {
    const s = this._stream._state;
    if (s === 'errored') return null;
    if (s === 'closed') return 0;
    return this._hwm - this._queueSize;
  }

  enqueue(chunk) {
    if (this._closeRequested || this._stream._state !== 'readable') throw invalidState('Controller is already closed');
    const stream = this._stream;
    if (stream._reader && stream._reader._requests.length) {
      stream._reader._requests.shift().resolve({ value: chunk, done: false });
    } else {
      let n;
      try { n = this._size(chunk); } catch (e) { this.error(e); throw e; }
      this._queue.push([chunk, n]);
      this._queueSize += n;
    }
    this._pullIfNeeded();
  }

  close() {
    if (this._closeRequested || this._stream._state !== 'readable') throw invalidState('Controller is already closed');
    this._closeRequested = true;
    if (!this._queue.length) this._stream._close();
  }

  error(e) {
    if (this._stream._state !== 'readable') return;
    this._queue = [];
    this._queueSize = 0;
    this._stream._error(e);
  }

  _start() {
    call(this._source, 'start', [this], undefined).then(() => {
      this._started = true;
      this._pullIfNeeded();
    }, (e) => this.error(e));
  }

  _shouldPull() {
    const stream = this._stream;
    if (!this._started || this._closeRequested || stream._state !== 'readable') return false;
    if (stream._reader && stream._reader._requests.length) return true;
    return this.desiredSize > 0;
  }

  _pullIfNeeded() {
    if (!this._shouldPull()) return;
    if (this._pulling) { this._pullAgain = true; return; }
    this._pulling = true;
    call(this._source, 'pull', [this], undefined).then(() => {
      this._pulling = false;
      if (this._pullAgain) { this._pullAgain = false; this._pullIfNeeded(); }
    }, (e) => this.error(e));
  }

  // _read answers a read: a queued chunk, else a pending request.
  _read(request) {
    if (this._queue.length) {
      const [chunk, n] = this._queue.shift();
      this._queueSize -= n;
      if (this._closeRequested && !this._queue.length) this._stream._close();
      else this._pullIfNeeded();
      request.resolve({ value: chunk, done: false });
      return;
    }
    this._stream._reader._requests.push(request);
    this._pullIfNeeded();
  }

  _cancel(reason) {
    this._queue = [];
    this._queueSize = 0;
    return call(this._source, 'cancel', [reason], undefined);
  }
}

class ReadableStreamDefaultReader {
  constructor(stream) {
    if (!(stream instanceof ReadableStream)) throw typeError('ERR_INVALID_ARG_TYPE', 'The "stream" argument must be an instance of ReadableStream.');
    if (stream._reader) throw invalidState('ReadableStream is locked');
    this._stream = stream;
    this._requests = [];
    stream._reader = this;
    this._closed = deferred();
    settled(this._closed.promise);
    if (stream._state === 'closed') this._closed.resolve();
    else if (stream._state === 'errored') this._closed.reject(stream._storedError);
  }

  get closed() { return this._closed.promise; }

  read() {
    const stream = this._stream;
    if (!stream) return Promise.reject(invalidState('The reader is not attached to a stream'));
    if (stream._state === 'closed') return Promise.resolve({ value: undefined, done: true });
    if (stream._state === 'errored') return Promise.reject(stream._storedError);
    const d = deferred();
    stream._controller._read(d);
    return d.promise;
  }

  cancel(reason) {
    if (!this._stream) return Promise.reject(invalidState('The reader is not attached to a stream'));
    return this._stream._cancel(reason);
  }

  releaseLock() {
    const stream = this._stream;
    if (!stream) return;
    const e = typeError('ERR_INVALID_STATE', 'Invalid state: Releasing reader');
    for (const r of this._requests.splice(0)) r.reject(e);
    if (stream._state === 'readable') this._closed.reject(e);
    else { this._closed = deferred(); settled(this._closed.promise); this._closed.reject(e); }
    stream._reader = null;
    this._stream = null;
  }
}

class ReadableStream {
  constructor(source = {}, strategy = {}) {
    if (source && source.type !== undefined) {
      if (String(source.type) === 'bytes') unsupported('byte streams (type: "bytes")');
      throw typeError('ERR_INVALID_ARG_VALUE', `The argument 'source.type' is invalid. Received ${source.type}`);
    }
    this._state = 'readable';
    this._reader = null;
    this._storedError = undefined;
    this._disturbed = false;
    this._controller = new ReadableStreamDefaultController(this, source, hwmOf(strategy, 1), sizeOf(strategy));
    this._controller._start();
  }

  get locked() { return this._reader !== null; }

  getReader(options) {
    if (options && options.mode !== undefined) {
      if (String(options.mode) === 'byob') unsupported('BYOB readers');
      throw typeError('ERR_INVALID_ARG_VALUE', `The argument 'options.mode' is invalid. Received ${options.mode}`);
    }
    return new ReadableStreamDefaultReader(this);
  }

  cancel(reason) {
    if (this._reader) return Promise.reject(invalidState('ReadableStream is locked'));
    return this._cancel(reason);
  }

  _cancel(reason) {
    this._disturbed = true;
    if (this._state === 'closed') return Promise.resolve();
    if (this._state === 'errored') return Promise.reject(this._storedError);
    this._close();
    return this._controller._cancel(reason).then(() => undefined);
  }

  _close() {
    this._state = 'closed';
    const r = this._reader;
    if (!r) return;
    for (const req of r._requests.splice(0)) req.resolve({ value: undefined, done: true });
    r._closed.resolve();
  }

  _error(e) {
    this._state = 'errored';
    this._storedError = e;
    const r = this._reader;
    if (!r) return;
    for (const req of r._requests.splice(0)) req.reject(e);
    r._closed.reject(e);
  }

  pipeThrough(transform, options) {
    if (this._reader) throw invalidState('ReadableStream is locked');
    settled(this.pipeTo(transform.writable, options));
    return transform.readable;
  }

  pipeTo(dest, options = {}) {
    if (this._reader) return Promise.reject(invalidState('ReadableStream is locked'));
    if (dest._writer) return Promise.reject(invalidState('WritableStream is locked'));
    const { preventClose = false, preventAbort = false, preventCancel = false, signal } = options;
    const reader = this.getReader();
    const writer = dest.getWriter();
    this._disturbed = true;
    const done = deferred();
    let finished = false;
    const finish = (err, isError) => {
      if (finished) return;
      finished = true;
      writer.releaseLock();
      reader.releaseLock();
      if (isError) done.reject(err); else done.resolve();
    };
    const abortWith = (reason) => {
      const acts = [];
      if (!preventAbort) acts.push(dest._state === 'writable' ? writer.abort(reason) : Promise.resolve());
      if (!preventCancel) acts.push(this._state === 'readable' ? reader.cancel(reason) : Promise.resolve());
      Promise.all(acts).then(() => finish(reason, true), (e) => finish(e, true));
    };
    if (signal) {
      if (signal.aborted) { abortWith(signal.reason); return done.promise; }
      signal.addEventListener('abort', () => abortWith(signal.reason), { once: true });
    }
    const step = () => {
      if (finished) return;
      writer.ready.then(() => reader.read()).then(({ value, done: end }) => {
        if (finished) return;
        if (end) {
          if (preventClose) finish();
          else writer.close().then(() => finish(), (e) => finish(e, true));
          return;
        }
        settled(writer.write(value));
        step();
      }, (e) => {
        if (finished) return;
        if (this._state === 'errored') {
          if (preventAbort) finish(e, true);
          else writer.abort(e).then(() => finish(e, true), () => finish(e, true));
        } else if (preventCancel) finish(e, true);
        else reader.cancel(e).then(() => finish(e, true), () => finish(e, true));
      });
    };
    step();
    return done.promise;
  }

  tee() {
    const reader = this.getReader();
    let pulling = false, canceled = 0;
    const reasons = [];
    const cancelAll = deferred();
    let a, b;
    const pull = () => {
      if (pulling) return Promise.resolve();
      pulling = true;
      reader.read().then(({ value, done }) => {
        pulling = false;
        if (done) {
          for (const c of [a, b]) if (c && !c._closeRequested && c._stream._state === 'readable') c.close();
          return;
        }
        for (const c of [a, b]) if (c && !c._closeRequested && c._stream._state === 'readable') c.enqueue(value);
      }, (e) => { for (const c of [a, b]) if (c) c.error(e); });
      return Promise.resolve();
    };
    const branch = (i) => new ReadableStream({
      start(c) { if (i === 0) a = c; else b = c; },
      pull,
      cancel(reason) {
        reasons[i] = reason;
        if (++canceled === 2) reader.cancel(reasons).then(cancelAll.resolve, cancelAll.reject);
        return cancelAll.promise;
      },
    });
    return [branch(0), branch(1)];
  }

  values({ preventCancel = false } = {}) {
    const reader = this.getReader();
    const it = {
      next() {
        return reader.read().then((r) => {
          if (r.done) reader.releaseLock();
          return r;
        });
      },
      return(value) {
        if (!preventCancel) {
          const p = reader.cancel(value);
          reader.releaseLock();
          return p.then(() => ({ value, done: true }));
        }
        reader.releaseLock();
        return Promise.resolve({ value, done: true });
      },
      [Symbol.asyncIterator]() { return this; },
    };
    return it;
  }

  [Symbol.asyncIterator](options) { return this.values(options); }

  static from(iterable) {
    if (iterable instanceof ReadableStream) return iterable;
    const asyncIt = iterable[Symbol.asyncIterator];
    const it = asyncIt ? asyncIt.call(iterable) : iterable[Symbol.iterator]();
    return new ReadableStream({
      pull(c) {
        return Promise.resolve(it.next()).then((r) => {
          if (r.done) c.close();
          else return Promise.resolve(r.value).then((v) => c.enqueue(v));
          return undefined;
        });
      },
      cancel(reason) { return typeof it.return === 'function' ? Promise.resolve(it.return(reason)).then(() => undefined) : undefined; },
    }, { highWaterMark: 0 });
  }
}
Object.defineProperty(ReadableStream.prototype, Symbol.toStringTag, { value: 'ReadableStream', configurable: true });

// ---- writable ----

class WritableStreamDefaultController {
  constructor(stream, sink, hwm, size) {
    this._stream = stream;
    this._sink = sink;
    this._hwm = hwm;
    this._size = size;
    this._queue = []; // [chunk, size, deferred] or the close marker
    this._queueSize = 0;
    this._started = false;
    this._writing = false;
    this._abort = new AbortController();
  }

  get signal() { return this._abort.signal; }

  error(e) { if (this._stream._state === 'writable') this._stream._startErroring(e); }

  _desired() { return this._hwm - this._queueSize; }

  _start() {
    call(this._sink, 'start', [this], undefined).then(() => {
      this._started = true;
      this._advance();
    }, (e) => {
      this._started = true;
      this._stream._dealWithRejection(e);
    });
  }

  _write(chunk) {
    let n;
    try { n = this._size(chunk); } catch (e) { this.error(e); return; }
    this._queue.push({ chunk, n });
    this._queueSize += n;
    this._stream._updateBackpressure();
    this._advance();
  }

  _close() {
    this._queue.push({ close: true, n: 0 });
    this._advance();
  }

  _advance() {
    const stream = this._stream;
    if (!this._started || this._writing) return;
    if (stream._state === 'erroring') { stream._finishErroring(); return; }
    if (!this._queue.length) return;
    const head = this._queue[0];
    this._writing = true;
    if (head.close) {
      this._queue.shift();
      call(this._sink, 'close', [], undefined).then(() => {
        this._writing = false;
        stream._finishClose();
      }, (e) => {
        this._writing = false;
        stream._finishClose(e);
      });
      return;
    }
    call(this._sink, 'write', [head.chunk, this], undefined).then(() => {
      this._writing = false;
      this._queue.shift();
      this._queueSize -= head.n;
      stream._finishWrite();
      if (stream._state === 'writable') stream._updateBackpressure();
      this._advance();
    }, (e) => {
      this._writing = false;
      stream._finishWrite(e);
    });
  }
}

class WritableStreamDefaultWriter {
  constructor(stream) {
    if (stream._writer) throw invalidState('WritableStream is locked');
    this._stream = stream;
    stream._writer = this;
    this._closed = deferred();
    settled(this._closed.promise);
    this._ready = deferred();
    settled(this._ready.promise);
    if (stream._state === 'writable' && !stream._backpressure) this._ready.resolve();
    if (stream._state === 'closed') { this._ready.resolve(); this._closed.resolve(); }
    if (stream._state === 'errored' || stream._state === 'erroring') { this._ready.reject(stream._storedError); }
    if (stream._state === 'errored') this._closed.reject(stream._storedError);
  }

  get closed() { return this._closed.promise; }

  get ready() { return this._ready.promise; }

  get desiredSize() {
    const s = this._stream;
    if (!s) throw invalidState('The writer is not attached to a stream');
    if (s._state === 'errored' || s._state === 'erroring') return null;
    if (s._state === 'closed') return 0;
    return s._controller._desired();
  }

  write(chunk) {
    const s = this._stream;
    if (!s) return Promise.reject(invalidState('The writer is not attached to a stream'));
    if (s._state === 'errored' || s._state === 'erroring') return Promise.reject(s._storedError);
    if (s._closeRequested || s._state === 'closed') return Promise.reject(invalidState('WritableStream is closed'));
    const d = deferred();
    s._writeRequests.push(d);
    s._controller._write(chunk);
    return d.promise;
  }

  close() {
    const s = this._stream;
    if (!s) return Promise.reject(invalidState('The writer is not attached to a stream'));
    return s._closeStream();
  }

  abort(reason) {
    if (!this._stream) return Promise.reject(invalidState('The writer is not attached to a stream'));
    return this._stream._abort(reason);
  }

  releaseLock() {
    const s = this._stream;
    if (!s) return;
    const e = invalidState('Writer has been released');
    this._ready = deferred(); settled(this._ready.promise); this._ready.reject(e);
    this._closed = deferred(); settled(this._closed.promise); this._closed.reject(e);
    s._writer = null;
    this._stream = null;
  }
}

class WritableStream {
  constructor(sink = {}, strategy = {}) {
    if (sink && sink.type !== undefined) throw new RangeError('Invalid type is specified');
    this._state = 'writable';
    this._writer = null;
    this._storedError = undefined;
    this._writeRequests = [];
    this._closeRequest = null;
    this._closeRequested = false;
    this._pendingAbort = null;
    this._backpressure = false;
    this._controller = new WritableStreamDefaultController(this, sink, hwmOf(strategy, 1), sizeOf(strategy));
    this._updateBackpressure();
    this._controller._start();
  }

  get locked() { return this._writer !== null; }

  getWriter() { return new WritableStreamDefaultWriter(this); }

  close() {
    if (this._writer) return Promise.reject(invalidState('WritableStream is locked'));
    return this._closeStream();
  }

  abort(reason) {
    if (this._writer) return Promise.reject(invalidState('WritableStream is locked'));
    return this._abort(reason);
  }

  _closeStream() {
    if (this._state === 'closed' || this._state === 'errored' || this._closeRequested) return Promise.reject(invalidState('WritableStream is closed'));
    this._closeRequested = true;
    this._closeRequest = deferred();
    if (this._writer && this._backpressure && this._state === 'writable') this._writer._ready.resolve();
    this._controller._close();
    return this._closeRequest.promise;
  }

  _abort(reason) {
    if (this._state === 'closed' || this._state === 'errored') return Promise.resolve();
    this._controller._abort.abort(reason);
    if (this._pendingAbort) return this._pendingAbort.promise;
    this._pendingAbort = deferred();
    this._pendingAbort.reason = reason;
    if (this._state === 'writable') this._startErroring(reason);
    return this._pendingAbort.promise;
  }

  _updateBackpressure() {
    if (this._state !== 'writable' || this._closeRequested) return;
    const bp = this._controller._desired() <= 0;
    if (bp === this._backpressure) return;
    this._backpressure = bp;
    const w = this._writer;
    if (!w) return;
    if (bp) { w._ready = deferred(); settled(w._ready.promise); } else w._ready.resolve();
  }

  _startErroring(e) {
    this._state = 'erroring';
    this._storedError = e;
    const w = this._writer;
    if (w) {
      if (!this._backpressure) { w._ready = deferred(); settled(w._ready.promise); }
      w._ready.reject(e);
    }
    if (!this._controller._writing && this._controller._started) this._finishErroring();
  }

  _finishErroring() {
    this._state = 'errored';
    const e = this._storedError;
    this._controller._queue = [];
    for (const d of this._writeRequests.splice(0)) d.reject(e);
    const abort = this._pendingAbort;
    const done = () => {
      if (this._closeRequest) this._closeRequest.reject(e);
      if (this._writer) this._writer._closed.reject(e);
    };
    if (!abort) { done(); return; }
    this._pendingAbort = null;
    call(this._controller._sink, 'abort', [abort.reason], undefined).then(() => { abort.resolve(); done(); }, (err) => { abort.reject(err); done(); });
  }

  _dealWithRejection(e) {
    if (this._state === 'writable') { this._startErroring(e); return; }
    this._finishErroring();
  }

  _finishWrite(err) {
    const d = this._writeRequests.shift();
    if (err === undefined) { if (d) d.resolve(); return; }
    if (d) d.reject(err);
    this._dealWithRejection(err);
  }

  _finishClose(err) {
    if (err !== undefined) {
      this._closeRequest.reject(err);
      this._dealWithRejection(err);
      return;
    }
    this._state = 'closed';
    this._closeRequest.resolve();
    if (this._writer) this._writer._closed.resolve();
  }
}
Object.defineProperty(WritableStream.prototype, Symbol.toStringTag, { value: 'WritableStream', configurable: true });

// ---- transform ----

class TransformStreamDefaultController {
  constructor(readableController, onError) {
    this._rc = readableController;
    this._onError = onError;
  }

  get desiredSize() { return this._rc.desiredSize; }

  enqueue(chunk) { this._rc.enqueue(chunk); }

  error(e) { this._onError(e); }

  terminate() {
    if (this._rc._stream._state === 'readable' && !this._rc._closeRequested) this._rc.close();
    this._onError(typeError('ERR_INVALID_STATE', 'Invalid state: TransformStream has been terminated'), true);
  }
}

class TransformStream {
  constructor(transformer = {}, writableStrategy = {}, readableStrategy = { highWaterMark: 0 }) {
    if (transformer.readableType !== undefined) throw new RangeError('Invalid readableType is specified');
    if (transformer.writableType !== undefined) throw new RangeError('Invalid writableType is specified');
    let rc;
    let backpressure = deferred();
    let controller;
    const fail = (e, terminated) => {
      if (!terminated && rc._stream._state === 'readable') rc.error(e);
      if (this.writable._state === 'writable') this.writable._startErroring(e);
    };
    const started = deferred();
    this.readable = new ReadableStream({
      start(c) { rc = c; },
      pull() { const b = backpressure; backpressure = deferred(); b.resolve(); return undefined; },
      cancel(reason) { fail(reason); return call(transformer, 'cancel', [reason], undefined); },
    }, readableStrategy);
    controller = new TransformStreamDefaultController(rc, fail);
    const transform = (chunk) => {
      if (typeof transformer.transform === 'function') return call(transformer, 'transform', [chunk, controller], undefined);
      try { controller.enqueue(chunk); return Promise.resolve(); } catch (e) { return Promise.reject(e); }
    };
    this.writable = new WritableStream({
      start() { return started.promise; },
      write(chunk) {
        const go = () => transform(chunk).catch((e) => { fail(e); throw e; });
        if (rc.desiredSize > 0 || rc._stream._reader && rc._stream._reader._requests.length) return go();
        return backpressure.promise.then(go);
      },
      close() {
        return call(transformer, 'flush', [controller], undefined).then(() => {
          if (rc._stream._state === 'readable' && !rc._closeRequested) rc.close();
        }, (e) => { fail(e); throw e; });
      },
      abort(reason) { fail(reason); return call(transformer, 'cancel', [reason], undefined); },
    }, writableStrategy);
    call(transformer, 'start', [controller], undefined).then(() => started.resolve(), (e) => { fail(e); started.reject(e); });
  }
}
Object.defineProperty(TransformStream.prototype, Symbol.toStringTag, { value: 'TransformStream', configurable: true });

class TextEncoderStream extends TransformStream {
  constructor() {
    const enc = new TextEncoder();
    let high = '';
    super({
      transform(chunk, c) {
        let s = high + String(chunk);
        high = '';
        const last = s.charCodeAt(s.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) { high = s.slice(-1); s = s.slice(0, -1); }
        if (s) c.enqueue(enc.encode(s));
      },
      flush(c) { if (high) c.enqueue(new Uint8Array([0xef, 0xbf, 0xbd])); },
    });
  }

  get encoding() { return 'utf-8'; }
}

class TextDecoderStream extends TransformStream {
  constructor(label = 'utf-8', options = {}) {
    const dec = new TextDecoder(label, options);
    super({
      transform(chunk, c) { const s = dec.decode(chunk, { stream: true }); if (s) c.enqueue(s); },
      flush(c) { const s = dec.decode(); if (s) c.enqueue(s); },
    });
    this._dec = dec;
  }

  get encoding() { return this._dec.encoding; }

  get fatal() { return this._dec.fatal; }

  get ignoreBOM() { return this._dec.ignoreBOM; }
}

// CompressionStream and DecompressionStream over node:zlib's Go streams.
const zlibFormats = { gzip: ['gzip', 'gunzip'], deflate: ['deflate', 'inflate'], 'deflate-raw': ['deflateRaw', 'inflateRaw'] };
const zlibTransform = (format, which) => {
  const ops = zlibFormats[format];
  if (!ops) throw typeError('ERR_INVALID_ARG_VALUE', `The argument 'format' is invalid. Received '${format}'`);
  const z = native.crypto.zlibStream(ops[which], -1);
  const take = (c, res) => {
    let [out, state] = res;
    for (;;) {
      if (out.length) c.enqueue(new Uint8Array(out.buffer, out.byteOffset, out.length));
      if (state !== 'more') return;
      [out, state] = z.more();
    }
  };
  return {
    transform(chunk, c) {
      if (!ArrayBuffer.isView(chunk) && !(chunk instanceof ArrayBuffer)) throw typeError('ERR_INVALID_ARG_TYPE', 'The "chunk" argument must be an instance of ArrayBuffer or ArrayBufferView.');
      take(c, z.write(chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    },
    flush(c) { take(c, z.end()); },
  };
};
class CompressionStream extends TransformStream {
  constructor(format) { super(zlibTransform(format, 0)); }
}
class DecompressionStream extends TransformStream {
  constructor(format) { super(zlibTransform(format, 1)); }
}

const refused = (name) => class { constructor() { unsupported(name); } };

module.exports = {
  ReadableStream, ReadableStreamDefaultReader, ReadableStreamDefaultController,
  WritableStream, WritableStreamDefaultWriter, WritableStreamDefaultController,
  TransformStream, TransformStreamDefaultController,
  CountQueuingStrategy, ByteLengthQueuingStrategy, TextEncoderStream, TextDecoderStream,
  ReadableByteStreamController: refused('ReadableByteStreamController'),
  ReadableStreamBYOBReader: refused('ReadableStreamBYOBReader'),
  ReadableStreamBYOBRequest: refused('ReadableStreamBYOBRequest'),
  CompressionStream, DecompressionStream,
};
