package fuse_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// fuseRequests is the number of FUSE requests served so far, by op.
func fuseRequests(t testing.TB) map[string]float64 {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "sqlfs_fuse_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// requestsDuring returns the requests fn caused, by op, leaving out none.
func requestsDuring(t testing.TB, fn func()) map[string]float64 {
	t.Helper()
	before := fuseRequests(t)
	fn()
	diff := map[string]float64{}
	for op, n := range fuseRequests(t) {
		if d := n - before[op]; d != 0 {
			diff[op] = d
		}
	}
	return diff
}

// inodeMount mounts with the Linux frontend; the portable one (libfuse's
// path API) cannot give hard links one inode, and opens every file.
func inodeMount(t *testing.T) *fusetest.Workspace {
	if fuse.LibFUSE != 0 {
		t.Skipf("libfuse %d's path API cannot do this", fuse.LibFUSE)
	}
	return mount(t)
}

func makeTree(t *testing.T, root string, dirs, files int) {
	t.Helper()
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", d), "sub")
		must(t, os.MkdirAll(dir, 0o755))
		for f := range files {
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), []byte(fmt.Sprintf("file %d %d needle\n", d, f)), 0o644))
		}
	}
}

// Warm stat, read, find and grep -r make no round trip: the kernel keeps
// entries, attributes, pages and listings, and is never asked to open.
func TestWarmPathsMakeNoRequests(t *testing.T) {
	w := inodeMount(t)
	makeTree(t, w.Dir, 10, 20)
	walk := func() {
		out, err := exec.Command("grep", "-rc", "needle", w.Dir).Output()
		must(t, err)
		if n := strings.Count(string(out), ":1\n"); n != 200 {
			t.Fatalf("grep -r found %d files, want 200", n)
		}
		out, err = exec.Command("find", w.Dir, "-name", "*.txt").Output()
		must(t, err)
		if n := strings.Count(string(out), "\n"); n != 200 {
			t.Fatalf("find found %d files, want 200", n)
		}
		for d := range 10 {
			p := w.Path(fmt.Sprintf("d%02d", d), "sub", "f007.txt")
			lstat(t, p)
			if got := readFile(t, p); got != fmt.Sprintf("file %d 7 needle\n", d) {
				t.Fatalf("read %s: %q", p, got)
			}
		}
		if _, err := os.Stat(w.Path("missing")); !os.IsNotExist(err) {
			t.Fatalf("stat missing: %v", err)
		}
	}
	// The first walk reads every file; a READ makes the kernel drop the
	// file's atime, which the second walk's stats fetch once. From then
	// on nothing is asked but statfs, which the kernel never caches (find
	// and grep call it once per run).
	walk()
	walk()
	got := requestsDuring(t, walk)
	delete(got, "statfs")
	if len(got) != 0 {
		t.Fatalf("warm stat, read, find, grep -r sent requests: %v", got)
	}
}

// Every name of a hard-linked file shows the same nlink, size and data at
// once, whichever name changed it.
func TestHardLinksShareOneInode(t *testing.T) {
	w := inodeMount(t)
	names := []string{w.Path("a"), w.Path("b"), w.Path("d", "c")}
	must(t, os.Mkdir(w.Path("d"), 0o755))
	must(t, os.WriteFile(names[0], []byte("one"), 0o644))
	for _, n := range names[1:] {
		must(t, os.Link(names[0], n))
	}
	check := func(wantNlink uint64, want string, names ...string) {
		t.Helper()
		for _, n := range names {
			st := lstat(t, n)
			if st.Nlink != wantNlink || st.Size != int64(len(want)) {
				t.Fatalf("%s: nlink %d size %d, want %d %d", n, st.Nlink, st.Size, wantNlink, len(want))
			}
			if got := readFile(t, n); got != want {
				t.Fatalf("%s reads %q, want %q", n, got, want)
			}
		}
	}
	check(3, "one", names...)
	for i, n := range names {
		data := strings.Repeat(fmt.Sprint(i), 10*(i+1))
		f, err := os.OpenFile(n, os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.WriteString(data)
		must(t, err)
		must(t, f.Close())
		want, err := os.ReadFile(n)
		must(t, err)
		check(3, string(want), names...)
	}
	must(t, os.Remove(names[1]))
	want := readFile(t, names[0])
	check(2, want, names[0], names[2])
	// The same through the core, from outside the kernel.
	must(t, w.FS.Link("/a", "/e"))
	check(3, want, names[0], names[2], w.Path("e"))
	must(t, w.FS.Remove("/e"))
	check(2, want, names[0], names[2])
}

// chown, utimensat and xattrs with AT_SYMLINK_NOFOLLOW change the link,
// dangling or not, never its target, on both frontends.
func TestSetattrOnSymlinksNeverFollows(t *testing.T) {
	w := mount(t)
	must(t, os.WriteFile(w.Path("target"), nil, 0o644))
	must(t, os.Symlink("target", w.Path("link")))
	must(t, os.Symlink("nowhere", w.Path("dangling")))
	past := time.Unix(1e9, 0)
	for _, name := range []string{"link", "dangling"} {
		p := w.Path(name)
		must(t, os.Lchown(p, 1234, 5678))
		ts := []unix.Timespec{unix.NsecToTimespec(past.UnixNano()), unix.NsecToTimespec(past.UnixNano())}
		must(t, unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW))
		st := lstat(t, p)
		if st.Uid != 1234 || st.Gid != 5678 || st.Mtim.Sec != past.Unix() {
			t.Fatalf("%s after lchown/utimensat: uid %d gid %d mtime %d", name, st.Uid, st.Gid, st.Mtim.Sec)
		}
		must(t, unix.Lsetxattr(p, "trusted.k", []byte("v-"+name), 0))
		buf := make([]byte, 64)
		n, err := unix.Lgetxattr(p, "trusted.k", buf)
		must(t, err)
		if string(buf[:n]) != "v-"+name {
			t.Fatalf("%s lgetxattr = %q", name, buf[:n])
		}
		must(t, unix.Lremovexattr(p, "trusted.k"))
	}
	st := lstat(t, w.Path("target"))
	if st.Uid != 0 || st.Mtim.Sec == past.Unix() {
		t.Fatalf("the target changed: uid %d mtime %d", st.Uid, st.Mtim.Sec)
	}
	if n, _ := unix.Lgetxattr(w.Path("target"), "trusted.k", nil); n > 0 {
		t.Fatal("the target got the link's xattr")
	}
}

