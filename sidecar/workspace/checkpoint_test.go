package workspace_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestJSCheckpointModule: require('sqlfs:checkpoint') creates, diffs,
// lists and restores checkpoints as promises, in the exec's name, and
// rejects with a coded error.
func TestJSCheckpointModule(t *testing.T) {
	ws, err := workspace.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ws.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	prog := `const ck = require('sqlfs:checkpoint'), fs = require('fs');
fs.writeFileSync('a', 'one');
const c = await ck.create({ name: 'js one' });
fs.writeFileSync('a', 'two'); fs.writeFileSync('b', 'new');
console.log((await ck.diff('js one')).map((x) => x.status + ' ' + x.path).join(','));
console.log((await ck.restore(c.id)).id === c.id, fs.readFileSync('a', 'utf8'), fs.existsSync('b'));
for (const bad of [() => ck.restore('nope'), () => ck.create({ name: '42' }), () => ck.undo('nosuchexec'),
  () => ck.restore('a\u0000b'), () => ck.diff('99999999999999999999999'), () => ck.diff(c.id, 'nope'), () => ck.delete('')]) {
  try { await bad(); console.log('resolved'); } catch (e) { console.log(e.code); }
}
const list = await ck.list();
console.log(list.length, list.filter((x) => x.auto).length, list.some((x) => x.name === 'js one'));
`
	var out, errb bytes.Buffer
	res, err := ws.Tools.Exec(t.Context(), tools.ExecInput{Command: prog, Backend: "js"}, &out, &errb, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v, %+v, stderr %s", err, res, errb.String())
	}
	want := "M a,A b\ntrue one false\nunknown_checkpoint\ninvalid_argument\nunknown_checkpoint\ninvalid_argument\ninvalid_argument\nunknown_checkpoint\ninvalid_argument\n2 1 true\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	// The checkpoint was taken in the exec's name.
	ev, err := ws.Tools.Audit(t.Context(), sqlstore.AuditFilter{Actor: tools.Actor(res.ID), Op: "restore"})
	if err != nil || len(ev) != 1 {
		t.Errorf("restore audited under the exec: %+v, %v", ev, err)
	}
}
