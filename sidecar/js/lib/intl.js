// Intl for en-US, with the answers Node 20's ICU gives (its data through
// intl_tables.go; time zones from Go's database, collation from x/text).
// Whatever is not here (another locale, an option or a combination of
// fields this file does not format) throws ERR_SQLFS_UNSUPPORTED rather
// than answer otherwise than Node.
const n = native.intl;
const unsupported = (what) => { throw native.unsupported(`Intl: ${what}`); };
const NBSP = '\u00a0', NNBSP = '\u202f';

function canonicalLocale(tag) {
  if (typeof tag !== 'string' && !(tag && typeof tag === 'object')) throw new TypeError('Language ID should be string or object.');
  const s = String(tag);
  if (!/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(s)) throw new RangeError(`Incorrect locale information provided`);
  const parts = s.split('-');
  return parts.map((p, i) => {
    if (i === 0) return p.toLowerCase();
    if (p.length === 2 && i === 1) return p.toUpperCase();
    if (p.length === 4 && i === 1) return p[0].toUpperCase() + p.slice(1).toLowerCase();
    return p.toLowerCase();
  }).join('-');
}

function getCanonicalLocales(locales) {
  if (locales === undefined) return [];
  const list = typeof locales === 'string' || (locales && !Array.isArray(locales) && typeof locales !== 'object') ? [locales] : Array.from(locales);
  const out = [];
  for (const l of list) {
    const c = canonicalLocale(l);
    if (!out.includes(c)) out.push(c);
  }
  return out;
}

// resolveLocale is en-US (or en, as asked): the only locale formatted here.
function resolveLocale(locales) {
  const list = getCanonicalLocales(locales);
  if (list.length === 0 || list[0] === 'en-US' || list[0] === 'en') return list[0] || 'en-US';
  return unsupported(`the locale ${list[0]} (the js backend formats en-US only)`);
}

const supportedLocalesOf = (locales) => getCanonicalLocales(locales).filter((l) => l === 'en' || l === 'en-US');

// optionsOf reads the options of the constructor named where.
const optionsOf = (where) => (opts, name, allowed, fallback) => {
  let v = opts[name];
  if (v === undefined) return fallback;
  v = typeof fallback === 'boolean' ? Boolean(v) : String(v);
  if (allowed && !allowed.includes(v)) throw new RangeError(`Value ${v} out of range for ${where} options property ${name}`);
  return v;
};

function digitOption(opts, name, min, max, fallback) {
  const v = opts[name];
  if (v === undefined) return fallback;
  const x = Number(v);
  if (!(x >= min && x <= max)) throw new RangeError(`${name} value is out of range.`);
  return Math.floor(x);
}

function toOptions(options) {
  if (options === undefined) return Object.create(null);
  if (options === null) throw new TypeError('Cannot convert undefined or null to object');
  return Object(options);
}

// ---- numbers ----

// A decimal is its digits (no leading or trailing zeros, "" for zero) and
// an exponent: the value is 0.DIGITS × 10^exp.
function decimalOf(x) {
  if (typeof x === 'bigint') {
    const s = (x < 0n ? -x : x).toString().replace(/0+$/, '');
    return { digits: s === '' ? '' : s, exp: (x < 0n ? -x : x).toString().length };
  }
  const [d, e] = n.digits(Math.abs(x));
  return d === '0' ? { digits: '', exp: 1 } : { digits: d.replace(/0+$/, ''), exp: e };
}

// roundAt keeps the digits down to 10^-pos (pos fraction digits), rounding by
// mode; the sign matters for the directed modes.
function roundAt(dec, pos, mode, negative) {
  const keep = dec.exp + pos;
  if (keep >= dec.digits.length) return dec;
  let kept = keep > 0 ? dec.digits.slice(0, keep) : '';
  const rest = keep >= 0 ? dec.digits.slice(keep) : '0'.repeat(-keep) + dec.digits;
  const first = rest.charCodeAt(0) - 48;
  const tail = /[1-9]/.test(rest.slice(1));
  const lastOdd = kept !== '' && (kept.charCodeAt(kept.length - 1) - 48) % 2 === 1;
  let up;
  switch (mode) {
    case 'ceil': up = !negative; break;
    case 'floor': up = negative; break;
    case 'expand': up = true; break;
    case 'trunc': up = false; break;
    case 'halfCeil': up = first > 5 || (first === 5 && (tail || !negative)); break;
    case 'halfFloor': up = first > 5 || (first === 5 && (tail || negative)); break;
    case 'halfTrunc': up = first > 5 || (first === 5 && tail); break;
    case 'halfEven': up = first > 5 || (first === 5 && (tail || lastOdd)); break;
    default: up = first >= 5;
  }
  if (rest.replace(/0/g, '') === '') up = false;
  let exp = dec.exp;
  if (keep < 0) { kept = ''; exp = -pos; }
  if (up) {
    const ds = kept.split('').map(Number);
    let i = ds.length - 1;
    while (i >= 0 && ds[i] === 9) { ds[i] = 0; i--; }
    if (i < 0) { ds.unshift(1); exp = (keep <= 0 ? -pos : exp) + 1; } else ds[i]++;
    kept = ds.join('');
  }
  kept = kept.replace(/0+$/, '');
  return { digits: kept, exp: kept === '' ? 1 : exp };
}

