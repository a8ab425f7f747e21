//go:build linux && !cgofuse

package fuse_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// BenchmarkPermissionModes times metadata operations through a mount with
// the kernel's checks and one with the server's, in alternating batches so
// that load on the machine hits both alike; it reports each mode's median
// µs per operation, their ratio (server/kernel) and the FUSE requests per
// operation of each:
//
//	go test ./fs/fuse -run '^$' -bench PermissionModes -benchtime 15x
func BenchmarkPermissionModes(b *testing.B) {
	const batch = 200
	type mode struct {
		name string
		w    *fusetest.Workspace
	}
	modes := []mode{
		{"kernel", fusetest.Mount(b, sfs.Options{}, fuse.Options{Permissions: fuse.KernelPermissions})},
		{"server", fusetest.Mount(b, sfs.Options{}, fuse.Options{Permissions: fuse.ServerPermissions})},
	}
	data := make([]byte, 4096)
	ops := []struct {
		name string
		do   func(dir string, i int) error
	}{
		{"create", func(dir string, i int) error {
			fd, err := unix.Open(fmt.Sprintf("%s/f%d", dir, i), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
			if err != nil {
				return err
			}
			_, err = unix.Write(fd, data)
			return errors.Join(err, unix.Close(fd))
		}},
		{"stat-missing", func(dir string, i int) error {
			var st unix.Stat_t
			if err := unix.Lstat(fmt.Sprintf("%s/m%d", dir, i), &st); !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("lstat of a missing name: %v", err)
			}
			return nil
		}},
		{"rename", func(dir string, i int) error {
			return unix.Rename(fmt.Sprintf("%s/f%d", dir, i), fmt.Sprintf("%s/r%d", dir, i))
		}},
		{"unlink", func(dir string, i int) error { return unix.Unlink(fmt.Sprintf("%s/r%d", dir, i)) }},
		{"mkdir", func(dir string, i int) error { return unix.Mkdir(fmt.Sprintf("%s/d%d", dir, i), 0o755) }},
		{"rmdir", func(dir string, i int) error { return unix.Rmdir(fmt.Sprintf("%s/d%d", dir, i)) }},
	}
	// took[op][mode] are the µs per operation of every batch.
	took := make([][][]float64, len(ops))
	for i := range took {
		took[i] = make([][]float64, len(modes))
	}
	requests := make([][]float64, len(ops)) // [op][mode], summed over batches
	for i := range requests {
		requests[i] = make([]float64, len(modes))
	}
	round := 0
	for b.Loop() {
		dirs := make([]string, len(modes))
		for k, m := range modes {
			dirs[k] = m.w.Path(fmt.Sprintf("round%d", round))
			if err := os.Mkdir(dirs[k], 0o755); err != nil {
				b.Fatal(err)
			}
		}
		// Each op's batches run back to back on both mounts, who goes
		// first alternating, so both see the same moment's load.
		for o, op := range ops {
			for j := range modes {
				k := (j + round) % len(modes)
				var d time.Duration
				reqs := requestsDuring(b, func() {
					start := time.Now()
					for i := range batch {
						if err := op.do(dirs[k], i); err != nil {
							b.Fatalf("%s %s: %v", modes[k].name, op.name, err)
						}
					}
					d = time.Since(start)
				})
				took[o][k] = append(took[o][k], float64(d.Microseconds())/batch)
				for _, n := range reqs {
					requests[o][k] += n
				}
			}
		}
		round++
	}
	for o, op := range ops {
		kernel, server := median(took[o][0]), median(took[o][1])
		b.ReportMetric(kernel, op.name+"-kernel-µs/op")
		b.ReportMetric(server, op.name+"-server-µs/op")
		b.ReportMetric(server/kernel, op.name+"-server/kernel")
		for k, m := range modes {
			b.ReportMetric(requests[o][k]/float64(batch*round), op.name+"-"+m.name+"-requests/op")
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestDirAttrsDroppedAfterChange pins down where the GETATTR of a directory
// after a change comes from: the kernel drops the directory's attributes
// after a create in either mode (it does not update mtime, ctime and nlink
// itself), so the server could not spare it by keeping them valid; with
// default_permissions the next walk through the directory fetches them, and
// without it the next stat of the directory does.
func TestDirAttrsDroppedAfterChange(t *testing.T) {
	for _, c := range []struct {
		name                string
		perms               fuse.Permissions
		onWalk, onStatOfDir float64
	}{
		{"kernel", fuse.KernelPermissions, 1, 0},
		{"server", fuse.ServerPermissions, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A drop_caches meanwhile (another process's) turns the walk's
			// GETATTR into a LOOKUP: measured again on a new mount.
			var walk, statDir map[string]float64
			for attempt := 1; ; attempt++ {
				drops := cacheDrops(t)
				w := fusetest.Mount(t, sfs.Options{}, fuse.Options{Permissions: c.perms})
				must(t, os.Mkdir(w.Path("d"), 0o755))
				lstat(t, w.Path("d"))
				must(t, os.WriteFile(w.Path("d", "a"), nil, 0o644))
				walk = requestsDuring(t, func() { lstat(t, w.Path("d", "a")) })
				statDir = requestsDuring(t, func() { lstat(t, w.Path("d")) })
				if cacheDrops(t) == drops || attempt == 5 {
					break
				}
				t.Logf("attempt %d: the kernel's caches were dropped meanwhile (%v, %v); measuring again", attempt, walk, statDir)
			}
			if walk["getattr"] != c.onWalk || statDir["getattr"] != c.onStatOfDir {
				t.Errorf("GETATTRs after a create: %v on the next walk through the directory, %v on its stat; want %v and %v",
					walk["getattr"], statDir["getattr"], c.onWalk, c.onStatOfDir)
			}
		})
	}
}
