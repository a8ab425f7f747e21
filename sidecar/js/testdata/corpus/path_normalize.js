const p = require('node:path'); for (const s of ['', '.', '..', '/..', 'a//b/../c/', './x', '/a/./b/.', 'a/../..']) console.log(JSON.stringify(s), p.normalize(s))
