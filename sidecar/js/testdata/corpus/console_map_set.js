console.log(new Map([['a', 1], ['b', { c: 2 }]]), new Set([1, 'two', [3]]))
