const fs = require('fs'); const w = fs.createWriteStream('w.log'); w.write('line1\n'); w.write('line2\n'); w.end('end\n', () => console.log(fs.readFileSync('w.log', 'utf8')))
