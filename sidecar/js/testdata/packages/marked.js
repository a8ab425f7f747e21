const { marked } = require('marked');
console.log(marked.parse('# Title\n\nSome *emph* and `code`.\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```js\nlet x;\n```\n'));
