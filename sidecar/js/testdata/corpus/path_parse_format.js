const p = require('path'); console.log(p.parse('/home/u/file.txt'), p.parse('rel/x'), p.format({ dir: '/d', name: 'n', ext: '.e' }), p.sep, p.delimiter)