// The number of significant digits a rounded decimal shows: the digits
// down to 10^-fraction.
const integerDigits = (dec) => (dec.digits === '' ? 1 : Math.max(dec.exp, 1));

// digitsText is a decimal with minInt integer digits and between minFrac
// and the decimal's own fraction digits: [integer, fraction].
function digitsText(dec, minInt, minFrac) {
  let int, frac;
  if (dec.digits === '') { int = '0'; frac = ''; } else if (dec.exp <= 0) {
    int = '0'; frac = '0'.repeat(-dec.exp) + dec.digits;
  } else {
    int = dec.digits.slice(0, dec.exp).padEnd(dec.exp, '0');
    frac = dec.digits.slice(dec.exp);
  }
  return [int.padStart(minInt, '0'), frac.padEnd(minFrac, '0')];
}

const currencyOf = (code) => {
  const c = n.currency(code);
  if (!c) return unsupported(`the currency ${code}`);
  return { symbol: c[0], narrow: c[1], digits: c[2], one: c[3], other: c[4] };
};

const option = optionsOf('Intl.NumberFormat');

const compactNames = [[3, 'K', ' thousand'], [6, 'M', ' million'], [9, 'B', ' billion'], [12, 'T', ' trillion']];

class NumberFormat {
  constructor(locales, options) {
    const locale = resolveLocale(locales);
    const o = toOptions(options);
    const r = { locale, numberingSystem: 'latn' };
    if (o.numberingSystem !== undefined && o.numberingSystem !== 'latn') unsupported(`numberingSystem ${o.numberingSystem}`);
    r.style = option(o, 'style', ['decimal', 'percent', 'currency', 'unit'], 'decimal');
    let currency = o.currency;
    if (currency !== undefined) {
      currency = String(currency);
      if (!/^[A-Za-z]{3}$/.test(currency)) throw new RangeError(`Invalid currency code : ${currency}`);
      currency = currency.toUpperCase();
    }
    const currencyDisplay = option(o, 'currencyDisplay', ['code', 'symbol', 'narrowSymbol', 'name'], 'symbol');
    const currencySign = option(o, 'currencySign', ['standard', 'accounting'], 'standard');
    const unit = o.unit === undefined ? undefined : String(o.unit);
    const unitDisplay = option(o, 'unitDisplay', ['short', 'narrow', 'long'], 'short');
    if (r.style === 'currency') {
      if (currency === undefined) throw new TypeError('Currency code is required with currency style.');
      Object.assign(r, { currency, currencyDisplay, currencySign });
      this.cur = currencyOf(currency);
    }
    if (r.style === 'unit') {
      if (unit === undefined) throw new TypeError('Unit is required with unit style.');
      this.unit = n.unit(unit);
      if (!this.unit) unsupported(`the unit ${unit}`);
      Object.assign(r, { unit, unitDisplay });
    }
    const notation = option(o, 'notation', ['standard', 'scientific', 'engineering', 'compact'], 'standard');
    r.minimumIntegerDigits = digitOption(o, 'minimumIntegerDigits', 1, 21, 1);
    const curDigits = r.style === 'currency' ? this.cur.digits : undefined;
    const mnfdDefault = curDigits ?? 0;
    const mxfdDefault = curDigits ?? (r.style === 'percent' ? 0 : 3);
    const hasSd = o.minimumSignificantDigits !== undefined || o.maximumSignificantDigits !== undefined;
    const hasFd = o.minimumFractionDigits !== undefined || o.maximumFractionDigits !== undefined;
    const priority = option(o, 'roundingPriority', ['auto', 'morePrecision', 'lessPrecision'], 'auto');
    if (priority !== 'auto') unsupported(`roundingPriority ${priority}`);
    if (o.roundingIncrement !== undefined && Number(o.roundingIncrement) !== 1) unsupported('roundingIncrement');
    r.roundingMode = option(o, 'roundingMode', ['ceil', 'floor', 'expand', 'trunc', 'halfCeil', 'halfFloor', 'halfExpand', 'halfTrunc', 'halfEven'], 'halfExpand');
    r.trailingZeroDisplay = option(o, 'trailingZeroDisplay', ['auto', 'stripIfInteger'], 'auto');
    this.compactRounding = notation === 'compact' && !hasSd && !hasFd;
    if (hasSd) {
      r.minimumSignificantDigits = digitOption(o, 'minimumSignificantDigits', 1, 21, 1);
      r.maximumSignificantDigits = digitOption(o, 'maximumSignificantDigits', r.minimumSignificantDigits, 21, 21);
    } else if (hasFd || !this.compactRounding) {
      let mn = digitOption(o, 'minimumFractionDigits', 0, 100, undefined);
      let mx = digitOption(o, 'maximumFractionDigits', 0, 100, undefined);
      if (mn === undefined) mn = Math.min(mnfdDefault, mx ?? mnfdDefault);
      else if (mx === undefined) mx = Math.max(mxfdDefault, mn);
      else if (mn > mx) throw new RangeError('maximumFractionDigits value is out of range.');
      if (mx === undefined) mx = Math.max(mxfdDefault, mn);
      r.minimumFractionDigits = mn;
      r.maximumFractionDigits = mx;
    } else {
      r.minimumFractionDigits = 0;
      r.maximumFractionDigits = 0;
    }
    let grouping = o.useGrouping;
    if (grouping === undefined) grouping = notation === 'compact' ? 'min2' : 'auto';
    else if (grouping === true || grouping === 'true') grouping = 'always';
    else if (grouping === false || grouping === 'false' || grouping === '' || grouping === null || grouping === 0) grouping = false;
    else if (!['min2', 'auto', 'always'].includes(String(grouping))) throw new RangeError(`Value ${grouping} out of range for Intl.NumberFormat options property useGrouping`);
    r.useGrouping = grouping;
    r.notation = notation;
    if (notation === 'compact') r.compactDisplay = option(o, 'compactDisplay', ['short', 'long'], 'short');
    r.signDisplay = option(o, 'signDisplay', ['auto', 'never', 'always', 'exceptZero', 'negative'], 'auto');
    r.roundingIncrement = 1;
    r.roundingPriority = 'auto';
    this.r = r;
  }

