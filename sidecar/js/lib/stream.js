// node:stream: Readable, Writable, Duplex, Transform, PassThrough, pipeline
// and finished, after Node 20's algorithms (buffering up to highWaterMark,
// flowing and paused modes, backpressure through write's result and
// 'drain', the order of 'data', 'end', 'finish', 'close' and 'error' on
// the next tick). Not there: the experimental operators (map, filter, …),
// web streams, AbortSignal options.
const EE = require('events');
const { StringDecoder } = require('string_decoder');
const tick = process.nextTick;

const err = (code, msg, Type = Error) => Object.assign(new Type(msg), { code });
const notImplemented = (m) => err('ERR_METHOD_NOT_IMPLEMENTED', `The ${m} method is not implemented`);
const toBuffer = (chunk, enc) => (typeof chunk === 'string' ? Buffer.from(chunk, enc) : chunk instanceof Uint8Array && !Buffer.isBuffer(chunk) ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : chunk);
const hwm = (o, key, objectMode) => {
  const v = o[key] ?? o.highWaterMark;
  return v === undefined ? (objectMode ? 16 : 16384) : Math.floor(v);
};

// inherit makes C a subclass of P, as util.inherits and class extends do.
const inherit = (C, P) => {
  Object.setPrototypeOf(C.prototype, P.prototype);
  Object.setPrototypeOf(C, P);
};

function Stream(opts) { EE.call(this, opts); }
inherit(Stream, EE);
// The legacy pipe of a Stream that is not a Readable.
Stream.prototype.pipe = function (dest, o) {
  const src = this;
  const ondata = (chunk) => { if (dest.writable && dest.write(chunk) === false && src.pause) src.pause(); };
  const ondrain = () => { if (src.readable && src.resume) src.resume(); };
  src.on('data', ondata);
  dest.on('drain', ondrain);
  if (!o || o.end !== false) src.on('end', () => dest.end());
  dest.emit('pipe', src);
  return dest;
};

function destroyImpl(stream, error, cb) {
  const r = stream._readableState, w = stream._writableState;
  const s = w || r;
  if ((w && w.destroyed) || (r && r.destroyed)) {
    if (typeof cb === 'function') cb();
    return stream;
  }
  if (error) {
    if (w && !w.errored) w.errored = error;
    if (r && !r.errored) r.errored = error;
  }
  if (w) w.destroyed = true;
  if (r) r.destroyed = true;
  stream._destroy(error || null, (e) => {
    if (e) {
      if (w && !w.errored) w.errored = e;
      if (r && !r.errored) r.errored = e;
    }
    if (w) w.closed = true;
    if (r) r.closed = true;
    if (typeof cb === 'function') cb(e);
    tick(() => {
      if (e && !s.errorEmitted) {
        if (w) w.errorEmitted = true;
        if (r) r.errorEmitted = true;
        stream.emit('error', e);
      }
      if (s.emitClose) stream.emit('close');
    });
  });
  return stream;
}

function errorOrDestroy(stream, e) {
  const r = stream._readableState, w = stream._writableState;
  if ((w && w.destroyed) || (r && r.destroyed)) return;
  if ((r && r.autoDestroy) || (w && w.autoDestroy)) stream.destroy(e);
  else if (e) {
    if (w) w.errored = e;
    if (r) r.errored = e;
    tick(() => stream.emit('error', e));
  }
}

// Readable.

function ReadableState(o, stream, isDuplex) {
  this.objectMode = !!(o.objectMode || (isDuplex && o.readableObjectMode));
  this.highWaterMark = hwm(o, isDuplex ? 'readableHighWaterMark' : 'highWaterMark', this.objectMode);
  this.buffer = [];
  this.length = 0;
  this.pipes = [];
  this.flowing = null;
  this.ended = this.endEmitted = this.reading = false;
  this.constructed = true;
  this.sync = true;
  this.needReadable = this.emittedReadable = this.readableListening = this.resumeScheduled = false;
  this.errorEmitted = false;
  this.emitClose = o.emitClose !== false;
  this.autoDestroy = o.autoDestroy !== false;
  this.destroyed = this.closed = false;
  this.errored = null;
  this.defaultEncoding = o.defaultEncoding || 'utf8';
  this.awaitDrainWriters = 0;
  this.multiAwaitDrain = false;
  this.readingMore = false;
  this.dataEmitted = false;
  this.decoder = null;
  this.encoding = null;
  if (o.encoding) {
    this.decoder = new StringDecoder(o.encoding);
    this.encoding = o.encoding;
  }
}

function Readable(o) {
  if (!(this instanceof Readable)) return new Readable(o);
  o = o || {};
  const isDuplex = this instanceof Duplex;
  this._readableState = new ReadableState(o, this, isDuplex);
  if (typeof o.read === 'function') this._read = o.read;
  if (typeof o.destroy === 'function') this._destroy = o.destroy;
  Stream.call(this, o);
}
inherit(Readable, Stream);
Readable.ReadableState = ReadableState;

Readable.prototype.push = function (chunk, encoding) { return addChunk(this, chunk, encoding, false); };
Readable.prototype.unshift = function (chunk, encoding) { return addChunk(this, chunk, encoding, true); };

