const t = setTimeout(() => console.log('no'), 5); clearTimeout(t); const i = setImmediate(() => console.log('no imm')); clearImmediate(i); setTimeout((a, b) => console.log(a + b), 1, 2, 3)
