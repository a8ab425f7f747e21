// The globals every program starts with. Modules load lazily: most
// programs touch only console and maybe fs.
const g = globalThis;
g.global = g;
// goja has no Symbol.asyncIterator; esbuild's lowered for await falls back
// to Symbol.for('Symbol.asyncIterator'), so that is the one streams define.
if (!Symbol.asyncIterator) Object.defineProperty(Symbol, 'asyncIterator', { value: Symbol.for('Symbol.asyncIterator') });
let util;
const lazyUtil = () => util || (util = require('util'));

g.__describe = (v) => {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'function') return `function ${v.name}`;
  if (typeof v === 'object') return v.constructor && v.constructor.name ? `an instance of ${v.constructor.name}` : lazyUtil().inspect(v, { depth: -1 });
  let s = lazyUtil().inspect(v);
  if (s.length > 28) s = `${s.slice(0, 25)}...`;
  return `type ${typeof v} (${s})`;
};
g.__typeError = (code, msg) => {
  const e = new TypeError(msg);
  e.code = code;
  return e;
};
// Buffer and URL load on first use: most programs never touch them.
const lazyGlobal = (name, load) => Object.defineProperty(g, name, {
  configurable: true,
  enumerable: false,
  get() {
    const v = load();
    Object.defineProperty(g, name, { value: v, writable: true, configurable: true, enumerable: false });
    return v;
  },
  set(v) { Object.defineProperty(g, name, { value: v, writable: true, configurable: true, enumerable: false }); },
});
// What Node's Buffer has and goja_nodejs's lacks, added when the buffer
// module loads (packages require it before touching the global).
g.__patchBuffer = (B) => {
  B.prototype.slice = function slice(start, end) { return this.subarray(start, end); };
  if (!B.byteLength) B.byteLength = (s, enc) => (typeof s === 'string' ? B.from(s, enc).length : s.byteLength);
  if (!B.isBuffer) B.isBuffer = (b) => b instanceof B;
  if (!B.allocUnsafe) B.allocUnsafe = (n) => B.alloc(n);
  if (!B.allocUnsafeSlow) B.allocUnsafeSlow = (n) => B.alloc(n);
  if (!B.compare) {
    B.compare = (a, b) => {
      for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
      return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
    };
  }
  if (!B.prototype.copy) {
    B.prototype.copy = function copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
      const part = this.subarray(sourceStart, sourceEnd);
      const n = Math.max(0, Math.min(part.length, target.length - targetStart));
      target.set(part.subarray(0, n), targetStart);
      return n;
    };
  }
  // One byte per character: latin1 (binary) and ascii, which goja_nodejs lacks.
  const byteEnc = (e) => typeof e === 'string' && ['latin1', 'binary', 'ascii'].includes(e.toLowerCase());
  // base64url, which goja_nodejs lacks, through base64.
  const url64 = (e) => typeof e === 'string' && e.toLowerCase() === 'base64url';
  const utf16 = (e) => typeof e === 'string' && ['utf16le', 'utf-16le', 'ucs2', 'ucs-2'].includes(e.toLowerCase());
  const from = B.from;
  B.from = function (v, enc, len) {
    if (typeof v === 'string' && utf16(enc)) {
      const b = B.alloc(v.length * 2);
      for (let i = 0; i < v.length; i++) { const c = v.charCodeAt(i); b[2 * i] = c & 0xff; b[2 * i + 1] = c >> 8; }
      return b;
    }
    if (typeof v === 'string' && url64(enc)) return from.call(this, v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (typeof v === 'string' && byteEnc(enc)) {
      const b = B.alloc(v.length);
      for (let i = 0; i < v.length; i++) b[i] = v.charCodeAt(i) & 0xff;
      return b;
    }
    return from.call(this, v, enc, len);
  };
  const toString = B.prototype.toString;
  B.prototype.toString = function (enc, start, end) {
    if (utf16(enc)) {
      const parts = [];
      const stop = end ?? this.length;
      for (let i = start ?? 0; i + 1 < stop; i += 2) parts.push(this[i] | (this[i + 1] << 8));
      let out = '';
      for (let i = 0; i < parts.length; i += 4096) out += String.fromCharCode(...parts.slice(i, i + 4096));
      return out;
    }
    if (url64(enc)) return toString.call(this, 'base64', start, end).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    if (!byteEnc(enc)) return toString.call(this, enc, start, end);
    const ascii = enc.toLowerCase() === 'ascii';
    let out = '';
    for (let i = start ?? 0; i < (end ?? this.length); i++) out += String.fromCharCode(ascii ? this[i] & 0x7f : this[i]);
    return out;
  };
  // write(string[, offset[, length]][, encoding]): the encoding may come early.
  const write = B.prototype.write;
  B.prototype.write = function (s, offset, length, encoding) {
    if (typeof offset === 'string') [encoding, offset, length] = [offset, 0, undefined];
    else if (typeof length === 'string') [encoding, length] = [length, undefined];
    offset = offset ?? 0;
    length = length ?? this.length - offset;
    if (byteEnc(encoding)) {
      const n = Math.min(length, s.length, this.length - offset);
      for (let i = 0; i < n; i++) this[offset + i] = s.charCodeAt(i) & 0xff;
      return n;
    }
    return write.call(this, s, offset, length, encoding);
  };
};
lazyGlobal('Buffer', () => require('buffer').Buffer);
lazyGlobal('URL', () => require('url').URL);
lazyGlobal('crypto', () => require('crypto').webcrypto);
let perfOrigin;
g.performance = {
  timeOrigin: undefined,
  now: () => native.hrtime() / 1e6,
  mark() {}, measure() {}, clearMarks() {}, clearMeasures() {}, getEntries: () => [], getEntriesByName: () => [], getEntriesByType: () => [],
  toJSON() { return { timeOrigin: perfOrigin }; },
};
g.btoa = (s) => {
  s = String(s);
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0xff) { const e = new Error('Invalid character'); e.name = 'InvalidCharacterError'; e.code = 5; throw e; }
  }
  return Buffer.from(s, 'latin1').toString('base64');
};
g.atob = (s) => Buffer.from(String(s).replace(/[\t\n\f\r ]/g, ''), 'base64').toString('latin1');
lazyGlobal('URLSearchParams', () => require('url').URLSearchParams);
for (const name of ['DOMException', 'Event', 'EventTarget', 'AbortController', 'AbortSignal']) lazyGlobal(name, () => require('sqlfs:abort')[name]);
for (const name of ['ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamDefaultController', 'WritableStream', 'WritableStreamDefaultWriter',
  'WritableStreamDefaultController', 'TransformStream', 'TransformStreamDefaultController', 'CountQueuingStrategy', 'ByteLengthQueuingStrategy',
  'TextEncoderStream', 'TextDecoderStream', 'CompressionStream', 'DecompressionStream', 'ReadableByteStreamController', 'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest']) {
  lazyGlobal(name, () => require('stream/web')[name]);
}
// Intl loads on first use, replacing these locale methods with its own.
lazyGlobal('Intl', () => require('sqlfs:intl'));
for (const [proto, names] of [[Number.prototype, ['toLocaleString']], [BigInt.prototype, ['toLocaleString']], [String.prototype, ['localeCompare']], [Date.prototype, ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']]]) {
  for (const name of names) {
    const stub = { [name](...args) { require('sqlfs:intl'); return proto[name].apply(this, args); } }[name];
    Object.defineProperty(proto, name, { value: stub, writable: true, configurable: true, enumerable: false });
  }
}

g.__inspect = (v) => lazyUtil().inspect(v);
g.__promiseState = (p) => native.promiseState(p);

if (!Error.captureStackTrace) {
  Error.captureStackTrace = (obj) => {
    const s = new Error().stack.split('\n');
    s.splice(1, 1);
    Object.defineProperty(obj, 'stack', { value: s.join('\n').replace(/^Error/, `${obj.name || 'Error'}${obj.message ? `: ${obj.message}` : ''}`), writable: true, configurable: true });
  };
}

const print = (fd) => (...args) => native.write(fd, `${lazyUtil().format(...args)}\n`);
const counts = new Map(), timers = new Map();
let groupIndent = '';
// Plain values print without loading util, as util.format would.
const plain = (args) => {
  for (const a of args) {
    const t = typeof a;
    if (!(t === 'string' || t === 'boolean' || a === undefined || a === null || (t === 'number' && !Object.is(a, -0)))) return false;
  }
  return typeof args[0] !== 'string' || !args[0].includes('%');
};
const indented = (fd) => (...args) => {
  const s = plain(args) ? args.map(String).join(' ') : lazyUtil().format(...args);
  native.write(fd, `${groupIndent ? s.split('\n').map((l) => groupIndent + l).join('\n') : s}\n`);
};
g.console = {
  log: indented(1), info: indented(1), debug: indented(1),
  error: indented(2), warn: indented(2), trace: (...a) => indented(2)(`Trace: ${lazyUtil().format(...a)}`),
  dir: (v, o) => native.write(1, `${lazyUtil().inspect(v, o)}\n`),
  table: (v) => print(1)(v),
  assert: (c, ...a) => { if (!c) indented(2)('Assertion failed' + (a.length ? `: ${lazyUtil().format(...a)}` : '')); },
  count: (l = 'default') => { const c = (counts.get(l) || 0) + 1; counts.set(l, c); indented(1)(`${l}: ${c}`); },
  countReset: (l = 'default') => counts.delete(l),
  time: (l = 'default') => timers.set(l, Date.now()),
  timeEnd: (l = 'default') => { const t = timers.get(l); timers.delete(l); if (t !== undefined) indented(1)(`${l}: ${Date.now() - t}ms`); },
  timeLog: (l = 'default', ...a) => { const t = timers.get(l); if (t !== undefined) indented(1)(`${l}: ${Date.now() - t}ms`, ...a); },
  group: (...a) => { if (a.length) indented(1)(...a); groupIndent += '  '; },
  groupEnd: () => { groupIndent = groupIndent.slice(2); },
};

// Timers.
class Timeout {
  constructor(id, repeat) { this._id = id; this._repeat = repeat; this._ref = true; }
  ref() { this._ref = true; native.refTimer(this._id, true); return this; }
  unref() { this._ref = false; native.refTimer(this._id, false); return this; }
  hasRef() { return this._ref; }
  close() { native.clearTimer(this._id); return this; }
  [Symbol.toPrimitive]() { return this._id; }
}
const fnArg = (fn) => {
  if (typeof fn !== 'function') throw g.__typeError('ERR_INVALID_ARG_TYPE', `The "callback" argument must be of type function. Received ${g.__describe(fn)}`);
  return fn;
};
g.setTimeout = (fn, ms, ...args) => new Timeout(native.setTimer(fnArg(fn), Number(ms) || 0, false, args), false);
g.setInterval = (fn, ms, ...args) => new Timeout(native.setTimer(fnArg(fn), Number(ms) || 0, true, args), true);
g.clearTimeout = g.clearInterval = (t) => { if (t !== undefined && t !== null) native.clearTimer(typeof t === 'object' ? t._id : Number(t)); };
class Immediate { constructor() { this._cancelled = false; } ref() { return this; } unref() { return this; } hasRef() { return true; } }
g.setImmediate = (fn, ...args) => {
  fnArg(fn);
  const im = new Immediate();
  native.queueTask(() => { if (!im._cancelled) fn(...args); });
  return im;
};
g.clearImmediate = (im) => { if (im) im._cancelled = true; };
g.queueMicrotask = (fn) => { fnArg(fn); Promise.resolve().then(() => fn()); };

g.structuredClone = function clone(v, seen = new Map()) {
  if (typeof v !== 'object' || v === null) {
    if (typeof v === 'function' || typeof v === 'symbol') {
      const e = new Error(`${String(v)} could not be cloned.`); e.name = 'DataCloneError'; throw e;
    }
    return v;
  }
  if (seen.has(v)) return seen.get(v);
  let out;
  if (v instanceof Date) return new Date(v.getTime());
  if (v instanceof RegExp) return new RegExp(v.source, v.flags);
  if (ArrayBuffer.isView(v)) return v.slice();
  if (v instanceof Map) { out = new Map(); seen.set(v, out); for (const [k, x] of v) out.set(clone(k, seen), clone(x, seen)); return out; }
  if (v instanceof Set) { out = new Set(); seen.set(v, out); for (const x of v) out.add(clone(x, seen)); return out; }
  out = Array.isArray(v) ? [] : {};
  seen.set(v, out);
  for (const k of Object.keys(v)) out[k] = clone(v[k], seen);
  return out;
};

class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(s = '') { const b = Buffer.from(String(s), 'utf8'); return new Uint8Array(b.buffer, b.byteOffset, b.length); }
  encodeInto(s, dest) { const b = this.encode(s); const n = Math.min(b.length, dest.length); dest.set(b.subarray(0, n)); return { read: s.length, written: n }; }
}
class TextDecoder {
  constructor(enc = 'utf-8', o = {}) {
    enc = String(enc).toLowerCase();
    if (!['utf-8', 'utf8', 'unicode-1-1-utf-8', 'latin1', 'ascii', 'utf-16le'].includes(enc)) {
      const e = new RangeError(`The "${enc}" encoding is not supported`); e.code = 'ERR_ENCODING_NOT_SUPPORTED'; throw e;
    }
    this._enc = enc.startsWith('utf') && enc !== 'utf-16le' ? 'utf8' : enc; this.fatal = !!o.fatal; this.ignoreBOM = !!o.ignoreBOM;
  }
  get encoding() { return this._enc === 'utf8' ? 'utf-8' : this._enc; }
  // decode(b, { stream: true }) keeps a character cut at the end for the
  // next call; the BOM is dropped at the start of the stream only.
  decode(b, o = {}) {
    let buf = b === undefined ? Buffer.alloc(0) : b instanceof ArrayBuffer ? Buffer.from(b) : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    if (this._pending) { buf = Buffer.concat([this._pending, buf]); this._pending = null; }
    if (o && o.stream) {
      const keep = this._enc === 'utf8' ? cutUtf8(buf) : this._enc === 'utf-16le' ? buf.length % 2 : 0;
      if (keep) { this._pending = Buffer.from(buf.subarray(buf.length - keep)); buf = buf.subarray(0, buf.length - keep); }
    }
    let s = buf.toString(this._enc);
    if (!this._started && !this.ignoreBOM && s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    this._started = Boolean(o && o.stream) && (this._started || s.length > 0);
    return s;
  }
}
// cutUtf8 is how many bytes at the end of buf begin a character they do
// not complete.
const cutUtf8 = (buf) => {
  for (let i = 1; i <= Math.min(3, buf.length); i++) {
    const c = buf[buf.length - i];
    if ((c & 0xc0) === 0x80) continue;
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > i ? i : 0;
  }
  return 0;
};
g.TextEncoder = TextEncoder;
g.TextDecoder = TextDecoder;

class Headers {
  constructor(init) {
    this._m = new Map();
    if (!init) return;
    const pairs = init instanceof Headers ? [...init] : Array.isArray(init) ? init : Object.entries(init);
    for (const [k, v] of pairs) this.append(k, v);
  }
  append(k, v) { k = String(k).toLowerCase(); this._m.set(k, this._m.has(k) ? `${this._m.get(k)}, ${v}` : String(v)); }
  set(k, v) { this._m.set(String(k).toLowerCase(), String(v)); }
  get(k) { return this._m.get(String(k).toLowerCase()) ?? null; }
  has(k) { return this._m.has(String(k).toLowerCase()); }
  delete(k) { this._m.delete(String(k).toLowerCase()); }
  forEach(fn) { for (const [k, v] of this._m) fn(v, k, this); }
  keys() { return this._m.keys(); }
  values() { return this._m.values(); }
  entries() { return this._m.entries(); }
  [Symbol.iterator]() { return this._m.entries(); }
}
class Response {
  constructor(body, init = {}) {
    this._body = body === undefined || body === null ? Buffer.alloc(0) : Buffer.from(body);
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? '';
    this.headers = new Headers(init.headers);
    this.url = init.url ?? '';
    this.bodyUsed = false;
  }
  get ok() { return this.status >= 200 && this.status < 300; }
  _take() {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.bodyUsed = true;
    return this._body;
  }
  async text() { return this._take().toString('utf8'); }
  async json() { return JSON.parse(this._take().toString('utf8')); }
  async arrayBuffer() { const b = this._take(); return b.buffer.slice(b.byteOffset, b.byteOffset + b.length); }
  async bytes() { return new Uint8Array(this._take()); }
}
g.Headers = Headers;
g.Response = Response;
g.fetch = async (input, init = {}) => {
  const url = String(input && input.url || input);
  if (!native.fetchAllowed()) {
    // Node's fetch only fails with "fetch failed"; this one also says why,
    // since an uncaught error prints only its message.
    const why = 'network access is disabled for this exec; allow it with allow_network (sqlfs-exec run --allow-network)';
    const e = new TypeError('fetch failed: ' + why);
    e.cause = Object.assign(new Error(`${why}: fetch ${url}`), { code: 'ERR_SQLFS_NO_NETWORK' });
    throw e;
  }
  const headers = [...new Headers(init.headers)];
  const body = init.body === undefined || init.body === null ? '' : typeof init.body === 'string' ? init.body : Buffer.from(init.body);
  let r;
  try {
    r = native.fetch(url, String(init.method || 'GET').toUpperCase(), headers, body);
  } catch (err) {
    throw Object.assign(new TypeError('fetch failed'), { cause: err });
  }
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers: r.headers, url: r.url });
};

