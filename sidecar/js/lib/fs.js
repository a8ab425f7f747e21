// node:fs and node:fs/promises over the Go natives (sync and throwing);
// the promise and callback forms wrap the sync ones.
const n = native.fs;
const pathMod = require('path');

const constants = {
  F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
  COPYFILE_EXCL: 1, COPYFILE_FICLONE: 2, COPYFILE_FICLONE_FORCE: 4,
  O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128, O_NOCTTY: 256, O_TRUNC: 512,
  O_APPEND: 1024, O_DIRECTORY: 65536, O_NOFOLLOW: 131072, O_SYNC: 1052672,
  S_IFMT: 0o170000, S_IFREG: 0o100000, S_IFDIR: 0o40000, S_IFCHR: 0o20000, S_IFBLK: 0o60000,
  S_IFIFO: 0o10000, S_IFLNK: 0o120000, S_IFSOCK: 0o140000,
};

function toPath(p, name = 'path') {
  if (typeof p === 'string') {
    if (p.includes('\u0000')) throw __typeError('ERR_INVALID_ARG_VALUE', `The argument '${name}' must be a string, Uint8Array, or URL without null bytes. Received ${__inspect(p)}`);
    return p;
  }
  if (p instanceof Uint8Array) return Buffer.from(p).toString();
  if (p && typeof p === 'object' && p.href !== undefined && p.protocol === 'file:') return decodeURIComponent(p.pathname);
  throw __typeError('ERR_INVALID_ARG_TYPE', `The "${name}" argument must be of type string or an instance of Buffer or URL. Received ${__describe(p)}`);
}

function opts(o, def) {
  if (o === undefined || o === null || typeof o === 'function') return { ...def };
  if (typeof o === 'string') return { ...def, encoding: o };
  return { ...def, ...o };
}

function modeArg(m, def) {
  if (m === undefined || m === null) return def;
  if (typeof m === 'string') return parseInt(m, 8);
  return m;
}

class Stats {
  constructor(a) {
    [this.dev, this.mode, this.nlink, this.uid, this.gid, this.rdev, this.blksize, this.ino, this.size, this.blocks,
      this.atimeMs, this.mtimeMs, this.ctimeMs, this.birthtimeMs] = a;
    this.atime = new Date(this.atimeMs);
    this.mtime = new Date(this.mtimeMs);
    this.ctime = new Date(this.ctimeMs);
    this.birthtime = new Date(this.birthtimeMs);
  }
  _is(t) { return (this.mode & constants.S_IFMT) === t; }
  isFile() { return this._is(constants.S_IFREG); }
  isDirectory() { return this._is(constants.S_IFDIR); }
  isSymbolicLink() { return this._is(constants.S_IFLNK); }
  isFIFO() { return this._is(constants.S_IFIFO); }
  isSocket() { return this._is(constants.S_IFSOCK); }
  isCharacterDevice() { return this._is(constants.S_IFCHR); }
  isBlockDevice() { return this._is(constants.S_IFBLK); }
}
Object.defineProperty(Stats.prototype, '_is', { enumerable: false });

const kType = Symbol('type');
class Dirent {
  constructor(name, type, dir) { this.name = name; this.parentPath = dir; this.path = dir; this[kType] = type; }
  isFile() { return this[kType] === 1; }
  isDirectory() { return this[kType] === 2; }
  isSymbolicLink() { return this[kType] === 3; }
  isFIFO() { return this[kType] === 4; }
  isSocket() { return this[kType] === 5; }
  isCharacterDevice() { return this[kType] === 6; }
  isBlockDevice() { return this[kType] === 7; }
}

function dataBytes(data, encoding, name = 'data') {
  if (typeof data === 'string') return encoding && encoding !== 'utf8' && encoding !== 'utf-8' ? Buffer.from(data, encoding) : data;
  if (ArrayBuffer.isView(data)) return data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw __typeError('ERR_INVALID_ARG_TYPE', `The "${name}" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received ${__describe(data)}`);
}

function readdirSync(p, o) {
  o = opts(o, { encoding: 'utf8' });
  const dir = toPath(p);
  const out = [];
  const walk = (rel) => {
    const abs = rel === '' ? dir : pathMod.join(dir, rel);
    for (const [name, type] of n.readdir(abs)) {
      const relName = rel === '' ? name : `${rel}/${name}`;
      out.push(o.withFileTypes ? new Dirent(name, type, abs) : (o.encoding === 'buffer' ? Buffer.from(relName) : relName));
      if (o.recursive && type === 2) walk(relName);
    }
  };
  walk('');
  return out;
}