function addChunk(stream, chunk, encoding, front) {
  const s = stream._readableState;
  if (chunk === null) {
    s.reading = false;
    onEofChunk(stream, s);
    return false;
  }
  if (!s.objectMode) {
    if (typeof chunk === 'string') {
      encoding = encoding || s.defaultEncoding;
      if (s.encoding !== encoding) {
        chunk = front && s.encoding ? Buffer.from(chunk, encoding).toString(s.encoding) : Buffer.from(chunk, encoding);
      }
    } else if (chunk instanceof Uint8Array) {
      chunk = toBuffer(chunk);
    } else if (chunk !== undefined) {
      errorOrDestroy(stream, err('ERR_INVALID_ARG_TYPE', `The "chunk" argument must be of type string or an instance of Buffer or Uint8Array. Received ${typeof chunk}`, TypeError));
      return false;
    }
  }
  if (!s.objectMode && (chunk === undefined || chunk.length === 0)) {
    s.reading = false;
    maybeReadMore(stream, s);
    return !s.ended && (s.length < s.highWaterMark || s.length === 0);
  }
  if (front) {
    if (s.endEmitted) { errorOrDestroy(stream, err('ERR_STREAM_UNSHIFT_AFTER_END_EVENT', 'stream.unshift() after end event')); return false; }
    if (s.destroyed || s.errored) return false;
    place(stream, s, chunk, true);
  } else if (s.ended) {
    errorOrDestroy(stream, err('ERR_STREAM_PUSH_AFTER_EOF', 'stream.push() after EOF'));
    return false;
  } else if (s.destroyed || s.errored) {
    return false;
  } else {
    s.reading = false;
    if (s.decoder && !encoding) {
      chunk = s.decoder.write(chunk);
      if (s.objectMode || chunk.length !== 0) place(stream, s, chunk, false);
      else maybeReadMore(stream, s);
    } else {
      place(stream, s, chunk, false);
    }
  }
  return !s.ended && (s.length < s.highWaterMark || s.length === 0);
}

function place(stream, s, chunk, front) {
  if (s.flowing && s.length === 0 && !s.sync && stream.listenerCount('data') > 0) {
    s.dataEmitted = true;
    stream.emit('data', chunk);
  } else {
    s.length += s.objectMode ? 1 : chunk.length;
    if (front) s.buffer.unshift(chunk); else s.buffer.push(chunk);
    if (s.needReadable) emitReadable(stream);
  }
  maybeReadMore(stream, s);
}

function onEofChunk(stream, s) {
  if (s.ended) return;
  if (s.decoder) {
    const rest = s.decoder.end();
    if (rest && rest.length) {
      s.buffer.push(rest);
      s.length += s.objectMode ? 1 : rest.length;
    }
  }
  s.ended = true;
  if (s.sync) {
    emitReadable(stream);
  } else {
    s.needReadable = false;
    s.emittedReadable = true;
    emitReadable_(stream);
  }
}

function howMuchToRead(n, s) {
  if (n <= 0 || (s.length === 0 && s.ended)) return 0;
  if (s.objectMode) return 1;
  if (Number.isNaN(n)) return s.flowing && s.length ? s.buffer[0].length : s.length;
  if (n <= s.length) return n;
  return s.ended ? s.length : 0;
}

Readable.prototype.read = function (n) {
  n = n === undefined ? NaN : parseInt(n, 10);
  const s = this._readableState;
  const nOrig = n;
  if (n > s.highWaterMark) s.highWaterMark = Math.pow(2, Math.ceil(Math.log2(n)));
  if (n !== 0) s.emittedReadable = false;
  if (n === 0 && s.needReadable && ((s.highWaterMark !== 0 ? s.length >= s.highWaterMark : s.length > 0) || s.ended)) {
    if (s.length === 0 && s.ended) endReadable(this);
    else emitReadable(this);
    return null;
  }
  n = howMuchToRead(n, s);
  if (n === 0 && s.ended) {
    if (s.length === 0) endReadable(this);
    return null;
  }
  let doRead = s.needReadable;
  if (s.length === 0 || s.length - n < s.highWaterMark) doRead = true;
  if (s.ended || s.reading || s.destroyed || s.errored || !s.constructed) doRead = false;
  else if (doRead) {
    s.reading = true;
    s.sync = true;
    if (s.length === 0) s.needReadable = true;
    try { this._read(s.highWaterMark); } catch (e) { errorOrDestroy(this, e); }
    s.sync = false;
    if (!s.reading) n = howMuchToRead(nOrig, s);
  }
  const ret = n > 0 ? fromList(n, s) : null;
  if (ret === null) {
    s.needReadable = s.length <= s.highWaterMark;
    n = 0;
  } else {
    s.length -= s.objectMode ? 1 : n;
    if (s.multiAwaitDrain) s.awaitDrainWriters = 0; else s.awaitDrainWriters = 0;
  }
  if (s.length === 0) {
    if (!s.ended) s.needReadable = true;
    if (nOrig !== n && s.ended) endReadable(this);
  }
  if (ret !== null && !s.errorEmitted && !s.closeEmitted) {
    s.dataEmitted = true;
    this.emit('data', ret);
  }
  return ret;
};

function fromList(n, s) {
  if (s.length === 0) return null;
  if (s.objectMode) return s.buffer.shift();
  if (!n || n >= s.length) {
    const all = s.decoder ? s.buffer.join('') : s.buffer.length === 1 ? s.buffer[0] : Buffer.concat(s.buffer, s.length);
    s.buffer = [];
    return all;
  }
  const first = s.buffer[0];
  if (n < first.length) {
    s.buffer[0] = first.slice(n);
    return first.slice(0, n);
  }
  if (n === first.length) return s.buffer.shift();
  const parts = [];
  let need = n;
  while (need > 0) {
    const b = s.buffer[0];
    if (b.length <= need) { parts.push(s.buffer.shift()); need -= b.length; } else { parts.push(b.slice(0, need)); s.buffer[0] = b.slice(need); need = 0; }
  }
  return s.decoder ? parts.join('') : Buffer.concat(parts, n);
}

