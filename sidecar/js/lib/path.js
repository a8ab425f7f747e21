// node:path, POSIX flavour.
function assertPath(p, name = 'path') {
  if (typeof p !== 'string') throw __typeError('ERR_INVALID_ARG_TYPE', `The "${name}" argument must be of type string. Received ${__describe(p)}`);
}

function normalizeString(p, allowAboveRoot) {
  const out = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else if (allowAboveRoot) out.push('..');
    } else out.push(seg);
  }
  return out.join('/');
}

const posix = {
  sep: '/',
  delimiter: ':',
  resolve(...args) {
    let resolved = '', abs = false;
    for (let i = args.length - 1; i >= -1 && !abs; i--) {
      const p = i >= 0 ? args[i] : process.cwd();
      assertPath(p, `paths[${i}]`);
      if (p === '') continue;
      resolved = `${p}/${resolved}`;
      abs = p[0] === '/';
    }
    resolved = normalizeString(resolved, !abs);
    if (abs) return `/${resolved}`;
    return resolved.length > 0 ? resolved : '.';
  },
  normalize(p) {
    assertPath(p);
    if (p === '') return '.';
    const abs = p[0] === '/';
    const trailing = p[p.length - 1] === '/';
    let out = normalizeString(p, !abs);
    if (out === '' ) { if (abs) return '/'; return trailing ? './' : '.'; }
    if (trailing) out += '/';
    return abs ? `/${out}` : out;
  },
  isAbsolute(p) { assertPath(p); return p.length > 0 && p[0] === '/'; },
  join(...args) {
    if (args.length === 0) return '.';
    for (const a of args) assertPath(a);
    const joined = args.filter((a) => a.length > 0).join('/');
    return joined === '' ? '.' : posix.normalize(joined);
  },
  relative(from, to) {
    assertPath(from, 'from'); assertPath(to, 'to');
    if (from === to) return '';
    from = posix.resolve(from); to = posix.resolve(to);
    if (from === to) return '';
    const f = from === '/' ? [] : from.slice(1).split('/');
    const t = to === '/' ? [] : to.slice(1).split('/');
    let i = 0;
    while (i < f.length && i < t.length && f[i] === t[i]) i++;
    return [...Array(f.length - i).fill('..'), ...t.slice(i)].join('/');
  },
  toNamespacedPath(p) { return p; },
  dirname(p) {
    assertPath(p);
    if (p.length === 0) return '.';
    const hasRoot = p[0] === '/';
    let end = -1, matched = true;
    for (let i = p.length - 1; i >= 1; --i) {
      if (p[i] === '/') { if (!matched) { end = i; break; } } else matched = false;
    }
    if (end === -1) return hasRoot ? '/' : '.';
    if (hasRoot && end === 1) return '//';
    return p.slice(0, end);
  },
  basename(p, suffix) {
    assertPath(p);
    if (suffix !== undefined) assertPath(suffix, 'suffix');
    let end = p.length;
    while (end > 0 && p[end - 1] === '/') end--;
    if (end === 0) return '';
    let start = p.lastIndexOf('/', end - 1) + 1;
    let base = p.slice(start, end);
    if (suffix !== undefined && suffix !== base && base.endsWith(suffix)) base = base.slice(0, base.length - suffix.length);
    return base;
  },
  extname(p) {
    assertPath(p);
    const base = posix.basename(p);
    const dot = base.lastIndexOf('.');
    if (dot <= 0) return '';
    if (p.endsWith('/') && false) return '';
    return base.slice(dot);
  },
  format(o) {
    const dir = o.dir || o.root;
    const base = o.base || `${o.name || ''}${o.ext ? (o.ext[0] === '.' ? '' : '.') + o.ext : ''}`;
    if (!dir) return base;
    return dir === o.root ? `${dir}${base}` : `${dir}/${base}`;
  },
  parse(p) {
    assertPath(p);
    const ret = { root: '', dir: '', base: '', ext: '', name: '' };
    if (p.length === 0) return ret;
    if (p[0] === '/') ret.root = '/';
    let trimmed = p;
    while (trimmed.length > 1 && trimmed.endsWith('/')) trimmed = trimmed.slice(0, -1);
    ret.base = posix.basename(trimmed);
    ret.ext = posix.extname(ret.base);
    ret.name = ret.ext ? ret.base.slice(0, -ret.ext.length) : ret.base;
    const d = posix.dirname(trimmed);
    ret.dir = d === '.' && !trimmed.includes('/') ? '' : d;
    if (trimmed === '/') { ret.base = ''; ret.name = ''; ret.dir = '/'; }
    return ret;
  },
  matchesGlob: undefined,
};
posix.posix = posix;
posix.win32 = posix;
delete posix.matchesGlob;
module.exports = posix;