function cpSync(src, dest, o) {
  o = opts(o, { force: true });
  src = toPath(src, 'src'); dest = toPath(dest, 'dest');
  const st = new Stats(n.stat(src, !!o.dereference));
  if (st.isDirectory()) {
    if (!o.recursive) {
      const e = new Error(`Recursive option is required to copy a directory: ${src}`);
      e.code = 'ERR_FS_EISDIR'; e.syscall = 'cp'; e.path = src; e.errno = 21;
      throw e;
    }
    if (!n.exists(dest)) n.mkdir(dest, st.mode & 0o7777, true);
    for (const [name] of n.readdir(src)) {
      const s = pathMod.join(src, name);
      if (o.filter && !o.filter(s, pathMod.join(dest, name))) continue;
      cpSync(s, pathMod.join(dest, name), o);
    }
    return;
  }
  if (st.isSymbolicLink()) { n.symlink(n.readlink(src), dest); return; }
  if (n.exists(dest)) {
    if (o.errorOnExist && !o.force) {
      const e = new Error(`Target already exists: cp returned EEXIST (${dest} already exists)`);
      e.code = 'ERR_FS_CP_EEXIST'; throw e;
    }
    if (!o.force) return;
  }
  n.copyFile(src, dest, 0);
}

function readFileSync(p, o) {
  o = opts(o, { flag: 'r' });
  if (typeof p === 'number') return readFd(p, o.encoding);
  return n.readFile(toPath(p), o.encoding);
}

function readFd(fd, encoding) {
  const chunks = [];
  for (;;) {
    const b = Buffer.alloc(65536);
    const got = n.read(fd, b, 0, b.length, -1);
    if (got === 0) break;
    chunks.push(b.subarray(0, got));
  }
  const all = Buffer.concat(chunks);
  return encoding ? all.toString(encoding) : all;
}

function writeFileSync(p, data, o) {
  o = opts(o, { encoding: 'utf8', mode: 0o666, flag: 'w' });
  const bytes = dataBytes(data, o.encoding);
  if (typeof p === 'number') { n.write(p, bytes, -1); return; }
  n.writeFile(toPath(p), bytes, o.flag, modeArg(o.mode, 0o666));
}

function appendFileSync(p, data, o) {
  o = opts(o, { encoding: 'utf8', mode: 0o666, flag: 'a' });
  writeFileSync(p, data, o);
}

function mkdirSync(p, o) {
  if (typeof o === 'number' || typeof o === 'string') o = { mode: o };
  o = opts(o, { recursive: false, mode: 0o777 });
  return n.mkdir(toPath(p), modeArg(o.mode, 0o777), !!o.recursive);
}

function rmSync(p, o) {
  o = opts(o, { recursive: false, force: false });
  n.rm(toPath(p), !!o.recursive, !!o.force);
}

function rmdirSync(p, o) {
  o = opts(o, {});
  if (o.recursive) { n.rm(toPath(p), true, false); return; }
  n.rmdir(toPath(p));
}

function readSync(fd, buffer, offset, length, position) {
  if (offset !== null && typeof offset === 'object') ({ offset = 0, length = buffer.byteLength - offset, position = null } = offset);
  offset = offset ?? 0;
  length = length ?? buffer.byteLength - offset;
  return n.read(fd, buffer, offset, length, position ?? -1);
}

function writeSync(fd, data, a, b, c) {
  if (typeof data === 'string') return n.write(fd, dataBytes(data, typeof b === 'string' ? b : 'utf8'), typeof a === 'number' ? a : -1);
  const offset = a ?? 0;
  const length = b ?? data.byteLength - offset;
  return n.write(fd, data.subarray(offset, offset + length), c ?? -1);
}