function endReadable(stream) {
  const s = stream._readableState;
  if (!s.endEmitted) {
    s.ended = true;
    tick(endReadableNT, s, stream);
  }
}

function endReadableNT(s, stream) {
  if (!s.errored && !s.closeEmitted && !s.endEmitted && s.length === 0) {
    s.endEmitted = true;
    stream.emit('end');
    const w = stream._writableState;
    if (w && !stream.allowHalfOpen && !w.ending) stream.end();
    if (s.autoDestroy && (!w || (w.autoDestroy && (w.finished || stream.writable === false)))) stream.destroy();
  }
}

function emitReadable(stream) {
  const s = stream._readableState;
  s.needReadable = false;
  if (!s.emittedReadable) {
    s.emittedReadable = true;
    tick(emitReadable_, stream);
  }
}

function emitReadable_(stream) {
  const s = stream._readableState;
  if (!s.destroyed && !s.errored && (s.length || s.ended)) {
    stream.emit('readable');
    s.emittedReadable = false;
  }
  s.needReadable = !s.flowing && !s.ended && s.length <= s.highWaterMark;
  flow(stream);
}

function maybeReadMore(stream, s) {
  if (!s.readingMore && s.constructed) {
    s.readingMore = true;
    tick(() => {
      while (!s.reading && !s.ended && (s.length < s.highWaterMark || (s.flowing && s.length === 0))) {
        const len = s.length;
        stream.read(0);
        if (len === s.length) break;
      }
      s.readingMore = false;
    });
  }
}

Readable.prototype._read = function () { throw notImplemented('_read()'); };

Readable.prototype.on = Readable.prototype.addListener = function (ev, fn) {
  const res = Stream.prototype.on.call(this, ev, fn);
  const s = this._readableState;
  if (ev === 'data') {
    s.readableListening = this.listenerCount('readable') > 0;
    if (s.flowing !== false) this.resume();
  } else if (ev === 'readable') {
    if (!s.endEmitted && !s.readableListening) {
      s.readableListening = s.needReadable = true;
      s.flowing = false;
      s.emittedReadable = false;
      if (s.length) emitReadable(this);
      else if (!s.reading) tick(() => this.read(0));
    }
  }
  return res;
};

Readable.prototype.removeListener = Readable.prototype.off = function (ev, fn) {
  const res = Stream.prototype.removeListener.call(this, ev, fn);
  if (ev === 'readable') tick(updateReadableListening, this);
  return res;
};

Readable.prototype.removeAllListeners = function (ev) {
  const res = Stream.prototype.removeAllListeners.apply(this, arguments);
  if (ev === 'readable' || ev === undefined) tick(updateReadableListening, this);
  return res;
};

function updateReadableListening(self) {
  const s = self._readableState;
  s.readableListening = self.listenerCount('readable') > 0;
  if (s.resumeScheduled && s.paused === false) s.flowing = true;
  else if (self.listenerCount('data') > 0) self.resume();
  else if (!s.readableListening) s.flowing = null;
}

Readable.prototype.resume = function () {
  const s = this._readableState;
  if (!s.flowing) {
    s.flowing = !s.readableListening;
    if (!s.resumeScheduled) {
      s.resumeScheduled = true;
      tick(() => {
        if (!s.reading) this.read(0);
        s.resumeScheduled = false;
        this.emit('resume');
        flow(this);
        if (s.flowing && !s.reading) this.read(0);
      });
    }
  }
  s.paused = false;
  return this;
};

Readable.prototype.pause = function () {
  const s = this._readableState;
  if (s.flowing !== false) {
    s.flowing = false;
    this.emit('pause');
  }
  s.paused = true;
  return this;
};

Readable.prototype.isPaused = function () {
  const s = this._readableState;
  return s.paused === true || s.flowing === false;
};

function flow(stream) {
  const s = stream._readableState;
  while (s.flowing && stream.read() !== null);
}

Readable.prototype.setEncoding = function (enc) {
  const s = this._readableState;
  s.decoder = new StringDecoder(enc);
  s.encoding = s.decoder.encoding;
  const text = s.buffer.map((b) => s.decoder.write(b)).join('');
  s.buffer = text ? [text] : [];
  s.length = text.length;
  return this;
};

