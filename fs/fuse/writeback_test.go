package fuse_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// skipWithoutWriteback skips on the portable frontend, which has no
// writeback cache.
func skipWithoutWriteback(tb testing.TB) {
	if fuse.LibFUSE != 0 {
		tb.Skipf("libfuse %d's frontend has no writeback cache", fuse.LibFUSE)
	}
}

// writebackMount mounts with the Linux frontend's writeback cache on.
func writebackMount(t *testing.T, o fuse.Options) *fusetest.Workspace {
	skipWithoutWriteback(t)
	o.WritebackCache = true
	return fusetest.Mount(t, sfs.Options{}, o)
}

// kernelView reads as the kernel does: no flush of the kernel's dirty
// pages first, so it shows what has reached the core.
func kernelView(w *fusetest.Workspace) *sfs.FS {
	return w.FS.As(sfs.Caller{Kernel: true})
}

// Data the kernel still holds dirty is written back before a caller other
// than the kernel opens or stats the file: with the writer's fd still open,
// and for pages written through a shared mapping (never msync'd).
func TestWritebackCoreSeesDirtyPages(t *testing.T) {
	w := writebackMount(t, fuse.Options{})
	f, err := os.OpenFile(w.Path("open"), os.O_RDWR|os.O_CREATE, 0o644)
	must(t, err)
	defer f.Close()
	_, err = f.WriteString("dirty in the kernel")
	must(t, err)
	if got, _ := kernelView(w).ReadFile("/open"); len(got) != 0 {
		t.Fatalf("the write reached the core before any flush (%q): the writeback cache is off", got)
	}
	if a, err := w.FS.Stat("/open"); err != nil || a.Size != 19 {
		t.Fatalf("core stat with the writer open: size %d, %v", a.Size, err)
	}
	if got, err := w.FS.ReadFile("/open"); err != nil || string(got) != "dirty in the kernel" {
		t.Fatalf("core read with the writer open: %q, %v", got, err)
	}
	// The mount keeps serving the file after the flush dropped its pages.
	_, err = f.WriteAt([]byte("DIRTY"), 0)
	must(t, err)
	if got := readFile(t, w.Path("open")); got != "DIRTY in the kernel" {
		t.Fatalf("mount reads %q", got)
	}
	if got, err := w.FS.ReadFile("/open"); err != nil || string(got) != "DIRTY in the kernel" {
		t.Fatalf("core read after an overwrite: %q, %v", got, err)
	}

	// The mapping is another process's (see mappedWrite), held while the
	// core reads.
	must(t, os.WriteFile(w.Path("mapped"), bytes.Repeat([]byte{'.'}, 8192), 0o644))
	hold(t, w.Path("mapped"), mappedWrite)
	got, err := w.FS.ReadFile("/mapped")
	must(t, err)
	if !bytes.Equal(got[4096:4096+19], []byte("through the mapping")) || len(got) != 8192 {
		t.Fatalf("core read of a mapped page: %q (%d bytes)", got[4096:4096+19], len(got))
	}
}

// close() writes dirty pages back (fuse_flush calls write_inode_now even
// when FLUSH is answered ENOSYS), so only a mapping keeps data dirty past
// a close; fsync writes them back before it is answered.
func TestWritebackCloseAndFsyncWriteBack(t *testing.T) {
	w := writebackMount(t, fuse.Options{})
	must(t, os.WriteFile(w.Path("closed"), []byte("written back at close"), 0o644))
	if got, err := kernelView(w).ReadFile("/closed"); err != nil || string(got) != "written back at close" {
		t.Fatalf("core holds %q, %v after close", got, err)
	}
	f, err := os.OpenFile(w.Path("synced"), os.O_WRONLY|os.O_CREATE, 0o644)
	must(t, err)
	defer f.Close()
	_, err = f.WriteString("written back by fsync")
	must(t, err)
	must(t, f.Sync())
	if got, err := kernelView(w).ReadFile("/synced"); err != nil || string(got) != "written back by fsync" {
		t.Fatalf("core holds %q, %v after fsync", got, err)
	}
}

// outside changes a file the way the shell backend does: through the
// core's Go API, as a caller other than the kernel.
type outside struct {
	t    *testing.T
	fsys *sfs.FS
}

func (o outside) write(name, data string) {
	o.t.Helper()
	must(o.t, o.fsys.WriteFile(name, []byte(data), 0o644))
}

func (o outside) append(name, data string) {
	o.t.Helper()
	f, err := o.fsys.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	must(o.t, err)
	_, err = f.Write([]byte(data))
	must(o.t, err)
	must(o.t, f.Close())
}

