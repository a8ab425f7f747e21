console.log(process.argv.length >= 1, typeof process.env, process.platform, typeof process.hrtime()[0], typeof process.hrtime.bigint(), typeof process.cwd(), process.exitCode)
