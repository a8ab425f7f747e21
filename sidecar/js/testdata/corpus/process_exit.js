process.on('exit', (c) => console.log('exit', c)); console.log('before'); process.exit(3); console.log('after')
