// filesize formats through Intl.NumberFormat with locale and
// localeOptions.
const { filesize, partial } = require('filesize');
for (const n of [0, 500, 1024, 265318, 1234567890, 1e13]) {
  console.log(filesize(n), filesize(n, { locale: 'en-US' }), filesize(n, { base: 2, standard: 'jedec', locale: true }), filesize(n, { locale: 'en-US', localeOptions: { minimumFractionDigits: 1 } }), filesize(n, { fullform: true, round: 1 }));
}
const size = partial({ standard: 'iec', locale: 'en-US' });
console.log(size(1e9), size(123456));
