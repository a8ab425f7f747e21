// node:crypto: digests, HMAC and randomness over Go's crypto packages.
// Ciphers, keys and signatures are not here: they say so in one line.
const c = native.crypto;
const toBuf = (data, enc) => (typeof data === 'string' ? Buffer.from(data, enc || 'utf8') : data);

class Hash {
  constructor(alg, key) {
    const h = c.hash(String(alg), key === undefined ? undefined : toBuf(key));
    if (h === null) throw new Error(key === undefined ? 'Digest method not supported' : `Invalid digest: ${alg}`);
    this._h = h;
  }
  update(data, enc) {
    if (this._done) { const e = new Error('Digest already called'); e.code = 'ERR_CRYPTO_HASH_FINALIZED'; throw e; }
    c.update(this._h, toBuf(data, enc));
    return this;
  }
  digest(enc) {
    this._done = true;
    const out = c.digest(this._h);
    return enc && enc !== 'buffer' ? out.toString(enc) : out;
  }
}
class Hmac extends Hash {}

function randomBytes(n, cb) {
  const b = Buffer.alloc(n);
  c.randomFill(b);
  if (typeof cb === 'function') { native.queueTask(() => cb(null, b)); return undefined; }
  return b;
}
function getRandomValues(a) {
  if (!ArrayBuffer.isView(a) || a instanceof Float32Array || a instanceof Float64Array) {
    const e = new TypeError('The data argument must be an integer-type TypedArray'); e.code = 'ERR_INVALID_ARG_TYPE'; throw e;
  }
  if (a.byteLength > 65536) {
    const e = new RangeError(`The ArrayBufferView's byte length (${a.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`);
    e.name = 'QuotaExceededError'; throw e;
  }
  c.randomFill(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  return a;
}
function randomUUID() {
  const b = randomBytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
function randomInt(min, max, cb) {
  if (max === undefined || typeof max === 'function') { cb = max; max = min; min = 0; }
  const range = max - min;
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || range <= 0) {
    const e = new RangeError(`The value of "max" is out of range. It must be greater than the value of "min" (${min}). Received ${max}`); e.code = 'ERR_OUT_OF_RANGE'; throw e;
  }
  // Rejection sampling over 48 random bits, as Node does.
  const limit = 2 ** 48 - (2 ** 48 % range);
  let x;
  do { x = randomBytes(6).readUIntBE(0, 6); } while (x >= limit);
  const r = min + (x % range);
  if (typeof cb === 'function') { native.queueTask(() => cb(null, r)); return undefined; }
  return r;
}
function timingSafeEqual(a, b) {
  if (a.byteLength !== b.byteLength) {
    const e = new RangeError('Input buffers must have the same byte length'); e.code = 'ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH'; throw e;
  }
  return c.timingSafeEqual(a, b);
}
const unsupported = (name) => () => { throw native.unsupported(`crypto.${name}`); };
const webcrypto = { getRandomValues, randomUUID, subtle: undefined };
module.exports = {
  createHash: (alg) => new Hash(alg),
  createHmac: (alg, key) => new Hmac(alg, key),
  Hash, Hmac,
  hash: (alg, data, enc = 'hex') => new Hash(alg).update(data).digest(enc),
  getHashes: () => c.hashes(),
  randomBytes, getRandomValues, randomUUID, randomInt, timingSafeEqual,
  randomFillSync(b, off = 0, size) { c.randomFill(Buffer.from(b.buffer, b.byteOffset + off, size === undefined ? b.byteLength - off : size)); return b; },
  webcrypto,
  constants: {},
};
for (const name of ['createCipheriv', 'createDecipheriv', 'createSign', 'createVerify', 'generateKeyPairSync', 'generateKeyPair',
  'createPrivateKey', 'createPublicKey', 'createSecretKey', 'publicEncrypt', 'privateDecrypt', 'pbkdf2', 'pbkdf2Sync', 'scrypt', 'scryptSync',
  'createDiffieHellman', 'createECDH', 'sign', 'verify', 'hkdf', 'hkdfSync']) module.exports[name] = unsupported(name);
