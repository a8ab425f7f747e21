const util = require('node:util'); console.log(util.format('a', 1, { b: 2 }), util.format('%s:%s', 'x'), util.format(5, 'y'))
