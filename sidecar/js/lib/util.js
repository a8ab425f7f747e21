// node:util: format, inspect (Node's layout rules), promisify, and the
// small helpers scripts reach for.
const kCustom = Symbol.for('nodejs.util.inspect.custom');
const kPromisify = Symbol.for('nodejs.util.promisify.custom');
const identRe = /^[a-zA-Z_$][a-zA-Z_0-9$]*$/;

function quote(s) {
  let q = "'";
  if (s.includes("'")) {
    if (!s.includes('"')) q = '"';
    else if (!s.includes('`') && !s.includes('${')) q = '`';
  }
  let out = '';
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (ch === q || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).toUpperCase().padStart(2, '0');
    else out += ch;
  }
  return q + out + q;
}

function fnName(f) {
  const src = Function.prototype.toString.call(f);
  if (src.startsWith('class')) return `[class ${f.name || '(anonymous)'}]`;
  const kind = f.constructor && f.constructor.name === 'AsyncFunction' ? 'AsyncFunction'
    : f.constructor && f.constructor.name === 'GeneratorFunction' ? 'GeneratorFunction' : 'Function';
  return f.name ? `[${kind}: ${f.name}]` : `[${kind} (anonymous)]`;
}

function formatPrimitive(v, ctx) {
  switch (typeof v) {
    case 'string': return quote(v);
    case 'number': return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint': return `${v}n`;
    case 'boolean': return String(v);
    case 'undefined': return 'undefined';
    case 'symbol': return v.toString();
  }
  return 'null';
}

function isBelowBreakLength(ctx, output, start, base) {
  let total = output.length + start;
  if (total + output.length > ctx.breakLength) return false;
  for (const o of output) {
    total += o.length;
    if (total > ctx.breakLength) return false;
  }
  return base === '' || !base.includes('\n');
}

function groupArrayElements(ctx, output, value) {
  let totalLength = 0, maxLength = 0;
  let outputLength = output.length;
  if (ctx.extraItems) outputLength--;
  const sep = 2;
  const dataLen = new Array(outputLength);
  for (let i = 0; i < outputLength; i++) {
    const len = output[i].length;
    dataLen[i] = len;
    totalLength += len + sep;
    if (maxLength < len) maxLength = len;
  }
  const actualMax = maxLength + sep;
  if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength &&
      (totalLength / actualMax > 5 || maxLength <= 6)) {
    const averageBias = Math.sqrt(actualMax - totalLength / output.length);
    const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
    const columns = Math.min(
      Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
      Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
      ctx.compact * 4, 15);
    if (columns <= 1) return output;
    const tmp = [], maxLineLength = [];
    for (let i = 0; i < columns; i++) {
      let lineLength = 0;
      for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
      maxLineLength.push(lineLength + sep);
    }
    let padStart = true;
    if (value !== undefined) {
      for (let i = 0; i < output.length; i++) {
        if (typeof value[i] !== 'number' && typeof value[i] !== 'bigint') { padStart = false; break; }
      }
    }
    for (let i = 0; i < outputLength; i += columns) {
      const max = Math.min(i + columns, outputLength);
      let str = '', j = i;
      for (; j < max - 1; j++) {
        const s = `${output[j]}, `;
        str += padStart ? s.padStart(maxLineLength[j - i], ' ') : s.padEnd(maxLineLength[j - i], ' ');
      }
      str += padStart ? output[j].padStart(maxLineLength[j - i] - sep, ' ') : output[j];
      tmp.push(str);
    }
    if (ctx.extraItems) tmp.push(output[outputLength]);
    output = tmp;
  }
  return output;
}

function reduceToSingleString(ctx, output, base, braces, isArray, recurseTimes, value) {
  const entries = output.length;
  if (isArray && entries > 6) output = groupArrayElements(ctx, output, value);
  if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
    const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
    if (isBelowBreakLength(ctx, output, start, base)) {
      const joined = output.join(', ');
      if (!joined.includes('\n')) return `${base ? `${base} ` : ''}${braces[0]} ${joined} ${braces[1]}`;
    }
  }
  const ind = `\n${' '.repeat(ctx.indentationLvl)}`;
  return `${base ? `${base} ` : ''}${braces[0]}${ind}  ${output.join(`,${ind}  `)}${ind}${braces[1]}`;
}

