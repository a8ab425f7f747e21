process.exitCode = 7; console.log('exiting')
