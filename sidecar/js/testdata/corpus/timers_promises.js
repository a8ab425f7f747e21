const { setTimeout: sleep } = require('timers/promises'); (async () => { const v = await sleep(2, 'value'); console.log(v) })()