// Only each name is limited (255 bytes), not the total path: a tree whose
// paths pass PATH_MAX works through relative paths, as on ext4, on both
// frontends (libfuse builds paths of any length).
func TestDeepTreePastPathMax(t *testing.T) {
	w := mount(t)
	name := strings.Repeat("d", 200)
	dir, err := os.Open(w.Dir)
	must(t, err)
	t.Cleanup(func() { dir.Close() }) // a failure must not keep the mount busy
	depth := 0
	for ; depth*(len(name)+1) <= 5000; depth++ {
		must(t, unix.Mkdirat(int(dir.Fd()), name, 0o755))
		next, err := openat(dir, name)
		must(t, err)
		dir.Close()
		dir = next
	}
	fd, err := unix.Openat(int(dir.Fd()), "leaf", unix.O_CREAT|unix.O_WRONLY, 0o644)
	must(t, err)
	_, err = unix.Write(fd, []byte("deep"))
	must(t, err)
	must(t, unix.Close(fd))
	must(t, unix.Renameat(int(dir.Fd()), "leaf", int(dir.Fd()), "leaf2"))
	dir.Close()
	// After a remount (the store holds it), down the tree again.
	w.Close()
	w.Remount()
	dir, err = os.Open(w.Dir)
	must(t, err)
	for range depth {
		next, err := openat(dir, name)
		must(t, err)
		dir.Close()
		dir = next
	}
	fd, err = unix.Openat(int(dir.Fd()), "leaf2", unix.O_RDONLY, 0)
	must(t, err)
	buf := make([]byte, 16)
	n, err := unix.Read(fd, buf)
	must(t, err)
	must(t, unix.Close(fd))
	dir.Close()
	if string(buf[:n]) != "deep" {
		t.Fatalf("leaf at depth %d (%d bytes of path) reads %q", depth, depth*(len(name)+1), buf[:n])
	}
}

