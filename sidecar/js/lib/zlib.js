// node:zlib: compression over Go's compress packages, in the sync,
// callback and stream forms. A stream (createGzip, …) is a Transform over
// a Go stream whose output comes as its input goes (a decompressor's
// output in pieces of at most 1 MiB); Go's deflate bytes differ from
// zlib's, both valid. Brotli says so in one line.
const constants = {
  Z_NO_FLUSH: 0, Z_PARTIAL_FLUSH: 1, Z_SYNC_FLUSH: 2, Z_FULL_FLUSH: 3, Z_FINISH: 4, Z_BLOCK: 5,
  Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3, Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6,
  Z_NO_COMPRESSION: 0, Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9, Z_DEFAULT_COMPRESSION: -1,
  Z_FILTERED: 1, Z_HUFFMAN_ONLY: 2, Z_RLE: 3, Z_FIXED: 4, Z_DEFAULT_STRATEGY: 0,
};
const input = (b) => (typeof b === 'string' ? Buffer.from(b) : b instanceof ArrayBuffer ? Buffer.from(b) : b);
const ops = ['gzip', 'gunzip', 'deflate', 'inflate', 'deflateRaw', 'inflateRaw', 'unzip'];
module.exports = { constants };
class ZlibStream extends require('stream').Transform {
  constructor(op, o = {}) {
    super(o);
    this._z = native.crypto.zlibStream(op, o.level === undefined ? -1 : o.level);
    this.bytesWritten = 0;
  }
  // _take pushes what a stream call gave and goes on while the Go side
  // has more output for the same input.
  _take(call) {
    let [out, state] = call();
    for (;;) {
      if (out.length) this.push(out);
      if (state !== 'more') return;
      [out, state] = this._z.more();
    }
  }
  _transform(chunk, enc, cb) {
    try { this._take(() => this._z.write(chunk)); } catch (e) { cb(e); return; }
    this.bytesWritten += chunk.length;
    cb();
  }
  _flush(cb) {
    try { this._take(() => this._z.end()); } catch (e) { cb(e); return; }
    cb();
  }
  flush(kind, cb) {
    if (typeof kind === 'function') cb = kind;
    try { this._take(() => this._z.flush()); } catch (e) { this.destroy(e); return; }
    if (cb) process.nextTick(cb);
  }
  // params would change the level for what follows: the bytes are Go's
  // anyway, so it changes nothing here.
  params(level, strategy, cb) { if (cb) process.nextTick(cb); }
  close(cb) { if (cb) this.once('close', cb); this.destroy(); }
}
for (const op of ops) {
  const sync = (buf, o = {}) => native.crypto.zlib(op, input(buf), o.level === undefined ? -1 : o.level, o.finishFlush === constants.Z_SYNC_FLUSH);
  module.exports[`${op}Sync`] = sync;
  module.exports[op] = (buf, o, cb) => {
    if (typeof o === 'function') { cb = o; o = {}; }
    let r, err = null;
    try { r = sync(buf, o); } catch (e) { err = e; }
    native.queueTask(() => cb(err, r));
  };
  const cls = op[0].toUpperCase() + op.slice(1);
  const Cls = { [cls]: class extends ZlibStream { constructor(o) { super(op, o); } } }[cls];
  module.exports[cls] = Cls;
  module.exports[`create${cls}`] = (o) => new Cls(o);
}
for (const name of ['brotliCompressSync', 'brotliDecompressSync', 'brotliCompress', 'brotliDecompress', 'createBrotliCompress', 'createBrotliDecompress']) {
  module.exports[name] = () => { throw native.unsupported(`zlib.${name} (brotli)`); };
}