function formatKey(k) {
  if (typeof k === 'symbol') return `[${k.toString()}]`;
  return identRe.test(k) ? k : quote(k);
}

function formatProperty(ctx, obj, key, recurseTimes, arrayItem) {
  const desc = Object.getOwnPropertyDescriptor(obj, key) || { value: obj[key], enumerable: true };
  let str;
  if (desc.value !== undefined || !('get' in desc || 'set' in desc)) {
    ctx.indentationLvl += arrayItem ? 2 : 2;
    str = formatValue(ctx, desc.value, recurseTimes);
    ctx.indentationLvl -= 2;
  } else if (desc.get) {
    str = desc.set ? '[Getter/Setter]' : '[Getter]';
  } else {
    str = desc.set ? '[Setter]' : 'undefined';
  }
  if (arrayItem) return str;
  return desc.enumerable === false ? `[${String(key)}]: ${str}` : `${formatKey(key)}: ${str}`;
}

function ctorName(o) {
  let p = o;
  while (p) {
    const d = Object.getOwnPropertyDescriptor(p, 'constructor');
    if (d && typeof d.value === 'function' && d.value.name !== '') return d.value.name;
    p = Object.getPrototypeOf(p);
  }
  return null;
}

function isError(v) {
  return v instanceof Error || Object.prototype.toString.call(v) === '[object Error]';
}

function formatValue(ctx, v, recurseTimes, typedArray) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return formatPrimitive(v, ctx);
  if (ctx.customInspect !== false && typeof v[kCustom] === 'function' && v[kCustom] !== inspect) {
    const r = v[kCustom](ctx.depth - recurseTimes, ctx, inspect);
    if (r !== v) return typeof r === 'string' ? r : formatValue(ctx, r, recurseTimes);
  }
  if (ctx.seen.includes(v)) {
    let idx = ctx.circular.get(v);
    if (idx === undefined) { idx = ctx.circular.size + 1; ctx.circular.set(v, idx); }
    return `[Circular *${idx}]`;
  }
  return formatRaw(ctx, v, recurseTimes);
}

