const o = Object.create(null); o.a = 1; console.log(o)
