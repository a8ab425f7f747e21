const iconv = require('iconv-lite');
const b = iconv.encode('Grüße €', 'win1252');
console.log(b, iconv.decode(b, 'win1252'), iconv.encode('hé', 'utf16le'), iconv.decode(Buffer.from([0x82, 0xa0]), 'shift_jis'), iconv.encodingExists('koi8-r'));