function formatRaw(ctx, v, recurseTimes) {
  let keys = Object.keys(v);
  if (ctx.showHidden) keys = Object.getOwnPropertyNames(v);
  const syms = Object.getOwnPropertySymbols(v).filter((s) => Object.prototype.propertyIsEnumerable.call(v, s));
  const ctor = ctorName(v);
  let braces, base = '', isArray = false, formatter = null, noEntries = false;
  const prefix = (fallback, size) => {
    const sz = size !== undefined ? `(${size})` : '';
    if (ctor === null) return `[${fallback}${sz}: null prototype] `;
    if (ctor !== fallback) return `${ctor}${sz} [${fallback}] `;
    return `${fallback}${sz} `;
  };
  if (Array.isArray(v)) {
    isArray = true;
    keys = keys.filter((k) => !(String(k >>> 0) === k && (k >>> 0) < 4294967295));
    braces = [ctor === 'Array' ? '[' : `${prefix('Array', v.length)}[`, ']'];
    if (v.length === 0 && keys.length === 0 && syms.length === 0) return `${braces[0]}]`;
    formatter = formatArray;
  } else if (v instanceof Map) {
    braces = [`${prefix('Map', v.size)}{`, '}'];
    if (v.size === 0 && keys.length === 0) return `${braces[0]}}`;
    formatter = (ctx, v, rt) => { const out = []; for (const [k, val] of v) { ctx.indentationLvl += 2; out.push(`${formatValue(ctx, k, rt)} => ${formatValue(ctx, val, rt)}`); ctx.indentationLvl -= 2; } return out; };
  } else if (v instanceof Set) {
    braces = [`${prefix('Set', v.size)}{`, '}'];
    if (v.size === 0 && keys.length === 0) return `${braces[0]}}`;
    isArray = true;
    formatter = (ctx, v, rt) => { const out = []; ctx.indentationLvl += 2; for (const val of v) out.push(formatValue(ctx, val, rt)); ctx.indentationLvl -= 2; return out; };
  } else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const isBuffer = typeof Buffer === 'function' && v instanceof Buffer;
    const name = isBuffer ? 'Buffer' : ctor || 'TypedArray';
    if (isBuffer) {
      const hex = [];
      for (let i = 0; i < Math.min(v.length, 50); i++) hex.push(v[i].toString(16).padStart(2, '0'));
      let s = `<${name} ${hex.join(' ')}`.trimEnd();
      if (v.length > 50) s += ` ... ${v.length - 50} more bytes`;
      return s + '>';
    }
    isArray = true;
    braces = [`${name}(${v.length}) [`, ']'];
    if (v.length === 0) return `${braces[0]}]`;
    formatter = (ctx, v) => Array.from(v.subarray(0, 100), (x) => formatPrimitive(typeof x === 'bigint' ? x : Number(x)));
    keys = [];
  } else if (typeof v === 'function') {
    base = fnName(v);
    keys = keys.filter((k) => k !== 'prototype');
    if (keys.length === 0 && syms.length === 0) return base;
    braces = ['{', '}'];
  } else if (v instanceof RegExp) {
    base = RegExp.prototype.toString.call(v);
    if (keys.length === 0) return base;
    braces = ['{', '}'];
  } else if (v instanceof Date) {
    base = isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
    if (keys.length === 0) return base;
    braces = ['{', '}'];
  } else if (isError(v)) {
    base = formatError(v);
    keys = keys.filter((k) => k !== 'stack' && k !== 'message');
    if (keys.length === 0 && syms.length === 0) return base;
    braces = ['{', '}'];
  } else if (v instanceof Promise) {
    braces = ['Promise {', '}'];
    const st = __promiseState(v);
    formatter = (ctx, v, rt) => st.state === 'pending' ? ['<pending>'] : [(st.state === 'rejected' ? '<rejected> ' : '') + formatValue(ctx, st.value, rt)];
  } else if (v instanceof WeakMap || v instanceof WeakSet) {
    return `${ctor} { <items unknown> }`;
  } else if (typeof v === 'object' && Object.prototype.toString.call(v) === '[object Arguments]') {
    isArray = true;
    braces = ['[Arguments] [', ']'];
    formatter = formatArray;
  } else if (v instanceof Boolean || v instanceof Number || v instanceof String) {
    const t = v instanceof Boolean ? 'Boolean' : v instanceof Number ? 'Number' : 'String';
    base = `[${t}: ${formatPrimitive(v.valueOf())}]`;
    if (t === 'String') keys = keys.filter((k) => !(String(k >>> 0) === k));
    if (keys.length === 0) return base;
    braces = ['{', '}'];
  } else {
    const tag = v[Symbol.toStringTag];
    if (ctor === 'Object') {
      braces = [tag ? `Object [${tag}] {` : '{', '}'];
    } else if (ctor === null) {
      braces = ['[Object: null prototype] {', '}'];
    } else {
      braces = [`${ctor}${tag && tag !== ctor ? ` [${tag}]` : ''} {`, '}'];
    }
    if (keys.length === 0 && syms.length === 0) {
      return ctor === 'Object' && !tag ? '{}' : `${braces[0]}}`;
    }
  }
  if (recurseTimes > ctx.depth && ctx.depth !== null) {
    const name = Array.isArray(v) ? 'Array' : (ctor || 'Object');
    return `[${name}]`;
  }
  recurseTimes++;
  ctx.seen.push(v);
  ctx.currentDepth = recurseTimes;
  let output;
  try {
    output = formatter ? formatter(ctx, v, recurseTimes) : [];
    for (const k of keys) output.push(formatProperty(ctx, v, k, recurseTimes, false));
    for (const s of syms) output.push(formatProperty(ctx, v, s, recurseTimes, false));
  } finally {
    ctx.seen.pop();
  }
  if (ctx.circular.has(v)) {
    const ref = `<ref *${ctx.circular.get(v)}>`;
    if (base === '') braces[0] = `${ref} ${braces[0]}`; else base = `${ref} ${base}`;
  }
  const res = reduceToSingleString(ctx, output, base, braces, isArray, recurseTimes, isArray ? v : undefined);
  return res;
}