const sync = {
  readFileSync, writeFileSync, appendFileSync, readdirSync, mkdirSync, rmSync, rmdirSync, cpSync, readSync, writeSync,
  existsSync: (p) => { try { return n.exists(toPath(p)); } catch { return false; } },
  statSync: (p, o) => {
    try { return new Stats(n.stat(toPath(p), true)); } catch (e) { if (o && o.throwIfNoEntry === false && e.code === 'ENOENT') return undefined; throw e; }
  },
  lstatSync: (p, o) => {
    try { return new Stats(n.stat(toPath(p), false)); } catch (e) { if (o && o.throwIfNoEntry === false && e.code === 'ENOENT') return undefined; throw e; }
  },
  renameSync: (a, b) => n.rename(toPath(a, 'oldPath'), toPath(b, 'newPath')),
  linkSync: (a, b) => n.link(toPath(a, 'existingPath'), toPath(b, 'newPath')),
  symlinkSync: (t, p) => n.symlink(toPath(t, 'target'), toPath(p)),
  readlinkSync: (p) => n.readlink(toPath(p)),
  realpathSync: (p) => n.realpath(toPath(p)),
  unlinkSync: (p) => n.unlink(toPath(p)),
  accessSync: (p, mode) => n.access(toPath(p), mode ?? 0),
  chmodSync: (p, mode) => n.chmod(toPath(p), modeArg(mode)),
  utimesSync: (p, at, mt) => n.utimes(toPath(p), timeArg(at), timeArg(mt)),
  truncateSync: (p, len) => (typeof p === 'number' ? n.ftruncate(p, len ?? 0) : n.truncate(toPath(p), len ?? 0)),
  copyFileSync: (s, d, mode) => n.copyFile(toPath(s, 'src'), toPath(d, 'dest'), mode ?? 0),
  mkdtempSync: (prefix) => n.mkdtemp(prefix),
  openSync: (p, flags, mode) => n.open(toPath(p), flags ?? 'r', modeArg(mode, 0o666)),
  closeSync: (fd) => n.close(fd),
  fstatSync: (fd) => new Stats(n.fstat(fd)),
  ftruncateSync: (fd, len) => n.ftruncate(fd, len ?? 0),
  fsyncSync: (fd) => { n.fstat(fd); },
  fdatasyncSync: (fd) => { n.fstat(fd); },
};
sync.realpathSync.native = sync.realpathSync;

function timeArg(t) {
  if (t instanceof Date) return t.getTime() / 1000;
  if (typeof t === 'string') return Number(t);
  return t;
}

// Callback forms: the result arrives in a later macrotask, as from libuv.
const callbacks = {};
for (const [name, fn] of Object.entries(sync)) {
  if (name === 'existsSync') continue;
  const base = name.slice(0, -4);
  callbacks[base] = function (...args) {
    const cb = args.pop();
    if (typeof cb !== 'function') throw __typeError('ERR_INVALID_ARG_TYPE', `The "cb" argument must be of type function. Received ${__describe(cb)}`);
    let res, err = null;
    try { res = fn(...args); } catch (e) { err = e; }
    native.queueTask(() => (err ? cb(err) : cb(null, res)));
  };
}
callbacks.exists = (p, cb) => { const r = sync.existsSync(p); native.queueTask(() => cb(r)); };
callbacks.read = function (fd, buffer, offset, length, position, cb) {
  if (typeof offset === 'function') { cb = offset; offset = undefined; }
  let res, err = null;
  try { res = readSync(fd, buffer, offset, length, position); } catch (e) { err = e; }
  native.queueTask(() => (err ? cb(err) : cb(null, res, buffer)));
};
callbacks.write = function (fd, data, ...rest) {
  const cb = rest.pop();
  let res, err = null;
  try { res = writeSync(fd, data, ...rest); } catch (e) { err = e; }
  native.queueTask(() => (err ? cb(err) : cb(null, res, data)));
};

const p = (fn) => (...args) => { try { return Promise.resolve(fn(...args)); } catch (e) { return Promise.reject(e); } };

class FileHandle extends require('events') {
  constructor(fd) { super(); this.fd = fd; }
  async read(buffer, offset, length, position) {
    if (buffer === undefined || (buffer !== null && !ArrayBuffer.isView(buffer) && typeof buffer === 'object')) {
      const o = buffer || {};
      buffer = o.buffer ?? Buffer.alloc(16384); offset = o.offset ?? 0; length = o.length ?? buffer.byteLength - offset; position = o.position ?? null;
    }
    const bytesRead = readSync(this.fd, buffer, offset, length, position);
    return { bytesRead, buffer };
  }
  async write(data, a, b, c) { const bytesWritten = writeSync(this.fd, data, a, b, c); return { bytesWritten, buffer: data }; }
  async readFile(o) { o = opts(o, {}); return readFd(this.fd, o.encoding); }
  async writeFile(data, o) { o = opts(o, { encoding: 'utf8' }); n.write(this.fd, dataBytes(data, o.encoding), -1); }
  async appendFile(data, o) { return this.writeFile(data, o); }
  async stat() { return new Stats(n.fstat(this.fd)); }
  async truncate(len) { n.ftruncate(this.fd, len ?? 0); }
  async sync() {}
  async datasync() {}
  async chmod() {}
  async close() { if (this.fd !== -1) { const fd = this.fd; this.fd = -1; n.close(fd); this.emit('close'); } }
  async [Symbol.asyncDispose]() { return this.close(); }
}

