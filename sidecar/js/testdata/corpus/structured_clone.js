const o = { a: [1, { b: new Date(0) }], m: new Map([[1, 2]]) }; const c = structuredClone(o); console.log(c.a[1].b instanceof Date, c.m.get(1), c !== o)
