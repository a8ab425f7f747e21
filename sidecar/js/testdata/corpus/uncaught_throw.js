console.log('start'); throw new Error('fatal')
