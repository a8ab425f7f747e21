// node:child_process: commands run in the shell backend, in this process,
// against the same workspace.
function run(cmd, o) {
  o = o || {};
  const input = o.input === undefined ? '' : (typeof o.input === 'string' ? o.input : Buffer.from(o.input).toString());
  const env = o.env ? Object.fromEntries(Object.entries(o.env).map(([k, v]) => [k, String(v)])) : null;
  return native.execSync(String(cmd), o.cwd ? String(o.cwd) : '', input, env);
}

function out(buf, encoding) {
  return encoding && encoding !== 'buffer' ? buf.toString(encoding) : buf;
}

function failure(cmd, r) {
  const e = new Error(`Command failed: ${cmd}\n${r.stderr.toString()}`);
  e.status = r.status; e.code = r.status; e.signal = null; e.cmd = cmd;
  e.stdout = r.stdout; e.stderr = r.stderr; e.output = [null, r.stdout, r.stderr];
  return e;
}

function execSync(cmd, o) {
  o = o || {};
  const r = run(cmd, o);
  if (o.stdio !== 'pipe' && (!o.stdio || o.stdio[2] !== 'pipe') && r.stderr.length) process.stderr.write(r.stderr);
  if (r.status !== 0) {
    const e = failure(cmd, r);
    e.stdout = out(r.stdout, o.encoding); e.stderr = out(r.stderr, o.encoding);
    throw e;
  }
  return out(r.stdout, o.encoding);
}

function exec(cmd, o, cb) {
  if (typeof o === 'function') { cb = o; o = {}; }
  o = o || {};
  const EventEmitter = require('events');
  const child = new EventEmitter();
  const r = run(cmd, o);
  const enc = o.encoding === undefined ? 'utf8' : o.encoding;
  native.queueTask(() => {
    const stdout = out(r.stdout, enc), stderr = out(r.stderr, enc);
    if (cb) cb(r.status === 0 ? null : Object.assign(failure(cmd, r), { code: r.status }), stdout, stderr);
    child.emit('exit', r.status, null);
    child.emit('close', r.status, null);
  });
  child.pid = 0;
  return child;
}
exec[Symbol.for('nodejs.util.promisify.custom')] = (cmd, o) => new Promise((resolve, reject) => {
  exec(cmd, o, (err, stdout, stderr) => (err ? reject(Object.assign(err, { stdout, stderr })) : resolve({ stdout, stderr })));
});

function quote(a) { return `'${String(a).replace(/'/g, "'\\''")}'`; }

function spawnSync(file, args, o) {
  if (!Array.isArray(args)) { o = args; args = []; }
  o = o || {};
  const cmd = o.shell ? [file, ...args].join(' ') : [file, ...args].map(quote).join(' ');
  const r = run(cmd, o);
  const stdout = out(r.stdout, o.encoding), stderr = out(r.stderr, o.encoding);
  return { pid: 0, status: r.status, signal: null, stdout, stderr, output: [null, stdout, stderr] };
}

function execFileSync(file, args, o) {
  if (!Array.isArray(args)) { o = args; args = []; }
  o = o || {};
  const r = run([file, ...args].map(quote).join(' '), o);
  if (r.status !== 0) throw failure(file, r);
  return out(r.stdout, o.encoding);
}

module.exports = { exec, execSync, spawnSync, execFileSync };
