package git_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/git"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// gitEnv fixes identity and dates so both sides write the same objects.
var gitEnv = map[string]string{
	"GIT_AUTHOR_NAME":     "A U Thor",
	"GIT_AUTHOR_EMAIL":    "author@example.com",
	"GIT_AUTHOR_DATE":     "@1700000000 +0100",
	"GIT_COMMITTER_NAME":  "A U Thor",
	"GIT_COMMITTER_EMAIL": "author@example.com",
	"GIT_COMMITTER_DATE":  "@1700000000 +0100",
	"LC_ALL":              "C",
	"TZ":                  "UTC",
}

type outcome struct {
	stdout, stderr string
	code           int
}

// runNative runs script with bash and the real git in dir, with extra
// environment variables.
func runNative(t testing.TB, dir, script string, extra ...string) outcome {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}, extra...)
	for k, v := range gitEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash: %v", err)
	}
	fix := func(s string) string { return strings.ReplaceAll(s, dir, sidecar.WorkspaceDir) }
	return outcome{fix(out.String()), fix(errb.String()), code}
}

func newStore(t testing.TB) (*shell.Backend, *sfs.FS) { return newStoreWith(t, shell.Options{}) }

// newStoreWith is a new store and a shell backend over it with opts and
// this git as its git command, as the workspace has it.
func newStoreWith(t testing.TB, opts shell.Options) (*shell.Backend, *sfs.FS) {
	t.Helper()
	opts.Commands = map[string]builtin.Func{"git": git.Main}
	fsys, err := sfs.Open(context.Background(), filepath.Join(t.TempDir(), "ws.db"), sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := shell.New(fsys, opts)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if err := fsys.Close(); err != nil {
			t.Error(err)
		}
	})
	return b, fsys
}

func runBuiltin(t testing.TB, b *shell.Backend, script string) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := b.Exec(context.Background(), sidecar.Request{Command: script, Env: gitEnv, Stdout: &out, Stderr: &errb, AllowNetwork: true})
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	return outcome{out.String(), errb.String(), res.ExitCode}
}

// export copies the store's tree to dir with modes and symlinks, so real
// git can check what the built-in wrote.
func export(t testing.TB, fsys *sfs.FS, from, dir string) {
	t.Helper()
	ents, err := fsys.ReadDir(from)
	if err != nil {
		t.Fatalf("export %s: %v", from, err)
	}
	for _, e := range ents {
		src, dst := path.Join(from, e.Name), filepath.Join(dir, e.Name)
		a, err := fsys.Lstat(src)
		if err != nil {
			t.Fatal(err)
		}
		switch a.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			export(t, fsys, src, dst)
		case syscall.S_IFLNK:
			target, err := fsys.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
		default:
			data, err := fsys.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, os.FileMode(a.Mode&0o777)); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dst, os.FileMode(a.Mode&0o777)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// inspect is what real git says about a repository afterwards.
func inspect(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return out
	}
	for name, args := range map[string][]string{
		"fsck":     {"fsck", "--strict", "--no-progress"},
		"log":      {"log", "--all", "--format=%H %T %P %an %ae %ad %cn %ce %cd %s", "--date=raw"},
		"status":   {"status", "--porcelain=v2", "-b", "-uall"},
		"ls-files": {"ls-files", "-s"},
		"refs":     {"for-each-ref", "--format=%(refname) %(objectname) %(symref)"},
		"head":     {"symbolic-ref", "-q", "HEAD"},
		"tree":     {"ls-files", "-o", "--exclude-standard"},
		"reflog":   {"reflog", "show", "--format=%h %gd %gs"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
		b, _ := cmd.CombinedOutput()
		out[name] = cloneSource.ReplaceAllString(string(b), "clone: from SOURCE")
		if name == "fsck" {
			// Dangling objects and notices are not errors: git writes
			// an empty tree for a refused commit; the built-in does not.
			var kept []string
			for _, l := range strings.Split(out[name], "\n") {
				if !strings.HasPrefix(l, "dangling ") && !strings.HasPrefix(l, "notice: ") {
					kept = append(kept, l)
				}
			}
			out[name] = strings.Join(kept, "\n")
		}
	}
	// The reflog files as written; a clone's names its source by absolute
	// path, which differs between the two sides.
	var logs []string
	_ = filepath.Walk(filepath.Join(dir, ".git", "logs"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		logs = append(logs, rel+":\n"+cloneSource.ReplaceAllString(string(data), "clone: from SOURCE"))
		return nil
	})
	out["reflog files"] = strings.Join(logs, "")
	return out
}

var cloneSource = regexp.MustCompile(`clone: from .*`)

// worktree lists the files under dir (outside .git) with their content.
func worktree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.Name() == ".git" {
			return filepath.SkipDir
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			files[rel] = "-> " + target
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			files[rel] = fi.Mode().Perm().String() + " " + string(data)
		case fi.IsDir():
			files[rel+"/"] = ""
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// repos lists the directories under dir (itself included) that hold a
// repository.
func repos(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() && fi.Name() == ".git" {
			rel, _ := filepath.Rel(dir, filepath.Dir(p))
			out = append(out, rel)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpus runs every script of testdata/corpus with real git on a
// native directory and with the built-in on a store, and compares what
// they print, their exit status, the resulting tree, and what real git
// (fsck --strict, log, status, ls-files, refs) says about both
// repositories afterwards.
func TestCorpus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		fusetest.Require(t, "git", err)
	}
	scripts, err := filepath.Glob("testdata/corpus/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, sp := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(sp), ".sh"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(sp)
			if err != nil {
				t.Fatal(err)
			}
			script := string(data)
			native := t.TempDir()
			want := runNative(t, native, script)
			b, fsys := newStore(t)
			got := runBuiltin(t, b, script)
			if got.stdout != want.stdout {
				t.Errorf("stdout differs\n--- git\n%s--- built-in\n%s", want.stdout, got.stdout)
			}
			if !strings.Contains(script, "# stderr: unstable") && got.stderr != want.stderr {
				t.Errorf("stderr differs\n--- git\n%s--- built-in\n%s", want.stderr, got.stderr)
			}
			if got.code != want.code {
				t.Errorf("exit status: git %d, built-in %d (stderr %q)", want.code, got.code, got.stderr)
			}
			copyDir := t.TempDir()
			export(t, fsys, "/", copyDir)
			wt, gt := worktree(t, native), worktree(t, copyDir)
			for p, v := range wt {
				if gt[p] != v {
					t.Errorf("tree: %s: git %q, built-in %q", p, v, gt[p])
				}
			}
			for p := range gt {
				if _, ok := wt[p]; !ok {
					t.Errorf("tree: %s only in the built-in's", p)
				}
			}
			for _, p := range repos(t, native) {
				wi, gi := inspect(t, filepath.Join(native, p)), inspect(t, filepath.Join(copyDir, p))
				for k, v := range wi {
					if gi[k] != v {
						t.Errorf("real git %s in %s differs\n--- on git's repository\n%s--- on the built-in's\n%s", k, p, v, gi[k])
					}
				}
			}
		})
	}
}
