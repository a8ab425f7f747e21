const fs = require('fs'); fs.writeFileSync('t', 'x'); fs.symlinkSync('t', 'l'); console.log(fs.lstatSync('l').isSymbolicLink(), fs.statSync('l').isFile(), fs.readlinkSync('l'))
