const fs = require('fs'); fs.writeFileSync('c.js', 'globalThis.count = (globalThis.count || 0) + 1; module.exports = { v: 1 }'); require('./c.js'); require('./c.js'); console.log(globalThis.count)
