console.log({ a: { b: { c: { d: { e: 1 } } } } })
