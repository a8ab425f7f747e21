const p = require('path'); console.log(p.relative('/a/b/c', '/a/d'), p.relative('/a', '/a/b/c'), p.relative('/a/b', '/a/b') === '', p.isAbsolute('/x'), p.isAbsolute('x'))
