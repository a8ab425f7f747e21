// node:module: createRequire and the list of built-in modules.
const path = require('path');
function createRequire(filename) {
  let f = filename;
  if (f && typeof f === 'object' && typeof f.href === 'string') f = f.href;
  if (typeof f === 'string' && f.startsWith('file:')) f = require('url').fileURLToPath(f);
  if (typeof f !== 'string' || !path.isAbsolute(f)) {
    const e = new TypeError(`The argument 'filename' must be a file URL object, file URL string, or absolute path string. Received ${require('util').inspect(filename)}`);
    e.code = 'ERR_INVALID_ARG_VALUE';
    throw e;
  }
  return native.requireFrom(f.endsWith('/') ? path.join(f, 'noop.js') : f);
}
const builtinModules = native.builtinModules();
module.exports = { createRequire, builtinModules, isBuiltin: (n) => builtinModules.includes(String(n).replace(/^node:/, '')) };