  // round gives the decimal as shown (before any scaling by compact).
  round(dec, negative) {
    const r = this.r;
    if (this.compactRounding) {
      if (integerDigits(dec) >= 2 && dec.digits !== '') return roundAt(dec, 0, r.roundingMode, negative);
      return roundAt(dec, 2 - dec.exp, r.roundingMode, negative);
    }
    if (r.maximumSignificantDigits !== undefined) return roundAt(dec, r.maximumSignificantDigits - dec.exp, r.roundingMode, negative);
    return roundAt(dec, r.maximumFractionDigits, r.roundingMode, negative);
  }

  minFraction(dec) {
    const r = this.r;
    if (r.minimumSignificantDigits !== undefined) {
      if (dec.digits === '') return r.minimumSignificantDigits - 1;
      return Math.max(0, r.minimumSignificantDigits - dec.exp);
    }
    if (r.trailingZeroDisplay === 'stripIfInteger' && dec.exp >= dec.digits.length) return 0;
    return r.minimumFractionDigits ?? 0;
  }

  // number gives the parts of a finite magnitude: integer, group,
  // decimal, fraction, and the exponent or compact suffix.
  number(x, negative) {
    const r = this.r;
    let dec = decimalOf(x);
    if (r.style === 'percent') dec = dec.digits === '' ? dec : { digits: dec.digits, exp: dec.exp + 2 };
    const parts = [];
    let suffix = null;
    if (r.notation === 'scientific' || r.notation === 'engineering') {
      let e = dec.digits === '' ? 0 : dec.exp - 1;
      const step = r.notation === 'engineering' ? 3 : 1;
      const scale = (ex) => Math.floor(ex / step) * step;
      let m = this.round({ digits: dec.digits, exp: dec.exp - scale(e) }, negative);
      if (dec.digits !== '' && m.exp - 1 + scale(e) !== scale(e) && integerDigits(m) > step) {
        e = scale(e) + step;
        m = this.round({ digits: dec.digits, exp: dec.exp - e }, negative);
      } else e = scale(e);
      dec = m;
      suffix = e;
    } else if (r.notation === 'compact') {
      const pick = (d) => compactNames.filter(([p]) => d.digits !== '' && d.exp - 1 >= p).pop();
      let c = pick(dec);
      let shown = this.round(c ? { digits: dec.digits, exp: dec.exp - c[0] } : dec, negative);
      const c2 = pick(c ? { digits: shown.digits, exp: shown.exp + c[0] } : shown);
      if (c2 !== c) {
        c = c2;
        shown = this.round({ digits: dec.digits, exp: dec.exp - c[0] }, negative);
      }
      dec = shown;
      suffix = c ? (r.compactDisplay === 'long' ? c[2] : c[1]) : null;
    } else dec = this.round(dec, negative);
    const [int, frac] = digitsText(dec, r.minimumIntegerDigits, this.minFraction(dec));
    const group = r.useGrouping === 'always' || r.useGrouping === 'auto' ? int.length > 3 : r.useGrouping === 'min2' ? int.length > 4 : false;
    if (group) {
      const first = int.length % 3 || 3;
      parts.push({ type: 'integer', value: int.slice(0, first) });
      for (let i = first; i < int.length; i += 3) parts.push({ type: 'group', value: ',' }, { type: 'integer', value: int.slice(i, i + 3) });
    } else parts.push({ type: 'integer', value: int });
    if (frac) parts.push({ type: 'decimal', value: '.' }, { type: 'fraction', value: frac });
    if (typeof suffix === 'number') {
      parts.push({ type: 'exponentSeparator', value: 'E' });
      if (suffix < 0) parts.push({ type: 'exponentMinusSign', value: '-' });
      parts.push({ type: 'exponentInteger', value: String(Math.abs(suffix)) });
    } else if (suffix) {
      if (suffix[0] === ' ') parts.push({ type: 'literal', value: ' ' }, { type: 'compact', value: suffix.slice(1) });
      else parts.push({ type: 'compact', value: suffix });
    }
    return { parts, zero: dec.digits === '', one: int === '1' && !frac && dec.exp === 1 && suffix === null };
  }

