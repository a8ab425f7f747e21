const { parseArgs } = require('util');
const opts = { options: { f: { type: 'boolean', short: 'f' }, bar: { type: 'string', short: 'b' }, m: { type: 'string', multiple: true }, d: { type: 'string', default: 'x' } }, allowPositionals: true };
for (const args of [['-f', '--bar', 'b'], ['-fbval', 'pos', '--m=1', '--m', '2'], ['--', '-f'], ['--nope'], ['--bar'], ['--f=1'], ['a']]) {
  try { const r = parseArgs({ ...opts, args }); console.log(JSON.stringify(r.values), r.positionals, Object.getPrototypeOf(r.values)); } catch (e) { console.log(e.code, e.message); }
}
try { parseArgs({ args: ['x'], options: {} }); } catch (e) { console.log(e.code, e.message); }
console.log(JSON.stringify(parseArgs({ args: ['-f', 'a'], options: { f: { type: 'boolean' } }, allowPositionals: true, tokens: true }).tokens));
