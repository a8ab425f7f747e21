const events = require('events'); const e = new events.EventEmitter(); events.once(e, 'ready').then(([v]) => console.log('ready', v)); setTimeout(() => e.emit('ready', 42), 1)