func openat(dir *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// With the kernel caching for long, changes made through the core show
// through the mount at once, and writes through the mount show in the core
// at once, in both directions, over the same names.
func TestCoherenceBothWays(t *testing.T) {
	w := mount(t)
	makeTree(t, w.Dir, 2, 3)
	for _, p := range []string{"d00/sub/f000.txt", "d01/sub/f001.txt"} {
		readFile(t, w.Path(p)) // cached in the kernel
	}
	original := readFile(t, w.Path("d00", "sub", "f000.txt"))
	_, err := w.FS.Checkpoint(t.Context(), sfs.CheckpointOptions{Name: "start"})
	must(t, err)
	must(t, w.FS.WriteFile("/d00/sub/f000.txt", []byte("from the core"), 0o644))
	if got := readFile(t, w.Path("d00", "sub", "f000.txt")); got != "from the core" {
		t.Fatalf("mount reads %q after a core write", got)
	}
	must(t, w.FS.Rename("/d01/sub/f001.txt", "/d00/sub/moved"))
	if _, err := os.Stat(w.Path("d01", "sub", "f001.txt")); !os.IsNotExist(err) {
		t.Fatalf("old name after core rename: %v", err)
	}
	if got := readFile(t, w.Path("d00", "sub", "moved")); got != "file 1 1 needle\n" {
		t.Fatalf("new name after core rename: %q", got)
	}
	ents, err := os.ReadDir(w.Path("d00", "sub"))
	must(t, err)
	if len(ents) != 4 {
		t.Fatalf("listing after core rename has %d entries, want 4", len(ents))
	}
	must(t, w.FS.Chmod("/d00/sub/moved", 0o600))
	if m := lstat(t, w.Path("d00", "sub", "moved")).Mode & 0o777; m != 0o600 {
		t.Fatalf("mode after core chmod: %o", m)
	}
	// A restore in the middle: every cached name, page and attribute
	// above is the checkpoint's again, at once.
	must(t, w.FS.Restore(t.Context(), "start"))
	if got := readFile(t, w.Path("d00", "sub", "f000.txt")); got != original {
		t.Fatalf("mount reads %q after the restore, want %q", got, original)
	}
	if _, err := os.Stat(w.Path("d00", "sub", "moved")); !os.IsNotExist(err) {
		t.Fatalf("a name made after the checkpoint, after the restore: %v", err)
	}
	if got := readFile(t, w.Path("d01", "sub", "f001.txt")); got != "file 1 1 needle\n" {
		t.Fatalf("the renamed file back at its name: %q", got)
	}
	if ents, err = os.ReadDir(w.Path("d00", "sub")); err != nil || len(ents) != 3 {
		t.Fatalf("listing after the restore: %d entries, %v; want 3", len(ents), err)
	}
	must(t, w.FS.Rename("/d01/sub/f001.txt", "/d00/sub/moved"))
	if m := lstat(t, w.Path("d00", "sub", "moved")).Mode & 0o777; m == 0o600 {
		t.Fatalf("mode of the restored file kept the core chmod made after the checkpoint")
	}
	// The other way: a write through the mount, read by the core at once.
	f, err := os.OpenFile(w.Path("d00", "sub", "moved"), os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString("from the mount")
	must(t, err)
	got, err := w.FS.ReadFile("/d00/sub/moved")
	must(t, err)
	if !bytes.Equal(got, []byte("from the mount")) {
		t.Fatalf("core reads %q while the writer is still open", got)
	}
	must(t, f.Close())
}

// A request's changes are audited under the actor ActorForPID names.
func TestActorForPID(t *testing.T) {
	// The kernel passes the calling thread's id: this process is one
	// whose thread group is the test's.
	self := fmt.Sprintf("Tgid:\t%d\n", os.Getpid())
	w := fusetest.Mount(t, sfs.Options{}, fuse.Options{AllowOther: true, ActorForPID: func(pid uint32) (string, bool) {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		return "exec:test", strings.Contains(string(status), self)
	}})
	must(t, os.WriteFile(w.Path("mine"), []byte("x"), 0o644))
	must(t, exec.Command("touch", w.Path("theirs")).Run())
	must(t, w.FS.Flush(t.Context()))
	events, err := w.FS.Store().Audit(t.Context(), sqlstore.AuditFilter{Op: "create"})
	must(t, err)
	actors := map[string]string{}
	for _, e := range events {
		if e.Op == "create" {
			actors[e.Path] = e.Actor
		}
	}
	if actors["/mine"] != "exec:test" || !strings.HasPrefix(actors["/theirs"], "fuse:pid=") || !strings.Contains(actors["/theirs"], "comm=touch") {
		t.Fatalf("create events by actor: %v", actors)
	}
}

// A mount that another mount namespace still holds (a container that did
// not let go) is unmounted all the same: Unmount aborts the connection
// instead of waiting for ever (go-fuse's own Unmount hangs there).
func TestUnmountWhileHeldElsewhere(t *testing.T) {
	if fuse.LibFUSE != 0 {
		t.Skip("the abort is the kernel-protocol frontend's")
	}
	w := mount(t)
	must(t, os.WriteFile(w.Path("f"), []byte("x"), 0o644))
	holder := exec.Command("unshare", "--mount", "--propagation", "private", "sleep", "60")
	must(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	time.Sleep(200 * time.Millisecond) // the namespace copies the mount table
	start := time.Now()
	must(t, w.Mount.Unmount())
	select {
	case <-w.Mount.Done():
	default:
		t.Fatal("the serving loop still runs")
	}
	t.Logf("unmounted in %v", time.Since(start).Round(time.Millisecond))
	must(t, w.FS.Close())
	w.Mount, w.FS = nil, nil // closed here
}

// A write by another user clears setuid and setgid (HANDLE_KILLPRIV_V2:
// the kernel asks the server to).
func TestWriteByOtherUserClearsSetuid(t *testing.T) {
	w := inodeMount(t)
	_, err := exec.LookPath("setpriv")
	fusetest.Require(t, "setpriv (util-linux)", err)
	// uid 65534 must reach the mount: open the test's temp dirs to it.
	for d := filepath.Dir(w.Dir); d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o755))
	}
	must(t, os.Chmod(w.Dir, 0o777))
	p := w.Path("tool")
	must(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	must(t, unix.Chmod(p, 0o6777))
	if m := lstat(t, p).Mode; m&0o6000 != 0o6000 {
		t.Fatalf("mode before %o", m)
	}
	out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		"sh", "-c", "echo more >> "+p).CombinedOutput()
	if err != nil {
		t.Fatalf("write as uid 65534: %v %s", err, out)
	}
	if m := lstat(t, p).Mode; m&0o6000 != 0 {
		t.Fatalf("mode after another user's write %o, want setuid and setgid cleared", m)
	}
}

