const fs = require('fs');
const w = (p, s) => { fs.mkdirSync(require('path').dirname(p), { recursive: true }); fs.writeFileSync(p, typeof s === 'string' ? s : JSON.stringify(s)); };
w('node_modules/cond/package.json', { name: 'cond', main: 'wrong.js', exports: { '.': { import: './esm.mjs', require: './cjs.js' }, './feature/*': './lib/*.js', './package.json': './package.json', './internal/*': null } });
w('node_modules/cond/cjs.js', 'module.exports = "cjs " + require("#dep")');
w('node_modules/cond/lib/a.js', 'module.exports = "feature a"');
w('node_modules/cond/lib/secret.js', 'module.exports = "secret"');
w('node_modules/cond/package.json', JSON.parse(fs.readFileSync('node_modules/cond/package.json')));
const pj = JSON.parse(fs.readFileSync('node_modules/cond/package.json')); pj.imports = { '#dep': { node: './dep.js', default: './nope.js' } };
w('node_modules/cond/package.json', pj);
w('node_modules/cond/dep.js', 'module.exports = "dep"');
w('node_modules/sugar/package.json', { name: 'sugar', exports: './main.js' });
w('node_modules/sugar/main.js', 'exports.v = 1');
w('node_modules/@sc/pkg/package.json', { name: '@sc/pkg', exports: { '.': './i.js', './sub': { default: './s.js' } } });
w('node_modules/@sc/pkg/i.js', 'module.exports = "scoped"');
w('node_modules/@sc/pkg/s.js', 'module.exports = "scoped sub"');
w('node_modules/plain/package.json', { name: 'plain', main: 'lib/m.js' });
w('node_modules/plain/lib/m.js', 'module.exports = "plain main"');
console.log(require('cond'), require('cond/feature/a'), require('sugar').v, require('@sc/pkg'), require('@sc/pkg/sub'), require('plain'));
console.log(require('cond/package.json').name);
for (const id of ['cond/lib/secret.js', 'cond/internal/x', 'sugar/main.js']) {
  try { require(id); console.log('loaded', id) } catch (e) { console.log(e.code) }
}
// A package's CLI through its .bin symlink: relative requires follow the real file.
w('node_modules/tool/bin/cli.js', '#!/usr/bin/env node\nconsole.log("tool", require("../lib/v.js"), process.argv.length)');
w('node_modules/tool/lib/v.js', 'module.exports = 7');
fs.mkdirSync('node_modules/.bin');
fs.symlinkSync('../tool/bin/cli.js', 'node_modules/.bin/tool');
console.log(require('child_process').execSync('node node_modules/.bin/tool a b', { encoding: 'utf8' }).trim());
const path = require('path');
for (const id of ['cond', 'cond/feature/a', '@sc/pkg/sub', 'plain', './node_modules/plain/lib/m', 'fs', 'node:path']) console.log(path.relative(process.cwd(), require.resolve(id)) || require.resolve(id));
try { require.resolve('nothere') } catch (e) { console.log(e.code) }
w('node_modules/plain/lib/who.js', 'module.exports = require.resolve("./m")');
console.log(path.relative(process.cwd(), require('plain/lib/who')));
