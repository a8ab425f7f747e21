const a = { name: 'a' }; a.self = a; console.log(a)
