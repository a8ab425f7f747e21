package js

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
)

// The real-package corpus: testdata/packages/package-lock.json pins the
// npm packages its scripts use. They are installed once per lockfile with
// npm ci into the tools cache (make deps does it; so does the first test
// that needs them), and copied once into a store there; each test takes a
// copy of that store, with the packages at /node_modules.

// toolsDir is the Makefile's TOOLS: where the tests' downloads live,
// outside the checkout.
func toolsDir() string {
	if d := os.Getenv("SQLFS_TOOLS"); d != "" {
		return d
	}
	return "/var/cache/sqlfs-tools"
}

var packagesOnce = sync.OnceValues(installPackages)

// installPackages runs npm ci for the lockfile unless its directory is
// there, and builds the store of its node_modules; it returns the
// directory holding node_modules and packages.db.
func installPackages() (string, error) {
	lock, err := os.ReadFile("testdata/packages/package-lock.json")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(toolsDir(), "js-packages-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "packages.db")); err == nil {
		return dir, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm (Debian package npm): %w", err)
	}
	if err := os.MkdirAll(toolsDir(), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(toolsDir(), ".js-packages-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join("testdata/packages", f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--cache", filepath.Join(toolsDir(), "npm-cache"))
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %w\n%s", err, out)
	}
	if err := buildPackagesStore(filepath.Join(tmp, "node_modules"), filepath.Join(tmp, "packages.db")); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "packages.db")); serr == nil {
			return dir, nil // another test process was first
		}
		return "", err
	}
	return dir, nil
}

// buildPackagesStore copies the host tree nm into a new store at db as
// /node_modules: files, directories, symlinks, modes.
func buildPackagesStore(nm, db string) error {
	fsys, err := sfs.Open(context.Background(), db, sfs.Options{})
	if err != nil {
		return err
	}
	err = filepath.WalkDir(nm, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(nm, p)
		dest := path.Join("/node_modules", filepath.ToSlash(rel))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return fsys.Symlink(target, dest)
		case d.IsDir():
			return fsys.MkdirAll(dest, 0o755)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return fsys.WriteFile(dest, data, uint32(fi.Mode().Perm()))
		}
	})
	return errors.Join(err, fsys.Close())
}

// newPackagesBackend is newTestBackend on a copy of the packages store;
// it also returns the host directory whose node_modules node uses.
func newPackagesBackend(t testing.TB, opts Options) (*Backend, *shell.Backend, *sfs.FS, string) {
	t.Helper()
	dir, err := packagesOnce()
	fusetest.Require(t, "the npm packages of testdata/packages (make deps, or npm and the registry)", err)
	db := filepath.Join(t.TempDir(), "ws.db")
	if err := copyFile(filepath.Join(dir, "packages.db"), db); err != nil {
		t.Fatal(err)
	}
	b, sh, fsys := backendOn(t, db, opts, shell.Options{})
	return b, sh, fsys, dir
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Close())
}

// nodeIn is a host node command running code in dir, with the packages'
// node_modules linked into dir's parent.
func nodeIn(t testing.TB, dir string, args ...string) *exec.Cmd {
	node, err := exec.LookPath("node")
	fusetest.Require(t, "nodejs (Debian package nodejs)", err)
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + filepath.Join(filepath.Dir(dir), "node_modules", ".bin") + ":/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "TZ=UTC"}
	return cmd
}

// linkPackages makes root/node_modules the installed packages, for node.
func linkPackages(t testing.TB, pkgDir, root string) {
	t.Helper()
	if err := os.Symlink(filepath.Join(pkgDir, "node_modules"), filepath.Join(root, "node_modules")); err != nil && !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
}

// An entries function yields the entries of a tree below its root: the
// path relative to it, the type bits, a file's data, a symlink's target.
type entries func(yield func(rel string, mode fs.FileMode, data []byte, target string))

// treeText lists a tree's entries, sorted, with each file's data as file
// writes it.
func treeText(list entries, file func([]byte) string) string {
	var lines []string
	list(func(rel string, mode fs.FileMode, data []byte, target string) {
		switch {
		case mode&fs.ModeSymlink != 0:
			lines = append(lines, rel+" -> "+target)
		case mode.IsDir():
			lines = append(lines, rel+"/")
		default:
			lines = append(lines, rel+" "+file(data))
		}
	})
	return joinSorted(lines)
}

// digest is a file's length and sha256, for comparing produced documents.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%d %x", len(data), sum[:8])
}

func hostEntries(t testing.TB, root string) entries {
	return func(yield func(string, fs.FileMode, []byte, string)) {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			var data []byte
			var target string
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				target, _ = os.Readlink(p)
			case !d.IsDir():
				data, _ = os.ReadFile(p)
			}
			yield(rel, d.Type(), data, target)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func storeEntries(t testing.TB, fsys *sfs.FS, root string) entries {
	return func(yield func(string, fs.FileMode, []byte, string)) {
		var walk func(dir string)
		walk = func(dir string) {
			ents, err := fsys.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				p := path.Join(dir, e.Name)
				rel := strings.TrimPrefix(p, root+"/")
				switch e.Mode & syscall.S_IFMT {
				case syscall.S_IFLNK:
					target, _ := fsys.Readlink(p)
					yield(rel, fs.ModeSymlink, nil, target)
				case syscall.S_IFDIR:
					yield(rel, fs.ModeDir, nil, "")
					walk(p)
				default:
					data, _ := fsys.ReadFile(p)
					yield(rel, 0, data, "")
				}
			}
		}
		walk(root)
	}
}

