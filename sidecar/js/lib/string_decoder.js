// node:string_decoder: decodes a byte stream without splitting characters.
// How many bytes a character needs, given its first byte (0: a continuation).
const utf8Need = (b) => (b < 0x80 ? 1 : b < 0xc0 ? 0 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4);
class StringDecoder {
  constructor(enc = 'utf8') {
    enc = String(enc).toLowerCase().replace('-', '');
    if (enc === 'ucs2' || enc === 'utf16le') enc = 'utf16le';
    if (enc === 'binary') enc = 'latin1';
    if (!['utf8', 'utf16le', 'base64', 'base64url', 'hex', 'latin1', 'ascii'].includes(enc)) {
      const e = new TypeError(`Unknown encoding: ${enc}`); e.code = 'ERR_UNKNOWN_ENCODING'; throw e;
    }
    this.encoding = enc;
    this._rest = Buffer.alloc(0);
  }
  // keep is how many trailing bytes of b start a character not yet whole.
  _keep(b) {
    const n = b.length;
    if (this.encoding === 'utf16le') return n % 2;
    if (this.encoding === 'base64' || this.encoding === 'base64url') return n % 3;
    if (this.encoding !== 'utf8') return 0;
    for (let i = 1; i <= Math.min(3, n); i++) {
      const need = utf8Need(b[n - i]);
      if (need === 0) continue;
      return need > i ? i : 0;
    }
    return 0;
  }
  write(buf) {
    if (typeof buf === 'string') return buf;
    const b = this._rest.length ? Buffer.concat([this._rest, buf]) : Buffer.from(buf);
    const keep = this._keep(b);
    this._rest = b.subarray(b.length - keep);
    return b.subarray(0, b.length - keep).toString(this.encoding);
  }
  end(buf) {
    let s = buf ? this.write(buf) : '';
    if (this._rest.length) s += this._rest.toString(this.encoding);
    this._rest = Buffer.alloc(0);
    return s;
  }
}
module.exports = { StringDecoder };
