const fs = require('fs'); try { fs.writeFileSync('x', 42) } catch (e) { console.log(e.code, e.name) } try { fs.readFileSync({}) } catch (e) { console.log(e.code) }
