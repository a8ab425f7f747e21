const qs = require('qs');
console.log(qs.parse('a[b][c]=1&a[d]=2&list[]=x&list[]=y'), qs.stringify({ a: { b: [1, 2] }, c: 'd e' }, { encode: false }), qs.stringify({ x: 'ü&' }));
