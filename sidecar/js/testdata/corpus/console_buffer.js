console.log(Buffer.from('hello'), Buffer.from([1, 2, 255]).toString('hex'))