Readable.prototype.pipe = function (dest, o) {
  const src = this;
  const s = this._readableState;
  s.pipes.push(dest);
  const doEnd = (!o || o.end !== false) && dest !== process.stdout && dest !== process.stderr;
  const endFn = doEnd ? onend : unpipe;
  if (s.endEmitted) tick(endFn); else src.once('end', endFn);
  dest.on('unpipe', onunpipe);
  function onunpipe(readable) { if (readable === src) cleanup(); }
  function onend() { dest.end(); }
  let ondrain;
  let cleanedUp = false;
  function cleanup() {
    dest.removeListener('close', onclose);
    dest.removeListener('finish', onfinish);
    if (ondrain) dest.removeListener('drain', ondrain);
    dest.removeListener('error', onerror);
    dest.removeListener('unpipe', onunpipe);
    src.removeListener('end', onend);
    src.removeListener('end', unpipe);
    src.removeListener('data', ondata);
    cleanedUp = true;
    if (ondrain && s.awaitDrainWriters && (!dest._writableState || dest._writableState.needDrain)) ondrain();
  }
  function pause() {
    if (!cleanedUp) s.awaitDrainWriters = 1;
    src.pause();
    if (!ondrain) {
      ondrain = () => {
        if (s.awaitDrainWriters) s.awaitDrainWriters = 0;
        if (src.listenerCount('data')) src.resume();
      };
      dest.on('drain', ondrain);
    }
  }
  src.on('data', ondata);
  function ondata(chunk) {
    if (dest.write(chunk) === false) pause();
  }
  function onerror(er) {
    unpipe();
    dest.removeListener('error', onerror);
    if (dest.listenerCount('error') === 0) {
      const ws = dest._writableState || dest._readableState;
      if (ws && !ws.errorEmitted) errorOrDestroy(dest, er); else dest.emit('error', er);
    }
  }
  dest.prependListener('error', onerror);
  function onclose() { dest.removeListener('finish', onfinish); unpipe(); }
  dest.once('close', onclose);
  function onfinish() { dest.removeListener('close', onclose); unpipe(); }
  dest.once('finish', onfinish);
  function unpipe() { src.unpipe(dest); }
  dest.emit('pipe', src);
  if (dest.writableNeedDrain === true) pause();
  else if (!s.flowing) src.resume();
  return dest;
};

Readable.prototype.unpipe = function (dest) {
  const s = this._readableState;
  const dests = dest ? s.pipes.filter((d) => d === dest) : s.pipes.slice();
  if (dests.length === 0) return this;
  s.pipes = dest ? s.pipes.filter((d) => d !== dest) : [];
  if (s.pipes.length === 0) this.pause();
  for (const d of dests) d.emit('unpipe', this, { hasUnpiped: false });
  return this;
};

Readable.prototype.destroy = function (e, cb) { return destroyImpl(this, e, cb); };
Readable.prototype._destroy = function (e, cb) { cb(e); };

Readable.prototype.wrap = function (old) {
  let paused = false;
  old.on('data', (chunk) => { if (!this.push(chunk) && old.pause) { paused = true; old.pause(); } });
  old.on('end', () => this.push(null));
  old.on('error', (e) => errorOrDestroy(this, e));
  old.on('close', () => this.destroy());
  this._read = () => { if (paused && old.resume) { paused = false; old.resume(); } };
  return this;
};

// An async iterator over a Readable, as for await (const chunk of stream).
Readable.prototype[Symbol.asyncIterator] = function () {
  const stream = this;
  let wake = null;
  let error = null, done = false;
  const notify = () => { if (wake) { const w = wake; wake = null; w(); } };
  stream.on('readable', notify);
  const onEnd = () => { done = true; notify(); };
  stream.on('end', onEnd);
  stream.on('error', (e) => { error = e; notify(); });
  stream.on('close', () => { done = true; notify(); });
  const finish = () => {
    done = true;
    if (!stream.destroyed) stream.destroy();
  };
  const it = {
    next() {
      return new Promise((resolve, reject) => {
        const attempt = () => {
          if (error) { reject(error); return; }
          const s = stream._readableState;
          const chunk = s.destroyed && !s.endEmitted && !done ? null : stream.read();
          if (chunk !== null) { resolve({ value: chunk, done: false }); return; }
          if (done || s.endEmitted) { finish(); resolve({ value: undefined, done: true }); return; }
          if (s.destroyed) { resolve({ value: undefined, done: true }); return; }
          wake = attempt;
        };
        attempt();
      });
    },
    return() { finish(); return Promise.resolve({ value: undefined, done: true }); },
    [Symbol.asyncIterator]() { return this; },
  };
  return it;
};

Readable.prototype.toArray = async function () {
  const out = [];
  for (const it = this[Symbol.asyncIterator](); ;) {
    const { value, done } = await it.next();
    if (done) return out;
    out.push(value);
  }
};

for (const [name, get] of Object.entries({
  readable() { const s = this._readableState; return !!s && !s.destroyed && !s.errored && !s.endEmitted; },
  readableEnded() { return this._readableState.endEmitted; },
  readableFlowing() { return this._readableState.flowing; },
  readableLength() { return this._readableState.length; },
  readableHighWaterMark() { return this._readableState.highWaterMark; },
  readableObjectMode() { return this._readableState.objectMode; },
  readableEncoding() { return this._readableState.encoding; },
  readableAborted() { const s = this._readableState; return s.destroyed && !s.endEmitted; },
  closed() { return (this._readableState || this._writableState).closed; },
  errored() { return (this._readableState || this._writableState).errored; },
})) Object.defineProperty(Readable.prototype, name, { get, configurable: true });
Object.defineProperty(Readable.prototype, 'destroyed', {
  get() { return this._readableState ? this._readableState.destroyed : false; },
  set(v) { if (this._readableState) this._readableState.destroyed = v; },
  configurable: true,
});