function formatArray(ctx, v, recurseTimes) {
  const out = [];
  const len = v.length;
  const max = Math.min(100, len);
  let holes = 0;
  for (let i = 0; i < len && out.length < max; i++) {
    if (!Object.prototype.hasOwnProperty.call(v, i)) { holes++; continue; }
    if (holes) { out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`); holes = 0; }
    out.push(formatProperty(ctx, v, String(i), recurseTimes, true));
  }
  if (holes) out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`);
  if (len > max) { out.push(`... ${len - max} more item${len - max > 1 ? 's' : ''}`); ctx.extraItems = true; } else ctx.extraItems = false;
  return out;
}

function formatError(e) {
  let stack = typeof e.stack === 'string' && e.stack ? e.stack : Error.prototype.toString.call(e);
  const name = e.name || 'Error';
  if (e.message === '' && stack.startsWith(name + '\n')) stack = stack;
  if (!stack.includes('\n    at') && stack.indexOf('\n') < 0) return `[${stack}]`;
  return stack;
}

function inspect(v, opts) {
  const ctx = {
    depth: 2, compact: 3, breakLength: 80, indentationLvl: 0, currentDepth: 0,
    seen: [], circular: new Map(), showHidden: false, customInspect: true, extraItems: false,
  };
  if (opts && typeof opts === 'object') Object.assign(ctx, opts);
  if (ctx.depth === Infinity) ctx.depth = null;
  if (ctx.breakLength === Infinity) ctx.breakLength = 1e9;
  return formatValue(ctx, v, 0);
}
inspect.custom = kCustom;
inspect.defaultOptions = { depth: 2 };

function format(...args) { return formatWithOptions({}, ...args); }

function formatWithOptions(opts, ...args) {
  const first = args[0];
  let a = 0, str = '';
  if (typeof first === 'string') {
    if (args.length === 1) return first;
    let last = 0;
    a = 1;
    for (let i = 0; i < first.length - 1; i++) {
      if (first.charCodeAt(i) !== 37) continue; // '%'
      const c = first[i + 1];
      if (c === '%') { str += first.slice(last, i) + '%'; last = i + 2; i++; continue; }
      if (a >= args.length) continue;
      let rep;
      const arg = args[a];
      switch (c) {
        case 's':
          if (typeof arg === 'bigint') rep = `${arg}n`;
          else if (typeof arg === 'object' && arg !== null) rep = inspect(arg, { ...opts, depth: 0 });
          else if (typeof arg === 'number' && Object.is(arg, -0)) rep = '-0';
          else rep = String(arg);
          break;
        case 'd': rep = typeof arg === 'bigint' ? `${arg}n` : typeof arg === 'object' && arg !== null ? 'NaN' : formatPrimitive(Number(arg)); break;
        case 'i': rep = typeof arg === 'bigint' ? `${arg}n` : String(parseInt(arg)); break;
        case 'f': rep = String(parseFloat(arg)); break;
        case 'j': try { rep = JSON.stringify(arg); } catch { rep = '[Circular]'; } break;
        case 'o': rep = inspect(arg, { ...opts, showHidden: true, depth: 4 }); break;
        case 'O': rep = inspect(arg, opts); break;
        case 'c': rep = ''; break;
        default: continue;
      }
      str += first.slice(last, i) + rep;
      last = i + 2;
      i++;
      a++;
    }
    str += first.slice(last);
  }
  for (; a < args.length; a++) {
    const v = args[a];
    if (str !== '' || a > 0) str += ' ';
    str += typeof v === 'string' ? v : inspect(v, opts);
  }
  return str;
}

function promisify(fn) {
  if (typeof fn !== 'function') throw __typeError('ERR_INVALID_ARG_TYPE', 'The "original" argument must be of type function');
  if (fn[kPromisify]) return fn[kPromisify];
  return function (...args) {
    return new Promise((resolve, reject) => {
      fn.call(this, ...args, (err, ...values) => (err ? reject(err) : resolve(values.length > 1 ? values : values[0])));
    });
  };
}
promisify.custom = kPromisify;

function callbackify(fn) {
  return function (...args) {
    const cb = args.pop();
    fn.apply(this, args).then((v) => cb(null, v), (e) => cb(e));
  };
}

function inherits(ctor, superCtor) {
  Object.defineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
  Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
}

function isDeepStrictEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Map || a instanceof Set) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a.entries()) if (!b.has(k) || (a instanceof Map && !isDeepStrictEqual(v, b.get(k)))) return false;
    return true;
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isDeepStrictEqual(a[k], b[k]));
}

