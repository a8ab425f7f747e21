// node:assert (the common subset), strict comparisons.
const util = require('util');
class AssertionError extends Error {
  constructor(o) {
    super(o.message);
    this.name = 'AssertionError';
    this.code = 'ERR_ASSERTION';
    this.actual = o.actual; this.expected = o.expected; this.operator = o.operator;
    this.generatedMessage = !o.userMessage;
  }
}
function fail(actual, expected, message, operator, def) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ message: message ?? def, actual, expected, operator, userMessage: message !== undefined });
}
function ok(v, message) { if (!v) fail(v, true, message, '==', 'The expression evaluated to a falsy value:\n\n  assert.ok(' + util.inspect(v) + ')\n'); }
const assert = (v, m) => ok(v, m);
Object.assign(assert, {
  AssertionError, ok,
  fail: (m = 'Failed') => fail(undefined, undefined, m, 'fail'),
  equal: (a, b, m) => { if (a != b && !(a !== a && b !== b)) fail(a, b, m, '==', `${util.inspect(a)} == ${util.inspect(b)}`); },
  notEqual: (a, b, m) => { if (a == b) fail(a, b, m, '!=', `${util.inspect(a)} != ${util.inspect(b)}`); },
  strictEqual: (a, b, m) => { if (!Object.is(a, b)) fail(a, b, m, 'strictEqual', `Expected values to be strictly equal:\n\n${util.inspect(a)} !== ${util.inspect(b)}\n`); },
  notStrictEqual: (a, b, m) => { if (Object.is(a, b)) fail(a, b, m, 'notStrictEqual', `Expected "actual" to be strictly unequal to: ${util.inspect(b)}`); },
  deepStrictEqual: (a, b, m) => { if (!util.isDeepStrictEqual(a, b)) fail(a, b, m, 'deepStrictEqual', `Expected values to be strictly deep-equal:\n${util.inspect(a)}\n\nshould equal\n\n${util.inspect(b)}`); },
  notDeepStrictEqual: (a, b, m) => { if (util.isDeepStrictEqual(a, b)) fail(a, b, m, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + util.inspect(b)); },
  match: (s, re, m) => { if (!re.test(s)) fail(s, re, m, 'match', `The input did not match the regular expression ${re}. Input:\n\n${util.inspect(s)}\n`); },
  throws(fn, expected, m) {
    try { fn(); } catch (e) { check(e, expected, m); return; }
    fail(undefined, expected, typeof expected === 'string' ? expected : m, 'throws', 'Missing expected exception.');
  },
  doesNotThrow(fn) { fn(); },
  async rejects(p, expected, m) {
    try { await (typeof p === 'function' ? p() : p); } catch (e) { check(e, expected, m); return; }
    fail(undefined, expected, m, 'rejects', 'Missing expected rejection.');
  },
  async doesNotReject(p) { await (typeof p === 'function' ? p() : p); },
  ifError: (e) => { if (e !== null && e !== undefined) throw e; },
});
assert.deepEqual = assert.deepStrictEqual;
assert.notDeepEqual = assert.notDeepStrictEqual;
function check(e, expected, m) {
  if (expected === undefined || typeof expected === 'string') return;
  if (expected instanceof RegExp) { if (!expected.test(String(e))) fail(e, expected, m, 'throws', `The input did not match the regular expression ${expected}. Input:\n\n${util.inspect(String(e))}\n`); return; }
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && e instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) throw e;
    if (expected(e) !== true) fail(e, expected, m, 'throws', 'The validation function is expected to return "true". Received false');
    return;
  }
  for (const k of Object.keys(expected)) {
    const want = expected[k], got = e[k];
    if (want instanceof RegExp && typeof got === 'string' ? !want.test(got) : !util.isDeepStrictEqual(got, want)) {
      fail(e, expected, m, 'throws', `Expected values to be strictly deep-equal:\n+ actual - expected\n\n  ${k}: ${util.inspect(got)} !== ${util.inspect(want)}`);
    }
  }
}
assert.strict = assert;
module.exports = assert;
