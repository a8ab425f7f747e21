const fs = require('fs'); fs.writeFileSync('a.txt', 'hello\n'); fs.appendFileSync('a.txt', 'world\n'); console.log(fs.readFileSync('a.txt', 'utf8')); console.log(fs.readFileSync('a.txt').length)
