const YAML = require('yaml');
const doc = YAML.parse('a: 1\nb: [x, y]\nc:\n  d: true\n  e: ~\n');
console.log(doc, YAML.stringify({ list: [1, 'two', { three: 3 }], s: 'multi\nline' }));
require('fs').writeFileSync('out.yaml', YAML.stringify(doc));
