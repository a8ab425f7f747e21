const v = require('validator');
console.log(v.isEmail('a@b.co'), v.isEmail('nope'), v.isURL('https://x.org/p?q=1'), v.isUUID('6ba7b810-9dad-11d1-80b4-00c04fd430c8'), v.escape('<a href="x">'), v.isIP('::1'), v.normalizeEmail('Foo.Bar@GMAIL.com'));
