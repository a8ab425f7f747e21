const e = new Error('x'); console.log(e.message, e.name, e instanceof Error, String(e))
