const b = Buffer.from('ÿa', 'latin1'); console.log(b, b.toString('latin1'), Buffer.from([0xe9]).toString('binary'))
