// sqlfs:checkpoint: checkpoints of the whole workspace, as promises. An id
// argument takes a checkpoint's id or its name. Errors carry a code
// (unknown_checkpoint, conflict, invalid_argument, ...).
async function call(op, args) {
  return JSON.parse(native.checkpoint(op, JSON.stringify(args)));
}
const ref = (id) => String(id);
module.exports = {
  // create({ name }) → { id, name, created }
  create: (o) => call('create', { name: o && o.name !== undefined ? String(o.name) : '' }),
  // list() → [{ id, name, created, auto, exec }], oldest first
  list: () => call('list', {}),
  // restore(id): the whole workspace goes back to the checkpoint.
  restore: (id) => call('restore', { checkpoint: ref(id) }),
  // diff(from, to) → [{ status: 'A'|'M'|'D', path }]; without to: against now.
  diff: (from, to) => call('diff', { from: ref(from), to: to === undefined ? '' : ref(to) }),
  delete: (id) => call('delete', { checkpoint: ref(id) }),
  // undo(execId) → { exec, checkpoint, restored: [paths] }
  undo: (execId) => call('undo', { exec_id: String(execId) }),
};
