// pretty-bytes formats through toLocaleString when given a locale.
import prettyBytes from 'pretty-bytes';
for (const n of [0, 1, 999, 1000, 1337, 123456789, 1e15, -4321.5]) {
  console.log(prettyBytes(n), prettyBytes(n, { locale: 'en-US' }), prettyBytes(n, { bits: true, locale: true }), prettyBytes(n, { binary: true, maximumFractionDigits: 1, locale: 'en' }), prettyBytes(n, { minimumFractionDigits: 2 }));
}
