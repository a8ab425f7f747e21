const util = require('util'); console.log(util.inspect({ a: [1, 2, { b: { c: { d: 1 } } }] }, { depth: 0 })); console.log(util.inspect('str'), util.inspect(new Map()))