Readable.from = function (iterable, o) {
  if (typeof iterable === 'string' || Buffer.isBuffer(iterable)) {
    return new Readable({ objectMode: true, ...o, read() { this.push(iterable); this.push(null); } });
  }
  let it, isAsync;
  if (iterable && typeof iterable[Symbol.asyncIterator] === 'function') { it = iterable[Symbol.asyncIterator](); isAsync = true; }
  else if (iterable && typeof iterable[Symbol.iterator] === 'function') { it = iterable[Symbol.iterator](); isAsync = false; }
  else throw err('ERR_INVALID_ARG_TYPE', 'The "iterable" argument must be an instance of Iterable. Received ' + typeof iterable, TypeError);
  let reading = false;
  const r = new Readable({
    objectMode: true, highWaterMark: 1, ...o,
    read() {
      if (reading) return;
      reading = true;
      (async () => {
        try {
          for (;;) {
            const { value, done } = isAsync ? await it.next() : it.next();
            if (done) { this.push(null); break; }
            const v = value && typeof value.then === 'function' ? await value : value;
            if (v === null) { reading = false; throw err('ERR_STREAM_NULL_VALUES', 'May not write null values to stream', TypeError); }
            if (!this.push(v)) break;
          }
        } catch (e) { this.destroy(e); }
        reading = false;
      })();
    },
    destroy(e, cb) {
      const close = it && typeof it.return === 'function' && !this.readableEnded ? it.return() : null;
      Promise.resolve(close).then(() => cb(e), (e2) => cb(e2 || e));
    },
  });
  return r;
};

// Writable.

function WritableState(o, stream, isDuplex) {
  this.objectMode = !!(o.objectMode || (isDuplex && o.writableObjectMode));
  this.highWaterMark = hwm(o, isDuplex ? 'writableHighWaterMark' : 'highWaterMark', this.objectMode);
  this.finalCalled = this.needDrain = this.ending = this.ended = this.finished = false;
  this.destroyed = this.closed = false;
  this.decodeStrings = o.decodeStrings !== false;
  this.defaultEncoding = o.defaultEncoding || 'utf8';
  this.length = 0;
  this.writing = false;
  this.corked = 0;
  this.sync = true;
  this.bufferProcessing = false;
  this.writecb = null;
  this.writelen = 0;
  this.buffered = [];
  this.pendingcb = 0;
  this.constructed = true;
  this.prefinished = false;
  this.errorEmitted = false;
  this.emitClose = o.emitClose !== false;
  this.autoDestroy = o.autoDestroy !== false;
  this.errored = null;
  this.afterWriteTickInfo = null;
  this.onfinished = [];
}

function Writable(o) {
  if (!(this instanceof Writable) && !(this instanceof Duplex)) return new Writable(o);
  o = o || {};
  this._writableState = new WritableState(o, this, this instanceof Duplex);
  if (typeof o.write === 'function') this._write = o.write;
  if (typeof o.writev === 'function') this._writev = o.writev;
  if (typeof o.destroy === 'function') this._destroy = o.destroy;
  if (typeof o.final === 'function') this._final = o.final;
  Stream.call(this, o);
}
inherit(Writable, Stream);
Writable.WritableState = WritableState;
Object.defineProperty(Writable, Symbol.hasInstance, {
  value(obj) {
    if (Function.prototype[Symbol.hasInstance].call(this, obj)) return true;
    if (this !== Writable) return false;
    return !!(obj && obj._writableState instanceof WritableState);
  },
});

const writableMethods = {
  write(chunk, encoding, cb) {
    const s = this._writableState;
    if (typeof encoding === 'function') { cb = encoding; encoding = s.defaultEncoding; } else if (!encoding) encoding = s.defaultEncoding;
    if (typeof cb !== 'function') cb = () => {};
    if (chunk === null) throw err('ERR_STREAM_NULL_VALUES', 'May not write null values to stream', TypeError);
    if (!s.objectMode) {
      if (typeof chunk === 'string') {
        if (s.decodeStrings !== false) { chunk = Buffer.from(chunk, encoding); encoding = 'buffer'; }
      } else if (chunk instanceof Uint8Array) {
        chunk = toBuffer(chunk); encoding = 'buffer';
      } else {
        throw err('ERR_INVALID_ARG_TYPE', `The "chunk" argument must be of type string or an instance of Buffer or Uint8Array. Received ${chunk === undefined ? 'undefined' : typeof chunk}`, TypeError);
      }
    }
    let e;
    if (s.ending) e = err('ERR_STREAM_WRITE_AFTER_END', 'write after end');
    else if (s.destroyed) e = err('ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed');
    if (e) {
      tick(cb, e);
      errorOrDestroy(this, e);
      return false;
    }
    s.pendingcb++;
    const len = s.objectMode ? 1 : chunk.length;
    s.length += len;
    const ret = s.length < s.highWaterMark;
    if (!ret) s.needDrain = true;
    if (s.writing || s.corked || s.errored || !s.constructed) s.buffered.push({ chunk, encoding, callback: cb });
    else doWrite(this, s, false, len, chunk, encoding, cb);
    return ret && !s.errored && !s.destroyed;
  },
  cork() { this._writableState.corked++; },
  uncork() {
    const s = this._writableState;
    if (s.corked) {
      s.corked--;
      if (!s.writing) clearBuffer(this, s);
    }
  },
  setDefaultEncoding(enc) {
    if (!Buffer.isEncoding(enc)) throw err('ERR_UNKNOWN_ENCODING', `Unknown encoding: ${enc}`, TypeError);
    this._writableState.defaultEncoding = enc.toLowerCase();
    return this;
  },
  end(chunk, encoding, cb) {
    const s = this._writableState;
    if (typeof chunk === 'function') { cb = chunk; chunk = null; encoding = null; } else if (typeof encoding === 'function') { cb = encoding; encoding = null; }
    let e;
    if (chunk !== null && chunk !== undefined) {
      const ret = this.write(chunk, encoding);
      if (ret instanceof Error) e = ret;
    }
    if (s.corked) { s.corked = 1; this.uncork(); }
    if (e) {
      // write's error, reported through it
    } else if (!s.errored && !s.ending) {
      s.ending = true;
      finishMaybe(this, s, true);
      s.ended = true;
    } else if (s.finished) {
      e = err('ERR_STREAM_ALREADY_FINISHED', 'Cannot call end after a stream was finished');
    } else if (s.destroyed) {
      e = err('ERR_STREAM_DESTROYED', 'Cannot call end after a stream was destroyed');
    }
    if (typeof cb === 'function') {
      if (e || s.finished) tick(cb, e);
      else s.onfinished.push(cb);
    }
    return this;
  },
  destroy(e, cb) {
    const s = this._writableState;
    if (!s.destroyed && (s.buffered.length || s.writing)) {
      const er = err('ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed');
      for (const b of s.buffered.splice(0)) tick(b.callback, er);
    }
    return destroyImpl(this, e, cb);
  },
};
for (const [k, v] of Object.entries(writableMethods)) Writable.prototype[k] = v;
Writable.prototype._destroy = function (e, cb) { cb(e); };
Writable.prototype._write = function (chunk, encoding, cb) {
  if (this._writev) this._writev([{ chunk, encoding }], cb);
  else throw notImplemented('_write()');
};
Writable.prototype._writev = null;

