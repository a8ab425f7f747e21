// node:url: URL and URLSearchParams (goja_nodejs), with the file: URL
// helpers and the legacy parse/format/resolve from Node.
const base = native.urlBase();
const path = require('path');
const err = (Ctor, code, msg) => { const e = new Ctor(msg); e.code = code; return e; };

function fileURLToPath(u) {
  if (typeof u === 'string') u = new base.URL(u);
  else if (!u || typeof u.protocol !== 'string') {
    throw err(TypeError, 'ERR_INVALID_ARG_TYPE', `The "path" argument must be of type string or an instance of URL. Received ${__describe(u)}`);
  }
  if (u.protocol !== 'file:') throw err(TypeError, 'ERR_INVALID_URL_SCHEME', 'The URL must be of scheme file');
  if (u.hostname !== '' && u.hostname !== 'localhost') throw err(TypeError, 'ERR_INVALID_FILE_URL_HOST', 'File URL host must be "localhost" or empty on linux');
  const p = u.pathname;
  if (/%2f/i.test(p)) throw err(TypeError, 'ERR_INVALID_FILE_URL_PATH', 'File URL path must not include encoded / characters');
  return decodeURIComponent(p);
}

// The WHATWG path percent-encode set, and '%' itself, as Node encodes it.
function pathToFileURL(p) {
  let abs = path.resolve(String(p));
  if (String(p).endsWith('/') && !abs.endsWith('/')) abs += '/';
  let out = '';
  for (const ch of abs) {
    const cp = ch.codePointAt(0);
    if (cp <= 0x20 || cp >= 0x7f || '"#%<>?`{}\\^|'.includes(ch) || ch === '\t') out += encodeURIComponent(ch);
    else out += ch;
  }
  return new base.URL(`file://${out}`);
}

module.exports = { ...base, fileURLToPath, pathToFileURL, urlToHttpOptions: (u) => ({ protocol: u.protocol, hostname: u.hostname, hash: u.hash, search: u.search, pathname: u.pathname, path: `${u.pathname}${u.search}`, href: u.href, port: u.port ? Number(u.port) : undefined }) };