const promises = {
  constants,
  open: p((path, flags, mode) => new FileHandle(n.open(toPath(path), flags ?? 'r', modeArg(mode, 0o666)))),
  readFile: p((path, o) => (path instanceof FileHandle ? readFd(path.fd, opts(o, {}).encoding) : readFileSync(path, o))),
  writeFile: p((path, data, o) => (path instanceof FileHandle ? path.writeFile(data, o) : writeFileSync(path, data, o))),
  appendFile: p((path, data, o) => (path instanceof FileHandle ? path.appendFile(data, o) : appendFileSync(path, data, o))),
  readdir: p(readdirSync),
  mkdir: p(mkdirSync),
  rm: p(rmSync),
  rmdir: p(rmdirSync),
  cp: p(cpSync),
  stat: p(sync.statSync),
  lstat: p(sync.lstatSync),
  rename: p(sync.renameSync),
  link: p(sync.linkSync),
  symlink: p(sync.symlinkSync),
  readlink: p(sync.readlinkSync),
  realpath: p(sync.realpathSync),
  unlink: p(sync.unlinkSync),
  access: p(sync.accessSync),
  chmod: p(sync.chmodSync),
  utimes: p(sync.utimesSync),
  truncate: p(sync.truncateSync),
  copyFile: p(sync.copyFileSync),
  mkdtemp: p(sync.mkdtempSync),
};

const { Readable, Writable } = require('stream');

// WriteStream and ReadStream are node:stream's Writable and Readable over a
// descriptor the constructor opens; the descriptor closes when the stream
// is destroyed (after 'finish' or 'end', as autoDestroy does in Node).
class WriteStream extends Writable {
  constructor(path, o) {
    o = opts(o, { flags: 'w', encoding: 'utf8', mode: 0o666 });
    super({ ...o, decodeStrings: true, defaultEncoding: o.encoding });
    this.path = path;
    this.bytesWritten = 0;
    this.flags = o.flags;
    this.pending = false;
    try { this.fd = o.fd ?? n.open(toPath(path), o.flags, modeArg(o.mode, 0o666)); } catch (e) { this.fd = null; process.nextTick(() => this.destroy(e)); return; }
    process.nextTick(() => { this.emit('open', this.fd); this.emit('ready'); });
  }
  _write(chunk, enc, cb) {
    try { this.bytesWritten += n.write(this.fd, chunk, -1); } catch (e) { cb(e); return; }
    cb();
  }
  _destroy(err, cb) {
    if (this.fd !== null && this.fd !== undefined) { try { n.close(this.fd); } catch (e) { err = err || e; } this.fd = null; }
    cb(err);
  }
  close(cb) { if (cb) this.once('close', cb); if (!this.writableEnded) this.end(); else this.destroy(); }
}

class ReadStream extends Readable {
  constructor(path, o) {
    o = opts(o, {});
    super({ highWaterMark: 64 * 1024, ...o });
    this.path = path;
    this.bytesRead = 0;
    this.start = o.start;
    this.end = o.end ?? Infinity;
    this.pos = o.start;
    this.pending = false;
    try { this.fd = o.fd ?? n.open(toPath(path), o.flags ?? 'r', 0o666); } catch (e) { this.fd = null; process.nextTick(() => this.destroy(e)); return; }
    process.nextTick(() => { this.emit('open', this.fd); this.emit('ready'); });
  }
  _read(size) {
    const left = this.end === Infinity ? size : Math.min(size, this.end - (this.pos ?? this.bytesRead) + 1);
    if (left <= 0) { this.push(null); return; }
    const buf = Buffer.alloc(left);
    let got;
    try { got = n.read(this.fd, buf, 0, left, this.pos ?? -1); } catch (e) { this.destroy(e); return; }
    if (this.pos !== undefined) this.pos += got;
    this.bytesRead += got;
    this.push(got ? buf.subarray(0, got) : null);
  }
  _destroy(err, cb) {
    if (this.fd !== null && this.fd !== undefined) { try { n.close(this.fd); } catch (e) { err = err || e; } this.fd = null; }
    cb(err);
  }
  close(cb) { if (cb) this.once('close', cb); this.destroy(); }
}

module.exports = {
  ...sync, ...callbacks, constants, Stats, Dirent, promises, FileHandle,
  createWriteStream: (p, o) => new WriteStream(p, o),
  createReadStream: (p, o) => new ReadStream(p, o),
  WriteStream, ReadStream,
  F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1,
};
