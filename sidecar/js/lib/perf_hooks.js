// node:perf_hooks: the performance global and what timing code asks of it.
module.exports = { performance: globalThis.performance, PerformanceObserver: class PerformanceObserver { observe() {} disconnect() {} }, constants: {} };
