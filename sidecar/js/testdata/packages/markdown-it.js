const md = require('markdown-it')({ linkify: true, typographer: true });
console.log(md.render('# Hi\n\n"Quotes" -- and https://example.com\n\n1. one\n2. two\n\n> quote\n'));