const writableGetters = {
  writable() { const w = this._writableState; return !!w && w.writable !== false && !w.destroyed && !w.errored && !w.ending && !w.ended; },
  writableEnded() { return this._writableState ? this._writableState.ending : false; },
  writableFinished() { return this._writableState ? this._writableState.finished : false; },
  writableLength() { return this._writableState && this._writableState.length; },
  writableHighWaterMark() { return this._writableState && this._writableState.highWaterMark; },
  writableObjectMode() { return this._writableState ? this._writableState.objectMode : false; },
  writableCorked() { return this._writableState ? this._writableState.corked : 0; },
  writableNeedDrain() { const w = this._writableState; return !!w && !w.destroyed && !w.ending && w.needDrain; },
};
for (const [name, get] of Object.entries(writableGetters)) Object.defineProperty(Writable.prototype, name, { get, configurable: true });
Object.defineProperty(Writable.prototype, 'destroyed', {
  get() { return this._writableState ? this._writableState.destroyed : false; },
  set(v) { if (this._writableState) this._writableState.destroyed = v; },
  configurable: true,
});
Object.defineProperty(Writable.prototype, 'closed', { get() { return this._writableState.closed; }, configurable: true });
Object.defineProperty(Writable.prototype, 'errored', { get() { return this._writableState.errored; }, configurable: true });

function doWrite(stream, s, writev, len, chunk, encoding, cb) {
  s.writelen = len;
  s.writecb = cb;
  s.writing = true;
  s.sync = true;
  const done = (er) => onwrite(stream, er);
  if (s.destroyed) done(err('ERR_STREAM_DESTROYED', 'Cannot call write after a stream was destroyed'));
  else if (writev) stream._writev(chunk, done);
  else stream._write(chunk, encoding, done);
  s.sync = false;
}

function onwrite(stream, er) {
  const s = stream._writableState;
  const sync = s.sync;
  const cb = s.writecb;
  if (typeof cb !== 'function') {
    errorOrDestroy(stream, err('ERR_MULTIPLE_CALLBACK', 'Callback called multiple times'));
    return;
  }
  s.writing = false;
  s.writecb = null;
  s.length -= s.writelen;
  s.writelen = 0;
  if (er) {
    if (!s.errored) s.errored = er;
    for (const b of s.buffered.splice(0)) { s.length -= s.objectMode ? 1 : b.chunk.length; tick(b.callback, er); }
    if (sync) tick(cb, er); else cb(er);
    errorOrDestroy(stream, er);
    return;
  }
  if (s.buffered.length) clearBuffer(stream, s);
  if (sync) {
    if (s.afterWriteTickInfo !== null && s.afterWriteTickInfo.cb === cb) {
      s.afterWriteTickInfo.count++;
    } else {
      s.afterWriteTickInfo = { count: 1, cb, stream, state: s };
      tick(afterWriteTick, s.afterWriteTickInfo);
    }
  } else {
    afterWrite(stream, s, 1, cb);
  }
}

function afterWriteTick({ stream, state, count, cb }) {
  state.afterWriteTickInfo = null;
  afterWrite(stream, state, count, cb);
}

function afterWrite(stream, s, count, cb) {
  const needDrain = !s.ending && !stream.destroyed && s.length === 0 && s.needDrain;
  if (needDrain) {
    s.needDrain = false;
    stream.emit('drain');
  }
  while (count-- > 0) {
    s.pendingcb--;
    cb(null);
  }
  if (s.destroyed) return;
  finishMaybe(stream, s);
}

function clearBuffer(stream, s) {
  if (s.corked || s.bufferProcessing || s.destroyed || !s.constructed) return;
  if (s.buffered.length === 0) return;
  s.bufferProcessing = true;
  if (s.buffered.length > 1 && stream._writev) {
    const batch = s.buffered.splice(0);
    s.pendingcb -= batch.length - 1;
    const len = s.objectMode ? batch.length : batch.reduce((n, b) => n + b.chunk.length, 0);
    const callback = (e) => { for (const b of batch) b.callback(e); };
    doWrite(stream, s, true, len, batch.map(({ chunk, encoding }) => ({ chunk, encoding })), '', callback);
  } else {
    while (s.buffered.length && !s.writing) {
      const { chunk, encoding, callback } = s.buffered.shift();
      doWrite(stream, s, false, s.objectMode ? 1 : chunk.length, chunk, encoding, callback);
    }
  }
  s.bufferProcessing = false;
}