  formatToParts(value) {
    const r = this.r;
    let x = typeof value === 'bigint' ? value : Number(value);
    if (typeof value === 'string' && /^\s*-?\d{16,}\s*$/.test(value)) x = BigInt(value.trim());
    const negative = typeof x === 'bigint' ? x < 0n : x < 0 || Object.is(x, -0);
    let body, zero = false, one = false;
    if (typeof x !== 'bigint' && Number.isNaN(x)) body = [{ type: 'nan', value: 'NaN' }];
    else if (typeof x !== 'bigint' && !Number.isFinite(x)) body = [{ type: 'infinity', value: '∞' }];
    else ({ parts: body, zero, one } = this.number(typeof x === 'bigint' ? (negative ? -x : x) : Math.abs(x), negative));
    const nan = body[0].type === 'nan';
    let sign = '';
    switch (r.signDisplay) {
      case 'auto': sign = negative && !nan ? '-' : ''; break;
      case 'always': sign = negative && !nan ? '-' : '+'; break;
      case 'exceptZero': sign = zero || nan ? '' : negative ? '-' : '+'; break;
      case 'negative': sign = negative && !zero && !nan ? '-' : ''; break;
      default: sign = '';
    }
    const out = [];
    const accounting = r.style === 'currency' && r.currencySign === 'accounting' && sign === '-';
    if (accounting) out.push({ type: 'literal', value: '(' });
    else if (sign) out.push({ type: sign === '-' ? 'minusSign' : 'plusSign', value: sign });
    const digitsFirst = body[0].type === 'integer';
    if (r.style === 'currency') {
      const c = this.cur;
      if (r.currencyDisplay === 'name') {
        out.push(...body, { type: 'literal', value: ' ' }, { type: 'currency', value: one ? c.one : c.other });
      } else {
        let sym = r.currencyDisplay === 'code' ? `${r.currency}${NBSP}` : r.currencyDisplay === 'narrowSymbol' ? c.narrow : c.symbol;
        let space = '';
        if (sym.endsWith(NBSP)) { sym = sym.slice(0, -1); space = digitsFirst ? NBSP : ''; }
        out.push({ type: 'currency', value: sym });
        if (space) out.push({ type: 'literal', value: space });
        out.push(...body);
      }
    } else if (r.style === 'unit') {
      const [before, after] = this.unit[['short', 'long', 'narrow'].indexOf(r.unitDisplay)][one ? 0 : 1];
      if (before) out.push({ type: 'unit', value: before });
      out.push(...body);
      if (after) {
        const m = /^(\s*)(.*)$/.exec(after);
        if (m[1]) out.push({ type: 'literal', value: m[1] });
        out.push({ type: 'unit', value: m[2] });
      }
    } else {
      out.push(...body);
      if (r.style === 'percent') out.push({ type: 'percentSign', value: '%' });
    }
    if (accounting) out.push({ type: 'literal', value: ')' });
    return out;
  }

  format(value) { return this.formatToParts(value).map((p) => p.value).join(''); }

  formatRange() { return unsupported('NumberFormat.prototype.formatRange'); }

  formatRangeToParts() { return unsupported('NumberFormat.prototype.formatRangeToParts'); }

  resolvedOptions() {
    const out = {};
    for (const k of numberOptionOrder) if (this.r[k] !== undefined) out[k] = this.r[k];
    return out;
  }

  static supportedLocalesOf(locales) { return supportedLocalesOf(locales); }
}
// The order of resolvedOptions' properties, as V8 gives them.
const numberOptionOrder = ['locale', 'numberingSystem', 'style', 'currency', 'currencyDisplay', 'currencySign', 'unit', 'unitDisplay',
  'minimumIntegerDigits', 'minimumFractionDigits', 'maximumFractionDigits', 'minimumSignificantDigits', 'maximumSignificantDigits',
  'useGrouping', 'notation', 'compactDisplay', 'signDisplay', 'roundingMode', 'roundingIncrement', 'trailingZeroDisplay', 'roundingPriority'];
// format is a bound getter in Intl: arr.map(nf.format) works.
Object.defineProperty(NumberFormat.prototype, 'format', {
  configurable: true,
  get() {
    const f = (v) => this.formatToParts(v).map((p) => p.value).join('');
    Object.defineProperty(this, 'format', { value: f, configurable: true });
    return f;
  },
});

// ---- plural rules ----

