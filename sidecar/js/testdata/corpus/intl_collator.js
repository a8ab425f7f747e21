// Intl.Collator and localeCompare: the default order, sensitivity,
// numeric ordering.
const words = ['b', 'a', 'B', 'A', 'ä', '10', '9', 'z2', 'z10', 'résumé', 'resume', 'Resume', 'zebra', 'Zebra', 'éclair', 'eclair', '_x', 'x'];
console.log([...words].sort(new Intl.Collator('en').compare));
console.log([...words].sort((a, b) => a.localeCompare(b)));
console.log(['z2', 'z10', 'a1', 'file100', 'file20', 'file3'].sort(new Intl.Collator(undefined, { numeric: true }).compare));
console.log(['item 10', 'item 9', 'Item 1'].sort((a, b) => a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' })));
for (const sensitivity of ['base', 'accent', 'case', 'variant']) {
  const c = new Intl.Collator('en-US', { sensitivity });
  console.log(sensitivity, ['a', 'A', 'á', 'b'].map((x) => c.compare('a', x)));
}
console.log('a'.localeCompare('b'), 'b'.localeCompare('a'), 'a'.localeCompare('a'), 'a'.localeCompare('A'), 'ß'.localeCompare('ss'));
console.log(new Intl.Collator().resolvedOptions(), new Intl.Collator('en', { numeric: true, sensitivity: 'base' }).resolvedOptions());
