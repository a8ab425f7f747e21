// sqlfs:git: the shell's git built-in (sidecar/git) as promises, over the
// same workspace view, so every change is audited under the exec's actor.
// Each call resolves to what `git ARGS` prints on stdout; a failing command
// rejects with an Error carrying code ERR_SQLFS_GIT, status, stdout and
// stderr (so `diff --exit-code` finding changes rejects too). o.cwd is the
// directory the command runs in (default: the process's); o.args are extra
// arguments, placed before paths.
const pathList = (p) => (p === undefined ? [] : Array.isArray(p) ? p.map(String) : [String(p)]);
const extra = (o) => (o && o.args ? o.args.map(String) : []);

async function run(args, o) {
  o = o || {};
  const r = native.git(args.map(String), o.cwd === undefined ? '' : String(o.cwd));
  if (r.status !== 0) {
    const e = new Error(r.stderr.trim() || 'git ' + args.join(' ') + ' exited with status ' + r.status);
    e.code = 'ERR_SQLFS_GIT';
    e.status = r.status;
    e.stdout = r.stdout;
    e.stderr = r.stderr;
    throw e;
  }
  return r.stdout;
}

module.exports = {
  run,
  init: (dir, o) => run(['init', ...extra(o), ...pathList(dir)], o),
  clone: (source, dir, o) => run(['clone', ...extra(o), String(source), ...pathList(dir)], o),
  add: (paths, o) => run(['add', ...extra(o), ...pathList(paths === undefined ? '.' : paths)], o),
  commit: (message, o) => run(['commit', '-m', String(message), ...extra(o)], o),
  status: (o) => run(['status', ...extra(o)], o),
  log: (o) => run(['log', ...extra(o)], o),
  diff: (o) => run(['diff', ...extra(o)], o),
};
