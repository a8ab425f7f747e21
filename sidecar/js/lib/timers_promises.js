// node:timers/promises
module.exports = {
  setTimeout: (ms, v) => new Promise((resolve) => setTimeout(() => resolve(v), ms)),
  setImmediate: (v) => new Promise((resolve) => setImmediate(() => resolve(v))),
};
