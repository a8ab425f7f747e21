try { JSON.parse('{bad') } catch (e) { console.log(e.name) } console.log(JSON.stringify({ a: [1, { b: undefined }], c: 'x' }), JSON.stringify({ n: 1 }, null, 2))
