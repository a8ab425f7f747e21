const _ = require('lodash');
console.log(_.chunk([1, 2, 3, 4, 5], 2), _.groupBy(['one', 'two', 'three'], 'length'));
console.log(_.template('hello <%= user %>!')({ user: 'fred' }), _.kebabCase('Foo Bar'), _.uniqBy([2.1, 1.2, 2.3], Math.floor));
console.log(_.merge({ a: [{ b: 2 }] }, { a: [{ c: 3 }] }), _.get({ a: { b: [1, { c: 7 }] } }, 'a.b[1].c'));
