package js

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
)

// TestCorpusAgainstNode runs every script of testdata/corpus with Debian's
// node in a native directory and with the js backend in a workspace
// directory, in a worker and in-process, and compares stdout, the exit
// status and the tree the script left behind.
func TestCorpusAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	fusetest.Require(t, "nodejs (Debian package nodejs)", err)
	scripts, err := filepath.Glob("testdata/corpus/*.js")
	if err != nil || len(scripts) < 60 {
		t.Fatalf("corpus: %d scripts, %v", len(scripts), err)
	}
	for _, r := range []struct {
		name   string
		runner Runner
	}{{"worker", nil}, {"inprocess", InProcess}} {
		t.Run(r.name, func(t *testing.T) { runCorpus(t, node, scripts, r.runner) })
	}
}

func runCorpus(t *testing.T, node string, scripts []string, runner Runner) {
	b, _, fsys := newTestBackend(t, Options{Runner: runner})
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".js")
		t.Run(name, func(t *testing.T) {
			code, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			cmd := exec.Command(node, "-e", string(code))
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
			nodeOut, _, nodeExit := runHost(t, cmd)

			if err := fsys.Mkdir("/"+name, 0o755); err != nil {
				t.Fatal(err)
			}
			out := run(t, b, sidecar.Request{Command: string(code), Dir: name})
			if out.ExitCode != nodeExit {
				t.Errorf("exit %d, node %d; stderr:\n%s", out.ExitCode, nodeExit, out.stderr)
			}
			if out.stdout != nodeOut {
				t.Errorf("stdout differs\n--- sqlfs\n%s--- node\n%s--- stderr\n%s", out.stdout, nodeOut, out.stderr)
			}
			if got, want := storeTree(t, fsys, "/"+name), nativeTree(t, dir); got != want {
				t.Errorf("tree differs\n--- sqlfs\n%s--- node\n%s", got, want)
			}
		})
	}
}

// A tree is listed one entry a line: path, type, and contents or target.
func nativeTree(t *testing.T, root string) string { return treeText(hostEntries(t, root), quoted) }

func storeTree(t *testing.T, fsys *sfs.FS, root string) string {
	return treeText(storeEntries(t, fsys, root), quoted)
}

// runHost runs cmd and returns its output and exit status.
func runHost(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, exit int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", cmd.Path, err)
		}
		exit = ee.ExitCode()
	}
	return out.String(), errb.String(), exit
}

func quoted(data []byte) string { return fmt.Sprintf("%q", data) }

func joinSorted(lines []string) string {
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
