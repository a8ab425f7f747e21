console.log({ a: 1, 'b-c': 'x', d: [1, 2, { e: null }] }); console.log([]); console.log({})