class PluralRules {
  constructor(locales, options) {
    const locale = resolveLocale(locales);
    const o = toOptions(options);
    const type = optionsOf('Intl.PluralRules')(o, 'type', ['cardinal', 'ordinal'], 'cardinal');
    this.nf = new NumberFormat(locale, { ...o, style: 'decimal', useGrouping: false, notation: 'standard' });
    this.r = { locale, type, ...this.nf.resolvedOptions(), pluralCategories: type === 'ordinal' ? ['few', 'one', 'two', 'other'] : ['one', 'other'] };
    for (const k of ['style', 'useGrouping', 'notation', 'signDisplay', 'numberingSystem']) delete this.r[k];
  }

  select(value) {
    const s = this.nf.format(Math.abs(Number(value)));
    if (this.r.type === 'cardinal') return s === '1' ? 'one' : 'other';
    if (s.includes('.') || !/^\d+$/.test(s)) return 'other';
    const i = BigInt(s);
    const n10 = i % 10n, n100 = i % 100n;
    if (n10 === 1n && n100 !== 11n) return 'one';
    if (n10 === 2n && n100 !== 12n) return 'two';
    if (n10 === 3n && n100 !== 13n) return 'few';
    return 'other';
  }

  selectRange() { return unsupported('PluralRules.prototype.selectRange'); }

  resolvedOptions() { return { ...this.r, pluralCategories: [...this.r.pluralCategories] }; }

  static supportedLocalesOf(locales) { return supportedLocalesOf(locales); }
}

// ---- collation ----

class Collator {
  constructor(locales, options) {
    const locale = resolveLocale(locales);
    const o = toOptions(options);
    const option = optionsOf('Intl.Collator');
    const usage = option(o, 'usage', ['sort', 'search'], 'sort');
    const numeric = option(o, 'numeric', null, false);
    const caseFirst = option(o, 'caseFirst', ['upper', 'lower', 'false'], 'false');
    if (caseFirst !== 'false') unsupported(`Collator caseFirst ${caseFirst}`);
    const sensitivity = option(o, 'sensitivity', ['base', 'accent', 'case', 'variant'], 'variant');
    const ignorePunctuation = option(o, 'ignorePunctuation', null, false);
    if (o.collation !== undefined && o.collation !== 'default') unsupported(`Collator collation ${o.collation}`);
    this.r = { locale, usage, sensitivity, ignorePunctuation, collation: 'default', numeric, caseFirst };
    // case: accents ignored, case kept (x/text has no case level).
    let tag = 'en-u';
    tag += { base: '-ks-level1', accent: '-ks-level2', case: '', variant: '' }[sensitivity];
    if (numeric) tag += '-kn-true';
    if (ignorePunctuation) tag += '-ka-shifted';
    const cmp = n.collator(tag === 'en-u' ? 'en' : tag, sensitivity === 'case');
    Object.defineProperty(this, 'compare', { value: (a, b) => cmp(String(a), String(b)), configurable: true });
  }

  resolvedOptions() { return { ...this.r }; }

  static supportedLocalesOf(locales) { return supportedLocalesOf(locales); }
}

// ---- dates ----

const monthNames = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const eraNames = { short: ['BC', 'AD'], long: ['Before Christ', 'Anno Domini'], narrow: ['B', 'A'] };
const dayNames = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const textWidth = ['narrow', 'short', 'long'];
const numWidth = ['numeric', '2-digit'];
const fieldValues = {
  weekday: textWidth, era: textWidth, year: numWidth, month: [...numWidth, ...textWidth], day: numWidth,
  hour: numWidth, minute: numWidth, second: numWidth,
  timeZoneName: ['short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'],
};
const dateFields = ['weekday', 'year', 'month', 'day'];
const timeFields = ['hour', 'minute', 'second', 'fractionalSecondDigits'];
const styleValues = ['full', 'long', 'medium', 'short'];

// Long names ICU gives en-US for the zones agents meet most; others are
// refused rather than named differently.
const longZoneNames = {
  UTC: ['Coordinated Universal Time'],
  EST: ['Eastern Standard Time'], EDT: ['Eastern Daylight Time'], CST: ['Central Standard Time'], CDT: ['Central Daylight Time'],
  MST: ['Mountain Standard Time'], MDT: ['Mountain Daylight Time'], PST: ['Pacific Standard Time'], PDT: ['Pacific Daylight Time'],
  AKST: ['Alaska Standard Time'], AKDT: ['Alaska Daylight Time'], HST: ['Hawaii-Aleutian Standard Time'],
  CET: ['Central European Standard Time'], CEST: ['Central European Summer Time'],
  EET: ['Eastern European Standard Time'], EEST: ['Eastern European Summer Time'],
  WET: ['Western European Standard Time'], WEST: ['Western European Summer Time'],
  GMT: ['Greenwich Mean Time'], BST: ['British Summer Time'], IST: ['India Standard Time'], JST: ['Japan Standard Time'],
};
const usShort = ['EST', 'EDT', 'CST', 'CDT', 'MST', 'MDT', 'PST', 'PDT', 'AKST', 'AKDT', 'HST', 'AST', 'ADT'];

