const crypto = require('crypto');
for (const alg of ['md5', 'sha1', 'sha256', 'sha384', 'sha512']) {
  console.log(alg, crypto.createHash(alg).update('hello ').update(Buffer.from('world')).digest('hex'));
}
console.log(crypto.createHash('sha256').update('x').digest('base64'));
console.log(crypto.createHash('sha256').update('x').digest().length);
console.log(crypto.createHmac('sha256', 'key').update('data').digest('hex'));
console.log(crypto.createHmac('sha1', Buffer.from('k')).update('a').update('b').digest('base64'));
console.log(require('node:crypto').createHash('md5').update('é', 'utf8').digest('hex'));
console.log(crypto.randomBytes(16).length, Buffer.isBuffer(crypto.randomBytes(4)));
console.log(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()));
const a = new Uint8Array(8); console.log(crypto.getRandomValues(a) === a, a.length);
console.log(typeof crypto.webcrypto.getRandomValues, typeof globalThis.crypto.randomUUID());
console.log(crypto.getHashes().includes('sha256'), crypto.timingSafeEqual(Buffer.from('ab'), Buffer.from('ab')));
try { crypto.createHash('nope') } catch (e) { console.log(e.message) }
