const fs = require('fs'); fs.mkdirSync('d'); try { fs.mkdirSync('d') } catch (e) { console.log(e.code, e.syscall, e.errno) } try { fs.mkdirSync('x/y') } catch (e) { console.log(e.code) }
