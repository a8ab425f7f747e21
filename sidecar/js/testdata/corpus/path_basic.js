const p = require('path'); console.log(p.join('/a/b', '../c', './d'), p.basename('/x/y.tar.gz'), p.basename('/x/y.txt', '.txt'), p.extname('a/b.c.d'), p.dirname('/a/b/c'), p.dirname('a'))
