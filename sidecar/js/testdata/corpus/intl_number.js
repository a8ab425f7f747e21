// Intl.NumberFormat and toLocaleString in en-US: grouping, rounding from
// the shortest decimal, styles, notations, signs, parts.
const nums = [0, -0, 1, -1, 1.005, 1234.5678, 0.000123, 1e21, 123456789.987, -1234.5, 999.9999, 0.5, 2.5, 1.45, NaN, Infinity, -Infinity, 1e-7, 12345678901234567890, 99999, 999950, 1e15, 1e18, -0.0004];
const opts = [undefined, { maximumFractionDigits: 2 }, { minimumFractionDigits: 2 }, { minimumFractionDigits: 2, maximumFractionDigits: 2 },
  { maximumFractionDigits: 0 }, { maximumSignificantDigits: 3 }, { minimumSignificantDigits: 5 }, { minimumIntegerDigits: 3 }, { useGrouping: false }, { useGrouping: 'min2' },
  { style: 'percent' }, { style: 'percent', maximumFractionDigits: 1 }, { style: 'currency', currency: 'USD' }, { style: 'currency', currency: 'eur' },
  { style: 'currency', currency: 'JPY' }, { style: 'currency', currency: 'GBP' }, { style: 'currency', currency: 'USD', currencyDisplay: 'code' },
  { style: 'currency', currency: 'USD', currencyDisplay: 'name' }, { style: 'currency', currency: 'USD', currencySign: 'accounting' },
  { style: 'currency', currency: 'CHF' }, { style: 'currency', currency: 'CAD', currencyDisplay: 'narrowSymbol' },
  { notation: 'compact' }, { notation: 'compact', compactDisplay: 'long' }, { notation: 'scientific' }, { notation: 'engineering' },
  { signDisplay: 'always' }, { signDisplay: 'exceptZero' }, { signDisplay: 'never' }, { signDisplay: 'negative' },
  { style: 'unit', unit: 'kilobyte' }, { style: 'unit', unit: 'megabyte', unitDisplay: 'long' }, { style: 'unit', unit: 'second', unitDisplay: 'narrow' },
  { style: 'unit', unit: 'kilometer-per-hour' }, { maximumFractionDigits: 1, roundingMode: 'halfEven' }, { maximumFractionDigits: 0, roundingMode: 'floor' },
  { minimumFractionDigits: 2, trailingZeroDisplay: 'stripIfInteger' }];
for (const o of opts) console.log(JSON.stringify(o), nums.map((x) => new Intl.NumberFormat('en-US', o).format(x)).join(' | '));
console.log((1234.5).toLocaleString(), (1234.5).toLocaleString('en-US', { style: 'currency', currency: 'USD' }), (123456789n).toLocaleString(), new Intl.NumberFormat().format(12345678901234567890n));
console.log(new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).formatToParts(-1234.5));
console.log(new Intl.NumberFormat().resolvedOptions(), new Intl.NumberFormat('en', { style: 'currency', currency: 'usd' }).resolvedOptions());
console.log([3, 1000, 2.5].map(new Intl.NumberFormat('en-US').format), Intl.NumberFormat('en-US').format(5), String(new Intl.NumberFormat()));
for (const bad of [{ style: 'currency' }, { maximumFractionDigits: 101 }, { minimumFractionDigits: 3, maximumFractionDigits: 1 }, { style: 'bogus' }]) {
  try { new Intl.NumberFormat('en-US', bad); } catch (e) { console.log(e.name, e.message); }
}
console.log([1, 2, 0, 5, 1.5].map((x) => new Intl.PluralRules('en-US').select(x)), [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map((x) => new Intl.PluralRules('en-US', { type: 'ordinal' }).select(x)));
console.log(new Intl.PluralRules('en-US', { minimumFractionDigits: 1 }).select(1), new Intl.PluralRules().resolvedOptions().pluralCategories);
console.log(Intl.getCanonicalLocales('EN-us'), Object.prototype.toString.call(Intl), Object.getOwnPropertyNames(Intl));
