//go:build linux && !cgofuse

package fuse_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// teamGid is a group only the test's callers are given.
const teamGid = 4242

// TestPermissionModes runs the same metadata checks by an unprivileged
// caller through both permission modes, supplementary groups included,
// and pins down what only the kernel's checks catch: the reason the mount
// uses default_permissions.
func TestPermissionModes(t *testing.T) {
	for _, mode := range []struct {
		name  string
		perms fuse.Permissions
	}{{"kernel", fuse.KernelPermissions}, {"server", fuse.ServerPermissions}} {
		t.Run(mode.name, func(t *testing.T) {
			w := fusetest.Mount(t, sfs.Options{}, fuse.Options{AllowOther: true, Permissions: mode.perms})
			for d := w.Dir; d != "/"; d = filepath.Dir(d) {
				if strings.HasPrefix(d, os.TempDir()+"/") {
					must(t, os.Chmod(d, 0o755)) // t.TempDir's 0700 would stop the walk
				}
			}
			must(t, os.WriteFile(w.Path("private"), []byte("secret"), 0o600))
			for _, d := range []struct {
				name string
				mode os.FileMode
				gid  int
			}{{"locked", 0o755, 0}, {"shared", 0o777, 0}, {"team", 0o770, teamGid}, {"secret", 0o700, 0}} {
				must(t, os.Mkdir(w.Path(d.name), d.mode))
				must(t, os.Chmod(w.Path(d.name), d.mode))
				must(t, os.Chown(w.Path(d.name), 0, d.gid))
			}
			must(t, os.WriteFile(w.Path("locked", "f"), nil, 0o644))
			must(t, os.WriteFile(w.Path("secret", "inside"), []byte("hidden"), 0o644))

			as := func(groups []uint32, script string) error {
				cmd := exec.Command("/bin/sh", "-c", script)
				cmd.Dir = "/"
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: groups}}
				return cmd.Run()
			}
			team := []uint32{teamGid}
			for _, c := range []struct {
				script string
				groups []uint32
				ok     bool
			}{
				{"mkdir " + w.Path("locked", "x"), nil, false},
				{"touch " + w.Path("locked", "new"), nil, false},
				{"rm -f " + w.Path("locked", "f"), nil, false},
				{"touch " + w.Path("shared", "mine"), nil, true},
				{"mv " + w.Path("shared", "mine") + " " + w.Path("locked", "mine"), nil, false},
				{"chmod 777 " + w.Path("private"), nil, false},
				{"touch " + w.Path("team", "a"), nil, false},
				{"touch " + w.Path("team", "b"), team, true},
				{"mkdir " + w.Path("team", "c"), team, true},
				{"stat " + w.Path("secret", "never-looked-up"), nil, false},
			} {
				if err := as(c.groups, c.script); (err == nil) != c.ok {
					t.Errorf("%q as nobody (groups %v): err=%v, want ok=%v", c.script, c.groups, err, c.ok)
				}
			}

			// What the server cannot check: opens are never sent to it
			// (answered ENOSYS), and a name the kernel has cached is walked
			// without asking it. The kernel's checks catch both.
			_, err := os.Stat(w.Path("secret", "inside")) // cached by root
			must(t, err)
			gaps := []string{"cat " + w.Path("private"), "cat " + w.Path("secret", "inside")}
			for _, script := range gaps {
				err := as(nil, script)
				if want := mode.perms == fuse.ServerPermissions; (err == nil) != want {
					t.Errorf("%q as nobody: err=%v, want ok=%v", script, err, want)
				}
			}
		})
	}
}
