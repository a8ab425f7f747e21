// node:timers
module.exports = { setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate };
