const o = {}; for (let i = 0; i < 12; i++) o['key' + i] = 'value number ' + i; console.log(o)