// process.nextTick callbacks run before the promise jobs: every callback
// from the event loop goes through __invoke, which drains them first.
const ticks = [];
let tickScheduled = false;
function drainTicks() {
  tickScheduled = false;
  while (ticks.length) { const [fn, args] = ticks.shift(); fn(...args); }
}
g.__invoke = (fn, ...args) => { try { fn(...args); } finally { drainTicks(); } };

// process.
let stdinStream;
function makeStdin() {
  // A Readable whose whole input arrives as one chunk, then the end.
  const { Readable } = require('stream');
  return Object.assign(new Readable({
    read() {
      const data = require('fs').readFileSync(0);
      if (data.length) this.push(data);
      this.push(null);
    },
  }), { fd: 0, isTTY: false });
}
let exitCode;
let emitter;
const events = () => emitter || (emitter = new (require('events'))());
const hrtime = (prev) => {
  const ns = native.hrtime();
  let s = Math.floor(ns / 1e9), n = ns % 1e9;
  if (prev) { s -= prev[0]; n -= prev[1]; if (n < 0) { s--; n += 1e9; } }
  return [s, n];
};
hrtime.bigint = () => BigInt(native.hrtime());
const stream = (fd) => ({
  fd, isTTY: false, writable: true,
  write(s, enc, cb) {
    if (typeof enc === 'function') cb = enc;
    native.write(fd, typeof s === 'string' ? s : Buffer.from(s));
    if (cb) native.queueTask(() => cb());
    return true;
  },
  end(s) { if (s !== undefined) this.write(s); },
  on() { return this; }, once() { return this; }, emit() { return false; },
});
g.process = {
  title: 'node', version: 'v20.20.2', versions: { node: '20.20.2', v8: '0', uv: '0', modules: '115' },
  platform: 'linux', arch: 'x64', pid: 1, ppid: 0, execPath: '/usr/bin/node', release: { name: 'node' },
  argv: undefined, argv0: 'node', execArgv: [], env: undefined,
  config: { variables: {} }, features: {},
  stdout: stream(1), stderr: stream(2),
  get stdin() { return stdinStream || (stdinStream = makeStdin()); },
  cwd: () => native.cwd(),
  chdir: (d) => native.chdir(String(d)),
  exit(code) {
    if (code !== undefined) process.exitCode = code;
    g.__emitExit();
    native.exit(process.exitCode ?? 0);
  },
  abort() { native.exit(134); },
  get exitCode() { return exitCode; },
  set exitCode(c) { exitCode = c; native.setExitCode(c === undefined ? 0 : Number(c) | 0); },
  hrtime,
  nextTick(fn, ...args) {
    ticks.push([fnArg(fn), args]);
    if (!tickScheduled) { tickScheduled = true; Promise.resolve().then(drainTicks); }
  },
  uptime: () => native.hrtime() / 1e9,
  memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
  cpuUsage: () => ({ user: 0, system: 0 }),
  umask: () => 0o22,
  getuid: () => 1000, getgid: () => 1000, geteuid: () => 1000, getegid: () => 1000,
  kill() { throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' }); },
  emitWarning: (w) => native.write(2, `(node:1) ${w instanceof Error ? `${w.name}: ${w.message}` : `Warning: ${w}`}\n`),
  on(...a) { events().on(...a); return this; },
  once(...a) { events().once(...a); return this; },
  off(...a) { events().off(...a); return this; },
  removeListener(...a) { events().removeListener(...a); return this; },
  removeAllListeners(...a) { events().removeAllListeners(...a); return this; },
  emit: (...a) => events().emit(...a),
  listenerCount: (t) => (emitter ? emitter.listenerCount(t) : 0),
  binding() { throw new Error('No such module'); },
};
// What of the job the globals show, bound when the job starts: a worker
// sets a runtime up before its job arrives.
g.__start = () => {
  perfOrigin = Date.now() - native.hrtime() / 1e6;
  g.performance.timeOrigin = perfOrigin;
  process.argv = native.argv();
  process.env = native.env();
};
let exited = false;
g.__emitExit = () => {
  if (exited) return;
  exited = true;
  if (emitter) emitter.emit('exit', exitCode ?? 0);
};
g.__printResult = (v) => native.write(1, `${typeof v === 'string' ? v : lazyUtil().inspect(v)}\n`);
g.__runMain = (fn, file) => {
  const module = { id: '.', filename: file, loaded: false, exports: {}, children: [], paths: [] };
  require.main = module;
  try {
    fn.call(module.exports, module.exports, require, module, file, file.slice(0, file.lastIndexOf('/')) || '/');
  } finally {
    drainTicks();
  }
  module.loaded = true;
};
