const url = require('url');
console.log(url.fileURLToPath('file:///workspace/a%20b.txt'), url.pathToFileURL('/tmp/x y#z').href);
console.log(url.fileURLToPath(new URL('file:///etc/hosts')));
try { url.fileURLToPath('http://x/') } catch (e) { console.log(e.code) }
console.log(typeof require('tty').isatty, require('tty').isatty(99));
const { performance } = require('perf_hooks');
const t = performance.now(); console.log(typeof t, t >= 0, typeof globalThis.performance.now(), performance.timeOrigin > 0);
const { createRequire } = require('module');
const r = createRequire(process.cwd() + '/x.js'); console.log(r('path') === require('path'), typeof require('module').builtinModules);
console.log(btoa('hello'), atob('aGVsbG8='));
