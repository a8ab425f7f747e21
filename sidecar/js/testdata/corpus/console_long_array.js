console.log(Array.from({ length: 30 }, (_, i) => i * 3))