// A change made outside the kernel shows through the mount at once with
// the writeback cache, though the kernel then trusts its own size and
// times over the server's: data, size, mtime and nlink, for a file nobody
// holds open.
func TestWritebackOutsideChangesShow(t *testing.T) {
	w := writebackMount(t, fuse.Options{})
	out := outside{t, w.FS.WithActor("shell")}
	cases := []struct {
		name   string
		change func(p string)
		want   string
	}{
		{"grow", func(p string) { out.append(p, " and more") }, "0123456789 and more"},
		{"shrink", func(p string) { must(t, out.fsys.Truncate(p, 4)) }, "0123"},
		{"truncate to 0", func(p string) { must(t, out.fsys.Truncate(p, 0)) }, ""},
		{"overwrite, same size", func(p string) { out.write(p, "abcdefghij") }, "abcdefghij"},
		{"overwrite, smaller", func(p string) { out.write(p, "xy") }, "xy"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("f%d", i)
			must(t, os.WriteFile(w.Path(name), []byte("0123456789"), 0o644))
			old := lstat(t, w.Path(name))
			readFile(t, w.Path(name)) // pages, size and times cached
			time.Sleep(10 * time.Millisecond)
			c.change("/" + name)
			st := lstat(t, w.Path(name))
			if st.Size != int64(len(c.want)) {
				t.Errorf("mount's size %d, want %d", st.Size, len(c.want))
			}
			if st.Mtim == old.Mtim {
				t.Errorf("mount's mtime unchanged: %v", st.Mtim)
			}
			a, err := w.FS.Stat("/" + name)
			must(t, err)
			if st.Mtim.Nano() != a.Mtime.UnixNano() {
				t.Errorf("mount's mtime %v, the core's %v", time.Unix(0, st.Mtim.Nano()), a.Mtime)
			}
			if got := readFile(t, w.Path(name)); got != c.want {
				t.Errorf("mount reads %q, want %q", got, c.want)
			}
		})
	}
	// A hard-linked file: every name shows the change and the new nlink.
	must(t, os.WriteFile(w.Path("a"), []byte("linked"), 0o644))
	must(t, os.Link(w.Path("a"), w.Path("b")))
	lstat(t, w.Path("a"))
	lstat(t, w.Path("b"))
	out.append("/a", " and grown")
	must(t, out.fsys.Link("/a", "/c"))
	for _, n := range []string{"a", "b", "c"} {
		if st := lstat(t, w.Path(n)); st.Size != 16 || st.Nlink != 3 {
			t.Errorf("%s: size %d nlink %d, want 16 and 3", n, st.Size, st.Nlink)
		}
		if got := readFile(t, w.Path(n)); got != "linked and grown" {
			t.Errorf("%s reads %q", n, got)
		}
	}
}

// A file held open through the mount keeps its kernel inode: it learns
// new data and a grown size at once, but a shrunk size only once the last
// holder closes (the documented exception).
func TestWritebackOutsideChangesToAnOpenFile(t *testing.T) {
	w := writebackMount(t, fuse.Options{})
	out := outside{t, w.FS.WithActor("shell")}
	must(t, os.WriteFile(w.Path("log"), []byte("line 1\n"), 0o644))
	f, err := os.Open(w.Path("log")) // a `tail -f`
	must(t, err)
	defer f.Close()
	fsize := func() int64 {
		fi, err := f.Stat()
		must(t, err)
		return fi.Size()
	}
	out.append("/log", "line 2\n")
	if n := fsize(); n != 14 {
		t.Errorf("fstat after an outside append: %d, want 14", n)
	}
	buf := make([]byte, 64)
	n, _ := f.ReadAt(buf, 0)
	if string(buf[:n]) != "line 1\nline 2\n" {
		t.Errorf("read through the open fd: %q", buf[:n])
	}
	if st := lstat(t, w.Path("log")); st.Size != 14 {
		t.Errorf("stat after an outside append: %d", st.Size)
	}

	must(t, out.fsys.Truncate("/log", 3))
	if n := fsize(); n != 14 {
		t.Errorf("fstat after an outside shrink while open: %d; the documented exception is gone, update the docs", n)
	}
	n, _ = f.ReadAt(buf, 0)
	if string(buf[:3]) != "lin" || strings.Trim(string(buf[3:n]), "\x00") != "" {
		t.Errorf("read after an outside shrink while open: %q, want lin and zeros", buf[:n])
	}
	must(t, f.Close())
	if st := lstat(t, w.Path("log")); st.Size != 3 {
		t.Errorf("stat after the last close: %d, want 3", st.Size)
	}
	if got := readFile(t, w.Path("log")); got != "lin" {
		t.Errorf("read after the last close: %q", got)
	}
}

