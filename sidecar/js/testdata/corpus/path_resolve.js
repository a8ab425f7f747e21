const p = require('path'); console.log(p.resolve('/a', 'b', '../c') , p.resolve('/x', '/y', 'z'), p.posix === p)