function needFinish(s) {
  return s.ending && !s.destroyed && s.constructed && s.length === 0 && !s.errored && s.buffered.length === 0 && !s.finished && !s.writing && !s.errorEmitted && !s.closeEmitted;
}

function prefinish(stream, s) {
  if (!s.prefinished && !s.finalCalled) {
    if (typeof stream._final === 'function' && !s.destroyed) {
      s.finalCalled = true;
      s.sync = true;
      s.pendingcb++;
      tick(() => {
        let called = false;
        const onFinal = (e) => {
          if (called) { errorOrDestroy(stream, err('ERR_MULTIPLE_CALLBACK', 'Callback called multiple times')); return; }
          called = true;
          s.pendingcb--;
          if (e) {
            for (const cb of s.onfinished.splice(0)) cb(e);
            errorOrDestroy(stream, e);
          } else if (needFinish(s)) {
            s.prefinished = true;
            stream.emit('prefinish');
            s.pendingcb++;
            tick(finish, stream, s);
          }
        };
        try { stream._final(onFinal); } catch (e) { onFinal(e); }
      });
      s.sync = false;
    } else {
      s.prefinished = true;
      stream.emit('prefinish');
    }
  }
}

function finishMaybe(stream, s, sync) {
  if (needFinish(s)) {
    prefinish(stream, s);
    if (s.pendingcb === 0) {
      if (sync) {
        s.pendingcb++;
        tick(() => { if (needFinish(s)) finish(stream, s); else s.pendingcb--; });
      } else if (needFinish(s)) {
        s.pendingcb++;
        finish(stream, s);
      }
    }
  }
}

function finish(stream, s) {
  s.pendingcb--;
  s.finished = true;
  for (const cb of s.onfinished.splice(0)) cb();
  stream.emit('finish');
  if (s.autoDestroy) {
    const r = stream._readableState;
    if (!r || (r.autoDestroy && (r.endEmitted || r.readable === false))) stream.destroy();
  }
}

// Duplex, Transform, PassThrough.

function Duplex(o) {
  if (!(this instanceof Duplex)) return new Duplex(o);
  o = o || {};
  Readable.call(this, o);
  Writable.call(this, o);
  this.allowHalfOpen = o.allowHalfOpen !== false;
  if (o.readable === false) { this._readableState.readable = false; this._readableState.ended = this._readableState.endEmitted = true; }
  if (o.writable === false) { this._writableState.writable = false; this._writableState.ending = this._writableState.ended = this._writableState.finished = true; }
}
inherit(Duplex, Readable);
for (const k of Object.keys(writableMethods)) if (k !== 'destroy') Duplex.prototype[k] = Writable.prototype[k];
Duplex.prototype._write = Writable.prototype._write;
Duplex.prototype._writev = null;
for (const name of Object.keys(writableGetters)) Object.defineProperty(Duplex.prototype, name, Object.getOwnPropertyDescriptor(Writable.prototype, name));
Duplex.prototype.destroy = Writable.prototype.destroy;
Object.defineProperty(Duplex.prototype, 'destroyed', {
  get() { return this._readableState.destroyed && this._writableState.destroyed; },
  set(v) { this._readableState.destroyed = this._writableState.destroyed = v; },
  configurable: true,
});

const kCallback = Symbol('kCallback');
function Transform(o) {
  if (!(this instanceof Transform)) return new Transform(o);
  const rhwm = o ? hwm(o, 'readableHighWaterMark', o.objectMode || o.readableObjectMode) : null;
  Duplex.call(this, rhwm === 0 ? { ...o, highWaterMark: null, readableHighWaterMark: 0 } : o);
  this._readableState.sync = false;
  this[kCallback] = null;
  if (o) {
    if (typeof o.transform === 'function') this._transform = o.transform;
    if (typeof o.flush === 'function') this._flush = o.flush;
  }
  this.on('prefinish', transformPrefinish);
}
inherit(Transform, Duplex);

function transformFinal(cb) {
  if (typeof this._flush === 'function' && !this.destroyed) {
    this._flush((er, data) => {
      if (er) { if (cb) cb(er); else this.destroy(er); return; }
      if (data != null) this.push(data);
      this.push(null);
      if (cb) cb();
    });
  } else {
    this.push(null);
    if (cb) cb();
  }
}
function transformPrefinish() { if (this._final !== transformFinal) transformFinal.call(this); }
Transform.prototype._final = transformFinal;
Transform.prototype._transform = function () { throw notImplemented('_transform()'); };
Transform.prototype._write = function (chunk, encoding, callback) {
  const r = this._readableState, w = this._writableState;
  const length = r.length;
  this._transform(chunk, encoding, (e, val) => {
    if (e) { callback(e); return; }
    if (val != null) this.push(val);
    if (w.ended || length === r.length || r.length < r.highWaterMark) callback();
    else this[kCallback] = callback;
  });
};
Transform.prototype._read = function () {
  if (this[kCallback]) {
    const cb = this[kCallback];
    this[kCallback] = null;
    cb();
  }
};

function PassThrough(o) {
  if (!(this instanceof PassThrough)) return new PassThrough(o);
  Transform.call(this, o);
}
inherit(PassThrough, Transform);
PassThrough.prototype._transform = function (chunk, enc, cb) { cb(null, chunk); };

// finished and pipeline.

const isReadable = (s) => !!s && typeof s.pipe === 'function' && typeof s.on === 'function' && (!s._writableState || !!s._readableState);
const isWritableStream = (s) => !!s && typeof s.write === 'function' && typeof s.on === 'function';