// The kernel writes pages back without a pid: such WRITEs are audited
// under the last caller of the file that carried one.
func TestWritebackWritesKeepTheirActor(t *testing.T) {
	self := fmt.Sprintf("Tgid:\t%d\n", os.Getpid())
	w := writebackMount(t, fuse.Options{AllowOther: true, ActorForPID: func(pid uint32) (string, bool) {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		return "exec:test", strings.Contains(string(status), self)
	}})
	must(t, os.WriteFile(w.Path("mine"), []byte("x"), 0o644))
	must(t, exec.Command("sh", "-c", "echo theirs > "+w.Path("theirs")).Run())
	must(t, w.FS.Flush(t.Context()))
	events, err := w.FS.Store().Audit(t.Context(), sqlstore.AuditFilter{Op: "write"})
	must(t, err)
	actors := map[string]string{}
	for _, e := range events {
		actors[e.Path] = e.Actor
	}
	if actors["/mine"] != "exec:test" || !strings.HasPrefix(actors["/theirs"], "fuse:pid=") || !strings.Contains(actors["/theirs"], "comm=sh") {
		t.Fatalf("write events by actor: %v", actors)
	}
}

// What the writeback cache changes in requests, the facts its option's
// doc and the README state: 4 KiB writes reach the server as 1 MiB WRITEs,
// the written file's times cost a SETATTR at close, and any close (a read
// too) makes the next stat a GETATTR, since the kernel drops st_blocks.
func TestWritebackRequests(t *testing.T) {
	skipWithoutWriteback(t)
	for _, writeback := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeback=%v", writeback), func(t *testing.T) {
			w := fusetest.Mount(t, sfs.Options{}, fuse.Options{WritebackCache: writeback})
			writes := requestsDuring(t, func() {
				f, err := os.Create(w.Path("big"))
				must(t, err)
				block := bytes.Repeat([]byte{'x'}, 4096)
				for range 1024 { // 4 MiB
					_, err = f.Write(block)
					must(t, err)
				}
				must(t, f.Close())
			})
			wantWrites := 1024.0
			if writeback {
				wantWrites = 4
			}
			if writes["write"] != wantWrites {
				t.Errorf("4 MiB in 4 KiB writes: %v WRITEs, want %v (%v)", writes["write"], wantWrites, writes)
			}
			lstat(t, w.Path("big"))
			stats := requestsWhileCached(t, func() {
				readFile(t, w.Path("big"))
				lstat(t, w.Path("big"))
			})
			if wantGetattr := map[bool]float64{false: 0, true: 1}[writeback]; stats["getattr"] != wantGetattr {
				t.Errorf("stat after a read and close: %v GETATTRs, want %v (%v)", stats["getattr"], wantGetattr, stats)
			}
		})
	}
}

// requestsWhileCached is requestsDuring for fn's cached path: its pages,
// names and attributes already in the kernel. Another process's
// `echo 3 > /proc/sys/vm/drop_caches` (the benchmarks drop caches before
// every round) or memory pressure can evict them meanwhile; fn then sends
// READs (each of which makes the kernel drop the file's atime: one more
// GETATTR), LOOKUPs or FORGETs, and the run is repeated. A path that
// always sends them still fails: the last run's counts are returned.
func requestsWhileCached(t *testing.T, fn func()) map[string]float64 {
	t.Helper()
	var got map[string]float64
	for attempt := range 5 {
		got = requestsDuring(t, fn)
		if got["read"] == 0 && got["lookup"] == 0 && got["forget"] == 0 {
			break
		}
		t.Logf("attempt %d: the kernel's caches were dropped meanwhile (%v); measuring again", attempt+1, got)
	}
	return got
}

// BenchmarkCoreReadsKernelFiles is the flusher's cost: the core (as the
// shell's grep -r does) opens and reads 1000 files the kernel knows, each
// flushed first with the writeback cache; "mount-reads/op" is the READs a
// warm read of them all through the mount then needs, the pages the
// flushes dropped.
func BenchmarkCoreReadsKernelFiles(b *testing.B) {
	skipWithoutWriteback(b)
	for _, writeback := range []bool{false, true} {
		b.Run(fmt.Sprintf("writeback=%v", writeback), func(b *testing.B) {
			w := fusetest.Mount(b, sfs.Options{}, fuse.Options{WritebackCache: writeback})
			var names []string
			for i := range 1000 {
				name := fmt.Sprintf("/d%02d/f%04d", i%20, i)
				names = append(names, name)
				if i < 20 {
					if err := os.Mkdir(w.Path(name[:4]), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(w.Path(name), bytes.Repeat([]byte("x"), 4096), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			mountReadAll := func() {
				for _, n := range names {
					if _, err := os.ReadFile(w.Path(n)); err != nil {
						b.Fatal(err)
					}
				}
			}
			mountReadAll()
			var reads float64
			for b.Loop() {
				for _, n := range names {
					if _, err := w.FS.ReadFile(n); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				reads += requestsDuring(b, mountReadAll)["read"]
				b.StartTimer()
			}
			b.ReportMetric(reads/float64(b.N), "mount-reads/op")
		})
	}
}