function offsetText(minutes, long) {
  if (minutes === 0) return 'GMT';
  const sign = minutes < 0 ? '-' : '+';
  const h = Math.floor(Math.abs(minutes) / 60), m = Math.abs(minutes) % 60;
  if (long) return `GMT${sign}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
  return `GMT${sign}${h}${m ? `:${String(m).padStart(2, '0')}` : ''}`;
}

function zoneText(style, zone, f) {
  const [offset, abbr] = [f[8], f[9]];
  switch (style) {
    case 'short':
      if (zone === 'UTC') return 'UTC';
      if (usShort.includes(abbr) && (zone.startsWith('America/') || zone.startsWith('US/') || zone.startsWith('Pacific/Honolulu') || /^[ECMP]ST5?[ECMP]?DT$|^[ECMP]ST$/.test(zone))) return abbr;
      return offsetText(offset, false);
    case 'long': {
      const key = zone === 'UTC' ? 'UTC' : abbr;
      if (key === 'GMT' && zone !== 'Europe/London') break;
      if (key === 'BST' && zone !== 'Europe/London') break;
      if (key === 'IST' && zone !== 'Asia/Kolkata' && zone !== 'Asia/Calcutta') break;
      if (longZoneNames[key]) return longZoneNames[key][0];
      break;
    }
    case 'shortOffset': return offsetText(offset, false);
    case 'longOffset': return offsetText(offset, true);
    default:
  }
  return unsupported(`timeZoneName ${style} for ${zone}`);
}

class DateTimeFormat {
  constructor(locales, options, defaults = 'date', required = 'any') {
    const locale = resolveLocale(locales);
    const o = toOptions(options);
    const option = optionsOf('Intl.DateTimeFormat');
    if (o.calendar !== undefined && o.calendar !== 'gregory') unsupported(`calendar ${o.calendar}`);
    if (o.numberingSystem !== undefined && o.numberingSystem !== 'latn') unsupported(`numberingSystem ${o.numberingSystem}`);
    const hour12 = o.hour12 === undefined ? undefined : Boolean(o.hour12);
    let hourCycle = option(o, 'hourCycle', ['h11', 'h12', 'h23', 'h24'], undefined);
    if (hour12 !== undefined) hourCycle = hour12 ? 'h12' : 'h24';
    let timeZone = o.timeZone;
    if (timeZone === undefined) timeZone = n.defaultZone();
    else {
      const z = n.zone(String(timeZone));
      if (!z) throw new RangeError(`Invalid time zone specified: ${timeZone}`);
      timeZone = z;
    }
    const f = {};
    for (const name of ['weekday', 'era', 'year', 'month', 'day', 'dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits', 'timeZoneName']) {
      if (o[name] === undefined) continue;
      if (name === 'fractionalSecondDigits') f[name] = digitOption(o, name, 1, 3, undefined);
      else if (name === 'dayPeriod') unsupported('DateTimeFormat dayPeriod');
      else f[name] = option(o, name, fieldValues[name]);
    }
    const dateStyle = option(o, 'dateStyle', styleValues, undefined);
    const timeStyle = option(o, 'timeStyle', styleValues, undefined);
    if (dateStyle || timeStyle) {
      const bad = Object.keys(f)[0];
      if (bad) throw new TypeError(`Can't set option ${bad} when ${dateStyle ? 'dateStyle' : 'timeStyle'} is used`);
    } else {
      // ToDateTimeOptions: the defaults unless a field of the kind required is set.
      let need = true;
      if (required !== 'time' && dateFields.some((k) => f[k] !== undefined)) need = false;
      if (required !== 'date' && timeFields.some((k) => f[k] !== undefined)) need = false;
      if (need && (defaults === 'date' || defaults === 'all')) Object.assign(f, { year: 'numeric', month: 'numeric', day: 'numeric' });
      if (need && (defaults === 'time' || defaults === 'all')) Object.assign(f, { hour: 'numeric', minute: 'numeric', second: 'numeric' });
    }
    if (f.timeZoneName && f.timeZoneName.endsWith('Generic')) unsupported(`timeZoneName ${f.timeZoneName}`);
    const hasHour = f.hour !== undefined || timeStyle !== undefined;
    if (!hasHour) hourCycle = undefined;
    else hourCycle = hourCycle || 'h12';
    this.r = { locale, calendar: 'gregory', numberingSystem: 'latn', timeZone };
    if (hourCycle) Object.assign(this.r, { hourCycle, hour12: hourCycle === 'h12' || hourCycle === 'h11' });
    for (const k of ['weekday', 'era', 'year', 'month', 'day', 'hour', 'minute', 'second', 'fractionalSecondDigits', 'timeZoneName']) {
      if (f[k] === undefined) continue;
      let val = f[k];
      if ((k === 'minute' || k === 'second') && f.hour !== undefined) val = '2-digit';
      if (k === 'hour' && (hourCycle === 'h23' || hourCycle === 'h24')) val = '2-digit';
      this.r[k] = val;
    }
    if (dateStyle) this.r.dateStyle = dateStyle;
    if (timeStyle) this.r.timeStyle = timeStyle;
    this.f = f;
    this.dateStyle = dateStyle;
    this.timeStyle = timeStyle;
    this.check();
  }

  // check refuses the combinations of fields this file has no pattern for.
  check() {
    const f = this.f;
    const text = ['long', 'short', 'narrow'].includes(f.month);
    const odd = (f.day !== undefined && f.year !== undefined && f.month === undefined)
      || (f.weekday && !text && f.month !== undefined && f.day === undefined)
      || (f.weekday && text && f.day === undefined)
      || (f.weekday && !f.month && f.day !== undefined)
      || (f.weekday && f.year !== undefined && !f.month)
      || (f.hour !== undefined && f.second !== undefined && f.minute === undefined)
      || (f.fractionalSecondDigits !== undefined && f.second === undefined)
      || (f.era && f.year === undefined && (f.month !== undefined || f.day !== undefined || f.weekday));
    if (odd) unsupported(`DateTimeFormat of the fields ${Object.keys(f).join(', ')}`);
  }

  partsOf(ms) {
    const fl = n.fields(ms, this.r.timeZone);
    const f = this.dateStyle || this.timeStyle ? this.styleFields() : this.f;
    const out = [];
    const lit = (s) => { if (s) out.push({ type: 'literal', value: s }); };
    const put = (type, value) => out.push({ type, value: String(value) });
    const two = (x) => String(x).padStart(2, '0');
    const [year, month, day, hour, minute, second, milli, weekday] = fl;
    const text = ['long', 'short', 'narrow'].includes(f.month);
    const monthText = (w) => (w === 'long' ? monthNames[month - 1] : w === 'short' ? monthNames[month - 1].slice(0, 3) : monthNames[month - 1][0]);
    const dayText = (w) => (w === 'long' ? dayNames[weekday] : w === 'short' ? dayNames[weekday].slice(0, 3) : dayNames[weekday][0]);
    const shownYear = f.era && year <= 0 ? 1 - year : year; // 1 BC is year 0
    const yearText = f.year === '2-digit' ? two(shownYear % 100) : String(shownYear);
    const putYear = () => {
      put('year', yearText);
      if (f.era) { lit(' '); put('era', eraNames[f.era][year > 0 ? 1 : 0]); }
    };
    const hasDate = dateFields.some((k) => f[k] !== undefined) || f.era;
    const hasTime = f.hour !== undefined || f.minute !== undefined || f.second !== undefined;
    if (hasDate) {
      if (f.weekday) {
        put('weekday', dayText(f.weekday));
        if (f.month !== undefined || f.day !== undefined || f.year !== undefined) lit(', ');
      }
      if (text) {
        put('month', monthText(f.month));
        if (f.day !== undefined) { lit(' '); put('day', f.day === '2-digit' ? two(day) : day); }
        if (f.year !== undefined) { lit(f.day !== undefined ? ', ' : ' '); putYear(); }
      } else {
        const seq = [];
        if (f.month !== undefined) seq.push(['month', f.month === '2-digit' ? two(month) : month]);
        if (f.day !== undefined) seq.push(['day', f.day === '2-digit' ? two(day) : day]);
        if (f.year !== undefined) seq.push(['year']);
        seq.forEach(([t, v], i) => { if (i) lit('/'); if (t === 'year') putYear(); else put(t, v); });
        if (!seq.length && f.era) put('era', eraNames[f.era][year > 0 ? 1 : 0]);
      }
    }
    if (hasTime) {
      if (hasDate) {
        const weekdayOnly = f.weekday && f.month === undefined && f.day === undefined && f.year === undefined;
        lit(this.dateStyle === 'full' || this.dateStyle === 'long' || (!this.dateStyle && f.month === 'long') ? ' at ' : weekdayOnly ? ' ' : ', ');
      }
      const hc = this.r.hourCycle;
      if (f.hour !== undefined) {
        let h = hour;
        if (hc === 'h12') h = hour % 12 || 12;
        else if (hc === 'h11') h = hour % 12;
        else if (hc === 'h24') h = hour || 24;
        put('hour', hc === 'h23' || hc === 'h24' || f.hour === '2-digit' ? two(h) : h);
        if (f.minute !== undefined) { lit(':'); put('minute', two(minute)); }
        if (f.second !== undefined) { lit(':'); put('second', two(second)); }
      } else if (f.minute !== undefined) {
        put('minute', f.second !== undefined ? two(minute) : minute);
        if (f.second !== undefined) { lit(':'); put('second', two(second)); }
      } else put('second', second);
      if (f.fractionalSecondDigits) { lit('.'); put('fractionalSecond', String(milli).padStart(3, '0').slice(0, f.fractionalSecondDigits)); }
      if (f.hour !== undefined && (hc === 'h12' || hc === 'h11')) { lit(NNBSP); put('dayPeriod', hour < 12 ? 'AM' : 'PM'); }
    }
    if (f.timeZoneName) {
      lit(hasTime ? ' ' : ', ');
      put('timeZoneName', zoneText(f.timeZoneName, this.r.timeZone, fl));
    }
    return out;
  }

  styleFields() {
    const f = {};
    switch (this.dateStyle) {
      case 'full': Object.assign(f, { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' }); break;
      case 'long': Object.assign(f, { month: 'long', day: 'numeric', year: 'numeric' }); break;
      case 'medium': Object.assign(f, { month: 'short', day: 'numeric', year: 'numeric' }); break;
      case 'short': Object.assign(f, { month: 'numeric', day: 'numeric', year: '2-digit' }); break;
      default:
    }
    switch (this.timeStyle) {
      case 'full': Object.assign(f, { hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'long' }); break;
      case 'long': Object.assign(f, { hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }); break;
      case 'medium': Object.assign(f, { hour: 'numeric', minute: '2-digit', second: '2-digit' }); break;
      case 'short': Object.assign(f, { hour: 'numeric', minute: '2-digit' }); break;
      default:
    }
    return f;
  }

  formatToParts(date) {
    const ms = date === undefined ? Date.now() : Number(date instanceof Date ? date.getTime() : date);
    if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw new RangeError('Invalid time value');
    return this.partsOf(Math.trunc(ms));
  }

  formatRange() { return unsupported('DateTimeFormat.prototype.formatRange'); }

  formatRangeToParts() { return unsupported('DateTimeFormat.prototype.formatRangeToParts'); }

  resolvedOptions() { return { ...this.r }; }

  static supportedLocalesOf(locales) { return supportedLocalesOf(locales); }
}
Object.defineProperty(DateTimeFormat.prototype, 'format', {
  configurable: true,
  get() {
    // V8 prints a plain space where ICU puts U+202F (before AM/PM), and
    // keeps ICU's in formatToParts.
    const f = (d) => this.formatToParts(d).map((p) => p.value).join('').replace(/\u202f/g, ' ');
    Object.defineProperty(this, 'format', { value: f, configurable: true });
    return f;
  },
});

// The constructors callable without new, as Intl's are.
const callable = (C, name) => {
  const F = function (locales, options) { return new C(locales, options); };
  Object.defineProperty(F, 'name', { value: name });
  F.prototype = C.prototype;
  Object.defineProperty(C.prototype, 'constructor', { value: F, writable: true, configurable: true });
  Object.defineProperty(C.prototype, Symbol.toStringTag, { value: `Intl.${name}`, configurable: true });
  F.supportedLocalesOf = supportedLocalesOf;
  return F;
};

const refused = (name) => {
  const F = function () { unsupported(`Intl.${name}`); };
  Object.defineProperty(F, 'name', { value: name });
  F.supportedLocalesOf = () => unsupported(`Intl.${name}`);
  return F;
};

const Intl = {
  getCanonicalLocales,
  supportedValuesOf: () => unsupported('Intl.supportedValuesOf'),
  DateTimeFormat: callable(DateTimeFormat, 'DateTimeFormat'),
  NumberFormat: callable(NumberFormat, 'NumberFormat'),
  Collator: callable(Collator, 'Collator'),
  PluralRules: callable(PluralRules, 'PluralRules'),
};
for (const name of ['RelativeTimeFormat', 'ListFormat', 'Locale', 'DisplayNames', 'Segmenter']) Intl[name] = refused(name);
Object.defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });
for (const k of Object.keys(Intl)) Object.defineProperty(Intl, k, { enumerable: false });

