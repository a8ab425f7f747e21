const yaml = require('js-yaml');
const doc = yaml.load('greeting: hello\nitems:\n  - 1\n  - two\ndate: 2020-01-01\n');
console.log(doc, yaml.dump({ a: [1, 2], b: { c: 'd' } }));
try { yaml.load('a: [1,'); } catch (e) { console.log(e.name, e.reason); }
