console.log('a'); (async () => { throw new Error('async fatal') })()
