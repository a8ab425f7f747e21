const fs = require('fs'); const d = fs.mkdtempSync('tmp-'); console.log(d.length, d.startsWith('tmp-'), fs.statSync(d).isDirectory()); fs.rmdirSync(d)
