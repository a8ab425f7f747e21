const zlib = require('zlib');
const text = 'hello hello hello hello '.repeat(20);
const gz = zlib.gzipSync(text);
console.log(gz[0], gz[1], zlib.gunzipSync(gz).toString() === text);
console.log(zlib.inflateSync(zlib.deflateSync(Buffer.from(text))).toString() === text);
console.log(zlib.inflateRawSync(zlib.deflateRawSync(text)).toString().length);
console.log(zlib.unzipSync(zlib.gzipSync('abc')).toString(), zlib.unzipSync(zlib.deflateSync('xyz')).toString());
// Made by node: zlib.gzipSync('sqlfs').toString('base64'), deflateSync('sqlfs')
console.log(zlib.gunzipSync(Buffer.from('H4sIAAAAAAAAAysuzEkrBgAYdLUQBQAAAA==', 'base64')).toString());
console.log(zlib.inflateSync(Buffer.from('eJwrLsxJKwYABosCKg==', 'base64')).toString());
try { zlib.gunzipSync(Buffer.from('not gzip')) } catch (e) { console.log(e.code) }
console.log(typeof zlib.constants.Z_BEST_COMPRESSION, zlib.gzipSync('a', { level: 9 }).length > 10);