// With NoXattr the kernel is told once that there are no xattrs, and from
// then on asks for no security.capability before a write: a file written,
// stat'ed and written again (what a compiler does to an object) costs two
// requests fewer, and a warm ls -l none of its two per file. The xattr
// calls then fail EOPNOTSUPP in the kernel.
func TestNoXattrSavesTheCapabilityRequests(t *testing.T) {
	const files = 20
	writeFiles := func(t *testing.T, dir string) {
		for i := range files {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%02d.o", i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			must(t, err)
			_, err = f.WriteString("header")
			must(t, err)
			_, err = f.Stat()
			must(t, err)
			_, err = f.WriteString(" body")
			must(t, err)
			must(t, f.Close())
		}
	}
	total := func(m map[string]float64) (n float64) {
		for _, v := range m {
			n += v
		}
		return n
	}
	var withXattr map[string]float64
	for _, noXattr := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoXattr=%v", noXattr), func(t *testing.T) {
			w := fusetest.Mount(t, sfs.Options{}, fuse.Options{NoXattr: noXattr, Debug: os.Getenv("FUSEDEBUG") != ""})
			// The first write on a mount meets the kernel's first question.
			must(t, os.WriteFile(w.Path("warm"), []byte("x"), 0o644))
			must(t, os.Mkdir(w.Path("d"), 0o755))
			got := requestsDuring(t, func() { writeFiles(t, w.Path("d")) })
			t.Logf("requests for %d files: %v", files, got)
			// FORGET is the kernel's to send when it likes (another
			// process's drop_caches evicts inodes: 19 in one CI run), and
			// no caller waits for it.
			delete(got, "forget")
			for i := range files {
				if b, err := os.ReadFile(w.Path("d", fmt.Sprintf("f%02d.o", i))); err != nil || string(b) != "header body" {
					t.Fatalf("file %d: %q, %v", i, b, err)
				}
			}
			// ls -l asks every file for its SELinux label and ACL: with
			// xattrs each is a request, on every listing, warm or not.
			ls := func() {
				out, err := exec.Command("ls", "-l", w.Path("d")).Output()
				must(t, err)
				if n := strings.Count(string(out), ".o\n"); n != files {
					t.Fatalf("ls -l listed %d files, want %d", n, files)
				}
			}
			ls()
			warmLs := requestsDuring(t, ls)
			t.Logf("requests of a warm ls -l of %d files: %v", files, warmLs)
			if !noXattr {
				if got["getxattr"] < files || warmLs["getxattr"] < files {
					t.Fatalf("requests %v, ls -l %v: want a GETXATTR per file at least (the test measures nothing otherwise)", got, warmLs)
				}
				withXattr = got
				return
			}
			if got["getxattr"] != 0 || warmLs["getxattr"] != 0 {
				t.Fatalf("NoXattr: writing sent %v, a warm ls -l %v; want no GETXATTR", got, warmLs)
			}
			if fuse.LibFUSE == 0 && withXattr != nil && total(got) != total(withXattr)-withXattr["getxattr"] {
				t.Errorf("NoXattr saved more or less than the GETXATTRs: %v against %v", got, withXattr)
			}
			p := w.Path("warm")
			buf := make([]byte, 64)
			wantErrno(t, unix.Setxattr(p, "user.a", []byte("1"), 0), unix.EOPNOTSUPP)
			_, err := unix.Getxattr(p, "user.a", buf)
			wantErrno(t, err, unix.EOPNOTSUPP)
			_, err = unix.Listxattr(p, buf)
			wantErrno(t, err, unix.EOPNOTSUPP)
			wantErrno(t, unix.Removexattr(p, "user.a"), unix.EOPNOTSUPP)
		})
	}
}
