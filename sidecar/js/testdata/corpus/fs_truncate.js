const fs = require('fs'); fs.writeFileSync('tr', 'abcdefgh'); fs.truncateSync('tr', 3); console.log(fs.readFileSync('tr', 'utf8')); fs.truncateSync('tr', 5); console.log(fs.readFileSync('tr'))
