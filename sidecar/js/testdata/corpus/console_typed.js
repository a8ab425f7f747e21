console.log(new Uint8Array([1, 2, 3]), new Float64Array(2))
