package js

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
)

// randomFSProgram writes a program of n random fs calls over a few names,
// each printing its result or its error code, so node on a native
// directory and the js backend can be compared call by call.
func randomFSProgram(r *rand.Rand, n int) string {
	names := []string{"a", "b", "d", "d/x", "d/y", "d/e", "d/e/z", "l", "../esc", "", "a/"}
	pick := func() string { return names[r.IntN(len(names))] }
	ops := []func() string{
		func() string { return fmt.Sprintf("fs.writeFileSync(%q, %q)", pick(), strings.Repeat("w", r.IntN(5))) },
		func() string { return fmt.Sprintf("fs.appendFileSync(%q, 'z')", pick()) },
		func() string { return fmt.Sprintf("fs.readFileSync(%q, 'utf8')", pick()) },
		func() string { return fmt.Sprintf("fs.mkdirSync(%q, { recursive: %v })", pick(), r.IntN(2) == 0) },
		func() string { return fmt.Sprintf("fs.rmdirSync(%q)", pick()) },
		func() string { return fmt.Sprintf("fs.unlinkSync(%q)", pick()) },
		func() string {
			return fmt.Sprintf("fs.rmSync(%q, { recursive: %v, force: %v })", pick(), r.IntN(2) == 0, r.IntN(2) == 0)
		},
		func() string { return fmt.Sprintf("fs.renameSync(%q, %q)", pick(), pick()) },
		func() string { return fmt.Sprintf("fs.readdirSync(%q).join(',')", pick()) },
		func() string { return fmt.Sprintf("fs.statSync(%q).isDirectory()", pick()) },
		func() string { return fmt.Sprintf("fs.lstatSync(%q).size", pick()) },
		func() string { return fmt.Sprintf("fs.symlinkSync(%q, %q)", pick(), pick()) },
		func() string { return fmt.Sprintf("copy(%q, %q)", pick(), pick()) },
		func() string { return fmt.Sprintf("fs.truncateSync(%q, %d)", pick(), r.IntN(4)) },
		func() string { return fmt.Sprintf("fs.existsSync(%q)", pick()) },
	}
	var b strings.Builder
	b.WriteString("const fs = require('fs');\nconst t = (f) => { try { console.log(JSON.stringify(f())) } catch (e) { console.log(e.code) } };\n")
	// Copying a directory fails with EISDIR, after which libuv unlinks the
	// destination it opened, an existing file included; the js backend
	// keeps the file. The programs do not copy directories.
	b.WriteString("const copy = (s, d) => { if (s && fs.statSync(s, { throwIfNoEntry: false })?.isDirectory()) return 'skip'; return fs.copyFileSync(s, d) };\n")
	for range n {
		fmt.Fprintf(&b, "t(() => %s);\n", ops[r.IntN(len(ops))]())
	}
	return b.String()
}

// TestRandomFSAgainstNode compares random sequences of fs calls, errors
// included, with node on a native directory: 80 seeds, all agreeing.
func TestRandomFSAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	fusetest.Require(t, "nodejs (Debian package nodejs)", err)
	b, _, fsys := newTestBackend(t, Options{})
	for seed := range uint64(80) {
		prog := randomFSProgram(rand.New(rand.NewPCG(seed, 15)), 60)
		root := t.TempDir()
		cmd := exec.Command("sh", "-c", "mkdir w && cd w && exec "+node+" -e \"$0\"", prog)
		cmd.Dir = root
		var want bytes.Buffer
		cmd.Stdout = &want
		if err := cmd.Run(); err != nil {
			t.Fatalf("seed %d: node: %v", seed, err)
		}
		name := fmt.Sprintf("r%d", seed)
		if err := fsys.MkdirAll("/"+name+"/w", 0o755); err != nil {
			t.Fatal(err)
		}
		out := run(t, b, sidecar.Request{Command: prog, Dir: name + "/w"})
		if out.stdout != want.String() {
			got, exp, calls := strings.Split(out.stdout, "\n"), strings.Split(want.String(), "\n"), strings.Split(prog, "\n")[3:]
			for i := range min(len(got), len(exp), len(calls)) {
				if got[i] != exp[i] {
					t.Errorf("seed %d: call %d %s: sqlfs %s, node %s (stderr %q)", seed, i, calls[i], got[i], exp[i], out.stderr)
					if testing.Verbose() {
						t.Logf("calls:\n%s\noutputs:\n%s\nnode:\n%s", strings.Join(calls[:i+1], "\n"), strings.Join(got[:i+1], "\n"), strings.Join(exp[:i+1], "\n"))
					}
					break
				}
			}
			continue
		}
		if got, want := storeTree(t, fsys, "/"+name), nativeTree(t, root); got != want {
			t.Errorf("seed %d: tree differs\n--- sqlfs\n%s--- node\n%s", seed, got, want)
		}
	}
}
