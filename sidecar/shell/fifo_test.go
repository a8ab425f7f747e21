package shell

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/sidecar"
)

// entries lists dir's names, or nil if it does not exist.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// The backend leaves nothing in the host's temporary directory: it makes
// its directory at the first process substitution, not before (an exec
// without one touches no host directory), each exec's FIFOs go with the
// exec, killed or not, the backend's directory goes at Close, and a
// crashed owner's is removed by the next backend to make its own.
func TestFIFODirCleanup(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	// Leftovers of owners that died: unlocked (stale), locked (live),
	// lock-less and old (stale), lock-less and young (maybe starting).
	mk := func(name string, lock bool, age time.Duration) string {
		dir := filepath.Join(tmp, fifoRootPrefix+name)
		if err := os.MkdirAll(filepath.Join(dir, "1"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(filepath.Join(dir, "1", fifoPrefix+"x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(dir, fifoLockName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	mk("crashed", true, 0)
	live := mk("live", true, 0)
	mk("oldstyle", false, time.Hour)
	young := mk("young", false, 0)
	held, err := os.Open(filepath.Join(live, fifoLockName))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	leftovers := entries(t, tmp)

	b, _ := newTestBackend(t, Options{})
	for _, cmd := range []string{
		"true",
		"echo hi | cat > /tmp/x; cat /tmp/x; (echo sub)",
		`f() { echo '<(quoted)' "$(echo '>(x)')"; }; f <<'EOF'
<(here)
EOF`,
		"sh -c 'echo hi'",
	} {
		if got := execReq(t, b, sidecar.Request{Command: cmd}); got.ExitCode != 0 {
			t.Errorf("%q: exit %d: %s", cmd, got.ExitCode, got.stderr)
		}
		if got := entries(t, tmp); !sameSet(got, leftovers) {
			t.Errorf("after %q: %v, want the leftovers %v only", cmd, got, leftovers)
		}
	}
	if own := b.m.fifos.current(); own != "" {
		t.Fatalf("FIFO directory %s made without a process substitution", own)
	}

	// Process substitution in the script, or parsed only while it runs.
	for _, cmd := range []string{
		"cat <(echo hi)",
		"sh -c 'cat <(echo hi)'",
		"eval 'cat <(echo hi)'",
		"echo 'cat <(echo hi)' > /tmp/s; . /tmp/s",
		"shopt -s expand_aliases; alias c='cat <(echo hi)'\nc",
		"trap 'cat <(echo hi)' EXIT",
	} {
		got := execReq(t, b, sidecar.Request{Command: cmd})
		if got.stdout != "hi\n" || got.ExitCode != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", cmd, got.ExitCode, got.stdout, got.stderr)
		}
	}
	own := b.m.fifos.current()
	if own == "" {
		t.Fatal("no FIFO directory after a process substitution")
	}
	want := []string{filepath.Base(own), filepath.Base(live), filepath.Base(young)}
	if got := entries(t, tmp); !sameSet(got, want) {
		t.Errorf("after the first process substitution: %v, want %v", got, want)
	}

	for _, cmd := range []string{
		"cat <(echo hi) >/dev/null; diff <(echo a) <(echo a)",
		"while read l; do :; done < <(yes)", // killed by the timeout
		"cat <(sleep 60)",
		"echo <(echo never read); sleep 60", // the writer waits for a reader
		"echo >(cat); sleep 60",             // the reader waits for a writer
		"sleep 60",                          // killed, with no FIFO directory
	} {
		baseline := runtime.NumGoroutine()
		got := execReq(t, b, sidecar.Request{Command: cmd, Limits: sidecar.Limits{Timeout: 300 * time.Millisecond}})
		settled(t, baseline)
		if strings.Contains(got.stderr, "fifo") {
			t.Errorf("%s: %s", cmd, got.stderr)
		}
		if left := entries(t, own); !sameSet(left, []string{fifoLockName}) {
			t.Errorf("after %q: %v left", cmd, left)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if left := entries(t, own); left != nil {
		t.Errorf("after Close: %v", left)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

// TestScriptSeesItsOwnTMPDIR: the interpreter takes the backend's private
// FIFO directory for TMPDIR, but the script sees its own TMPDIR, or none.
func TestScriptSeesItsOwnTMPDIR(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "[] 0\nhi\n"},
		{map[string]string{"TMPDIR": "/workspace/t"}, "[/workspace/t] 1\nhi\n"},
	} {
		got := execReq(t, b, sidecar.Request{Command: `echo "[$TMPDIR]" $(env | grep -c '^TMPDIR='); cat <(echo hi)`, Env: tc.env})
		if got.stdout != tc.want || got.ExitCode != 0 {
			t.Errorf("env %v: exit %d, stdout %q, stderr %q; want %q", tc.env, got.ExitCode, got.stdout, got.stderr, tc.want)
		}
	}
	if own := b.m.fifos.current(); own == "" || !strings.HasPrefix(own, os.TempDir()) {
		t.Errorf("FIFO directory %q, want one under %s", own, os.TempDir())
	}
}
