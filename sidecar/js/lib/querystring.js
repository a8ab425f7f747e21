// node:querystring.
const escape = (s) => encodeURIComponent(s);
function unescape(s) {
  try { return decodeURIComponent(s); } catch { return s; }
}
const value = (v) => {
  switch (typeof v) {
    case 'string': return v;
    case 'number': return Number.isFinite(v) ? String(v) : '';
    case 'bigint': case 'boolean': return String(v);
    default: return '';
  }
};
function stringify(obj, sep = '&', eq = '=', o = {}) {
  const enc = o.encodeURIComponent || escape;
  if (obj === null || typeof obj !== 'object') return '';
  const out = [];
  for (const k of Object.keys(obj)) {
    const ks = enc(value(k)) + eq;
    const v = obj[k];
    if (Array.isArray(v)) for (const x of v) out.push(ks + enc(value(x)));
    else out.push(ks + enc(value(v)));
  }
  return out.join(sep);
}
function parse(str, sep = '&', eq = '=', o = {}) {
  const out = Object.create(null);
  if (typeof str !== 'string' || str === '') return out;
  const dec = o.decodeURIComponent || unescape;
  const max = o.maxKeys === undefined ? 1000 : o.maxKeys;
  let parts = str.split(sep);
  if (max > 0) parts = parts.slice(0, max);
  for (const part of parts) {
    if (part === '') continue;
    const i = part.indexOf(eq);
    const k = dec((i >= 0 ? part.slice(0, i) : part).replace(/\+/g, ' '));
    const v = i >= 0 ? dec(part.slice(i + eq.length).replace(/\+/g, ' ')) : '';
    if (!(k in out)) out[k] = v;
    else if (Array.isArray(out[k])) out[k].push(v);
    else out[k] = [out[k], v];
  }
  return out;
}
module.exports = { stringify, parse, escape, unescape, encode: stringify, decode: parse };
