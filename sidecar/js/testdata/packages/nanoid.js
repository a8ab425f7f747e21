const { nanoid, customAlphabet } = require('nanoid');
console.log(nanoid().length, /^[A-Za-z0-9_-]+$/.test(nanoid()), customAlphabet('ab', 10)().replace(/[ab]/g, '').length);