// The locale-sensitive methods of the built-ins, through Intl. Instances
// are cached for the plain calls, which sorting and printing repeat.
const plainNumber = new NumberFormat();
let plainCollator;
const dateDefaults = { toLocaleString: ['all', 'any'], toLocaleDateString: ['date', 'date'], toLocaleTimeString: ['time', 'time'] };
const plainDates = new Map();
const replace = (proto, name, fn) => Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
replace(Number.prototype, 'toLocaleString', function toLocaleString(locales, options) {
  const x = Number.prototype.valueOf.call(this);
  return locales === undefined && options === undefined ? plainNumber.format(x) : new NumberFormat(locales, options).format(x);
});
replace(BigInt.prototype, 'toLocaleString', function toLocaleString(locales, options) {
  const x = BigInt.prototype.valueOf.call(this);
  return locales === undefined && options === undefined ? plainNumber.format(x) : new NumberFormat(locales, options).format(x);
});
replace(String.prototype, 'localeCompare', function localeCompare(that, locales, options) {
  if (this === undefined || this === null) throw new TypeError('String.prototype.localeCompare called on null or undefined');
  if (locales === undefined && options === undefined) return (plainCollator || (plainCollator = new Collator())).compare(String(this), String(that));
  return new Collator(locales, options).compare(String(this), String(that));
});
for (const [name, [defaults, required]] of Object.entries(dateDefaults)) {
  replace(Date.prototype, name, {
    [name](locales, options) {
      const t = Date.prototype.getTime.call(this);
      if (Number.isNaN(t)) return 'Invalid Date';
      if (locales === undefined && options === undefined) {
        const zone = n.defaultZone();
        let f = plainDates.get(name);
        if (!f || f.r.timeZone !== zone) plainDates.set(name, f = new DateTimeFormat(undefined, undefined, defaults, required));
        return f.format(t);
      }
      return new DateTimeFormat(locales, options, defaults, required).format(t);
    },
  }[name]);
}

module.exports = Intl;
