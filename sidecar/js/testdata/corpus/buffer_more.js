console.log(Buffer.allocUnsafe(5).length, Buffer.allocUnsafeSlow(3).length);
console.log(Buffer.compare(Buffer.from('a'), Buffer.from('b')), Buffer.compare(Buffer.from('b'), Buffer.from('a')), Buffer.compare(Buffer.from('a'), Buffer.from('a')));
console.log([Buffer.from('b'), Buffer.from('a'), Buffer.from('c')].sort(Buffer.compare).map(String).join());
console.log(Buffer.from([251, 255, 191]).toString('base64url'), Buffer.from('-_-_', 'base64url'));
console.log(Buffer.from('hi').toString('base64url'), Buffer.byteLength('aGk', 'base64url'));
console.log(new TextDecoder('utf-16le').decode(new Uint8Array([104, 0, 105, 0])));
console.log(Buffer.from('hé', 'utf16le'), Buffer.from([104, 0, 233, 0]).toString('utf16le'));
