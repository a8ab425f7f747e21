console.log('abc'.padStart(5, '-'), 'a-b-c'.replaceAll('-', '+'), [3, 1, 2].toSorted ? 'has' : 'no', 'x'.at(-1), Object.fromEntries([['k', 1]]), [1, [2, [3]]].flat(Infinity))