// knownDifferences are the corpus scripts that give another answer than
// node without an ERR_SQLFS_UNSUPPORTED error: engine bugs not fixed yet.
var knownDifferences = map[string]string{}

// TestPackagesAgainstNode runs the scripts of testdata/packages, which use
// real npm packages (CommonJS, ES-only, documents, markdown, TypeScript,
// package CLIs through node_modules/.bin), with host node in a native
// directory and with the js backend on a store, and compares stdout, the
// exit status (node's must be 0: a script failing on both sides proves
// nothing) and the files each left. A .js script runs as `node -e`, a .mjs
// one as `node main.mjs`, a .sh one is a shell command line (bash on the
// host, the shell backend on the store). At least 90% must agree; each
// of the others must fail with one line saying what is unsupported.
func TestPackagesAgainstNode(t *testing.T) {
	be, sh, fsys, pkgDir := newPackagesBackend(t, Options{})
	var scripts []string
	for _, pat := range []string{"*.js", "*.mjs", "*.sh"} {
		m, _ := filepath.Glob(filepath.Join("testdata/packages", pat))
		scripts = append(scripts, m...)
	}
	if len(scripts) < 30 {
		t.Fatalf("%d scripts", len(scripts))
	}
	root := t.TempDir()
	linkPackages(t, pkgDir, root)
	var failed []string
	ran, agreed := 0, 0
	for _, script := range scripts {
		base := filepath.Base(script)
		name := strings.TrimSuffix(base, filepath.Ext(base))
		t.Run(base, func(t *testing.T) {
			ran++
			code, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := fsys.Mkdir("/"+name, 0o755); err != nil {
				t.Fatal(err)
			}
			var cmd *exec.Cmd
			req := sidecar.Request{Dir: name, Limits: sidecar.Limits{Timeout: 3 * time.Minute}}
			var backend sidecar.Backend = be
			switch filepath.Ext(base) {
			case ".js":
				cmd = nodeIn(t, dir, "-e", string(code))
				req.Command = string(code)
			case ".mjs":
				for _, put := range []func() error{
					func() error { return os.WriteFile(filepath.Join(dir, "main.mjs"), code, 0o644) },
					func() error { return fsys.WriteFile("/"+name+"/main.mjs", code, 0o644) },
				} {
					if err := put(); err != nil {
						t.Fatal(err)
					}
				}
				cmd = nodeIn(t, dir, "main.mjs")
				req.Command, backend = "node main.mjs", sh
			case ".sh":
				cmd = nodeIn(t, dir)
				cmd.Path, cmd.Args = "/bin/bash", []string{"bash", "-c", string(code)}
				req.Command, backend = string(code), sh
			}
			nodeOut, nodeErr, nodeExit := runHost(t, cmd)
			if nodeExit != 0 {
				// A script failing in node too would agree by failing.
				t.Fatalf("node exits %d: the script is broken\n%s", nodeExit, nodeErr)
			}
			start := time.Now()
			out := run(t, backend, req)
			t.Logf("%v in the js backend", time.Since(start).Round(time.Millisecond))
			same := out.ExitCode == nodeExit && out.stdout == nodeOut
			if same {
				if got, want := treeText(storeEntries(t, fsys, "/"+name), digest), treeText(hostEntries(t, dir), digest); got != want {
					same = false
					t.Logf("tree differs\n--- sqlfs\n%s--- node\n%s", got, want)
				}
			}
			if same {
				agreed++
				return
			}
			msg, _, _ := strings.Cut(strings.TrimSpace(out.stderr), "\n")
			if strings.Contains(msg, "ERR_SQLFS_UNSUPPORTED") {
				failed = append(failed, base+": "+msg)
				return
			}
			if why, ok := knownDifferences[base]; ok {
				failed = append(failed, base+": "+why)
				return
			}
			t.Errorf("differs from node without saying what is unsupported: exit %d (node %d)\n--- sqlfs\n%s--- node\n%s--- stderr\n%s",
				out.ExitCode, nodeExit, out.stdout, nodeOut, out.stderr)
		})
	}
	if ran < len(scripts) {
		return // -run chose some
	}
	for base := range knownDifferences {
		if !slices.ContainsFunc(failed, func(f string) bool { return strings.HasPrefix(f, base+":") }) {
			t.Errorf("%s agrees with node now: take it off knownDifferences", base)
		}
	}
	rate := float64(agreed) / float64(len(scripts))
	t.Logf("%d of %d scripts agree with node (%.0f%%); the others:\n%s", agreed, len(scripts), 100*rate, strings.Join(failed, "\n"))
	if rate < 0.9 {
		t.Errorf("only %.0f%% agree with node, want at least 90%%", 100*rate)
	}
}
