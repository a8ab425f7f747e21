const fs = require('fs'); fs.writeFileSync('file', ''); try { fs.readdirSync('file') } catch (e) { console.log(e.code, e.syscall) } try { fs.readFileSync('.') } catch (e) { console.log(e.code) }