const types = {
  isPromise: (v) => v instanceof Promise,
  isDate: (v) => v instanceof Date,
  isRegExp: (v) => v instanceof RegExp,
  isMap: (v) => v instanceof Map,
  isSet: (v) => v instanceof Set,
  isNativeError: isError,
  isUint8Array: (v) => v instanceof Uint8Array,
  isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView),
  isAsyncFunction: (v) => typeof v === 'function' && v.constructor && v.constructor.name === 'AsyncFunction',
};

// parseArgs as Node's: long and short options (grouped -abc, -ofile,
// --name=value), '--' ending options, defaults and multiple values; strict
// mode throws on unknown options and misused types.
const argError = (code, msg) => { const e = new TypeError(msg); e.code = code; return e; };
function parseArgs(config = {}) {
  const { args = process.argv.slice(2), options = {}, strict = true, tokens: wantTokens = false } = config;
  const allowPositionals = config.allowPositionals ?? !strict;
  const values = { __proto__: null }, positionals = [], tokens = [];
  const byShort = {};
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== 'string' && o.type !== 'boolean') throw argError('ERR_INVALID_ARG_VALUE', `The property 'options.${name}.type' must be one of: 'string', 'boolean'. Received ${inspect(o.type)}`);
    if (o.short !== undefined) byShort[o.short] = name;
  }
  const store = (name, value, raw, index, inline) => {
    const o = options[name];
    if (strict) {
      if (!o) throw argError('ERR_PARSE_ARGS_UNKNOWN_OPTION', `Unknown option '${raw}'${allowPositionals ? `. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- ${JSON.stringify(raw)}` : ''}`);
      if (o.type === 'string' && typeof value !== 'string') throw argError('ERR_PARSE_ARGS_INVALID_OPTION_VALUE', `Option '${o.short ? `-${o.short}, ` : ''}--${name} <value>' argument missing`);
      if (o.type === 'boolean' && inline) throw argError('ERR_PARSE_ARGS_INVALID_OPTION_VALUE', `Option '${o.short ? `-${o.short}, ` : ''}--${name}' does not take an argument`);
    }
    const v = value === undefined ? true : value;
    if (o && o.multiple) (values[name] ||= []).push(v);
    else values[name] = v;
    tokens.push({ kind: 'option', name, rawName: raw, index, value, inlineValue: value === undefined ? undefined : inline });
  };
  const takesValue = (name) => options[name] && options[name].type === 'string';
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      tokens.push({ kind: 'option-terminator', index: i });
      for (const p of args.slice(i + 1)) { positionals.push(p); tokens.push({ kind: 'positional', index: ++i, value: p }); }
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      if (eq >= 0) store(name, a.slice(eq + 1), `--${name}`, i, true);
      else if (takesValue(name) && i + 1 < args.length) store(name, args[++i], a, i - 1, false);
      else store(name, undefined, a, i, false);
      continue;
    }
    if (a.startsWith('-') && a !== '-') {
      for (let j = 1; j < a.length; j++) {
        const name = byShort[a[j]] ?? a[j];
        if (takesValue(name)) {
          if (j + 1 < a.length) store(name, a.slice(j + 1), `-${a[j]}`, i, true);
          else if (i + 1 < args.length) store(name, args[++i], `-${a[j]}`, i - 1, false);
          else store(name, undefined, `-${a[j]}`, i, false);
          break;
        }
        store(name, undefined, `-${a[j]}`, i, false);
      }
      continue;
    }
    if (strict && !allowPositionals) throw argError('ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL', `Unexpected argument '${a}'. This command does not take positional arguments`);
    positionals.push(a);
    tokens.push({ kind: 'positional', index: i, value: a });
  }
  for (const [name, o] of Object.entries(options)) {
    if (o.default !== undefined && values[name] === undefined) values[name] = o.default;
  }
  return wantTokens ? { values, positionals, tokens } : { values, positionals };
}

module.exports = {
  parseArgs,
  format, formatWithOptions, inspect, promisify, callbackify, inherits, isDeepStrictEqual, types,
  TextEncoder: globalThis.TextEncoder, TextDecoder: globalThis.TextDecoder,
  isArray: Array.isArray,
  deprecate: (fn) => fn,
  debuglog: () => () => {},
};