function finished(stream, o, cb) {
  if (typeof o === 'function') { cb = o; o = {}; }
  o = o || {};
  let called = false;
  const callback = (e) => { if (!called) { called = true; cb.call(stream, e); } };
  const r = stream._readableState, w = stream._writableState;
  const readable = o.readable ?? (r ? r.readable !== false : isReadable(stream) && !w);
  const writable = o.writable ?? (w ? w.writable !== false : isWritableStream(stream));
  let readableEnded = r ? r.endEmitted : false;
  let writableFinished = w ? w.finished : false;
  const onfinish = () => { writableFinished = true; if (!readable || readableEnded) callback(); };
  const onend = () => { readableEnded = true; if (!writable || writableFinished) callback(); };
  const onerror = (e) => callback(e);
  const onclose = () => {
    if (readable && !readableEnded && !(r && r.endEmitted)) return callback((r && r.errored) || err('ERR_STREAM_PREMATURE_CLOSE', 'Premature close'));
    if (writable && !writableFinished && !(w && w.finished)) return callback((w && w.errored) || err('ERR_STREAM_PREMATURE_CLOSE', 'Premature close'));
    callback();
  };
  stream.on('end', onend);
  stream.on('finish', onfinish);
  if (o.error !== false) stream.on('error', onerror);
  stream.on('close', onclose);
  const errored = (r && r.errored) || (w && w.errored);
  if (errored && (r ? r.errorEmitted : w.errorEmitted)) tick(callback, errored);
  else if ((r && r.closed) || (w && w.closed)) tick(onclose);
  else if ((!readable || readableEnded) && (!writable || writableFinished)) tick(callback);
  return () => {
    stream.removeListener('end', onend);
    stream.removeListener('finish', onfinish);
    stream.removeListener('error', onerror);
    stream.removeListener('close', onclose);
  };
}

function pipeline(...streams) {
  const cb = typeof streams[streams.length - 1] === 'function' && !(streams.length > 1 && isReadable(streams[streams.length - 1])) ? streams.pop() : null;
  if (Array.isArray(streams[0]) && streams.length === 1) streams = streams[0];
  if (typeof cb !== 'function') throw err('ERR_INVALID_ARG_TYPE', 'The "streams[stream.length - 1]" argument must be of type function. Received ' + typeof cb, TypeError);
  return pipelineImpl(streams, cb);
}

function pipelineImpl(streams, cb) {
  if (streams.length < 2) throw err('ERR_MISSING_ARGS', 'The "streams" argument must be specified', TypeError);
  let error, doneCount = 0, finalCalled = false;
  const all = [];
  const destroyAll = (e) => { for (const s of all) if (s && !s.destroyed && typeof s.destroy === 'function') s.destroy(e); };
  const finishOne = (e, last) => {
    if (e && (!error || error.code === 'ERR_STREAM_PREMATURE_CLOSE')) error = e;
    if (e) destroyAll(error);
    if (last || (e && !finalCalled)) {
      if (!finalCalled && (last || doneCount === all.length)) {
        finalCalled = true;
        tick(cb, error);
      }
    }
  };
  let prev = null;
  streams.forEach((stage, i) => {
    const last = i === streams.length - 1;
    let s = stage;
    if (typeof stage === 'function') {
      const out = stage(prev);
      if (last && out && typeof out.then === 'function') {
        out.then((v) => { finishOne(null, true); return v; }, (e) => finishOne(e, true));
        prev = null;
        return;
      }
      s = isReadable(out) ? out : Readable.from(out);
    } else if (i === 0 && !isReadable(stage) && stage && (stage[Symbol.asyncIterator] || stage[Symbol.iterator])) {
      s = Readable.from(stage);
    }
    all.push(s);
    if (prev && isReadable(prev) && isWritableStream(s)) prev.pipe(s);
    const readableSide = !last;
    finished(s, { readable: readableSide || (!isWritableStream(s)), writable: i > 0 }, (e) => {
      doneCount++;
      if (e && e.code === 'ERR_STREAM_PREMATURE_CLOSE' && last && s._writableState && s._writableState.finished) e = undefined;
      finishOne(e, last);
    });
    prev = s;
  });
  return prev;
}

const promises = {
  pipeline: (...streams) => new Promise((resolve, reject) => {
    if (streams.length && streams[streams.length - 1] && typeof streams[streams.length - 1] === 'object' && !isReadable(streams[streams.length - 1]) && !isWritableStream(streams[streams.length - 1]) && !streams[streams.length - 1][Symbol.asyncIterator] && !streams[streams.length - 1][Symbol.iterator]) streams.pop();
    pipelineImpl(streams, (e) => (e ? reject(e) : resolve()));
  }),
  finished: (stream, o) => new Promise((resolve, reject) => finished(stream, o, (e) => (e ? reject(e) : resolve()))),
};

Object.assign(Stream, {
  Stream, Readable, Writable, Duplex, Transform, PassThrough, pipeline, finished, promises,
  addAbortSignal: () => { throw native.unsupported('stream.addAbortSignal'); },
  isReadable: (s) => !!(s && s._readableState && !s._readableState.destroyed && !s._readableState.endEmitted),
  isErrored: (s) => !!(s && ((s._readableState && s._readableState.errored) || (s._writableState && s._writableState.errored))),
  getDefaultHighWaterMark: (objectMode) => (objectMode ? 16 : 16384),
});
module.exports = Stream;
