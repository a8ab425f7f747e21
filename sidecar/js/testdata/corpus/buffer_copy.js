const a = Buffer.from('hello'); const b = Buffer.alloc(8, '.'); console.log(a.copy(b, 2), b.toString(), a.copy(b, 6, 1), b.toString())
