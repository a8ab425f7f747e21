//go:build linux && fuse3

// Tests for the sqlfs patches (see PATCHES.md): libfuse3 options survive init, Notify
// invalidates kernel caches, and the speed knobs reach the kernel. They mount FUSE, so
// they need root, /dev/fuse and libfuse3:
//
//	go test -tags fuse3 ./fuse/ -run Fuse3
package fuse

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fuse3Build tells the shared benchmarks which libfuse this test binary uses.
const fuse3Build = true

func TestFuse3OptionsSurviveInit(t *testing.T) {
	tests := []struct {
		name       string
		opts       string
		ino        bool // SetUseIno
		hardRemove bool // SetHardRemove
		wantCached bool // a second stat within the timeout makes no Getattr call
		wantNeg    bool // a second stat of a missing name makes no Getattr call
	}{
		{"timeouts60", "attr_timeout=60,entry_timeout=60,negative_timeout=60", false, false, true, true},
		{"timeouts0", "attr_timeout=0,entry_timeout=0,negative_timeout=0", false, false, false, false},
		{"ino_hard_remove", "attr_timeout=60,entry_timeout=60", true, true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newMemFS()
			fs.put("/f", S_IFREG|0o644, []byte("data"))
			fs.nodes["/f"].stat.Ino = 4242
			mnt, _ := mountMemFS(t, fs, func(h *FileSystemHost) {
				h.SetUseIno(tt.ino)
				h.SetHardRemove(tt.hardRemove)
			}, "-o", tt.opts)
			p := filepath.Join(mnt, "f")
			var st syscall.Stat_t
			for _, name := range []string{"f", "missing"} {
				syscall.Stat(filepath.Join(mnt, name), &st)
				before := fs.getattrs.Load()
				syscall.Stat(filepath.Join(mnt, name), &st)
				calls := fs.getattrs.Load() - before
				want := tt.wantCached
				if name == "missing" {
					want = tt.wantNeg
				}
				if cached := calls == 0; cached != want {
					t.Errorf("second stat of %s made %d Getattr calls, want cached=%v", name, calls, want)
				}
			}
			if err := syscall.Stat(p, &st); err != nil {
				t.Fatal(err)
			}
			if got := st.Ino == 4242; got != tt.ino {
				t.Errorf("st_ino = %d, want the file system's inode number: %v", st.Ino, tt.ino)
			}
			// without hard_remove libfuse renames an open file to .fuse_hidden* on unlink
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if hidden := fs.hasHidden(); hidden == tt.hardRemove {
				t.Errorf(".fuse_hidden file present: %v, with hard_remove %v", hidden, tt.hardRemove)
			}
		})
	}
}

func TestFuse3NotifyInvalidates(t *testing.T) {
	fs := newMemFS()
	fs.put("/f", S_IFREG|0o644, []byte("old"))
	fs.put("/gone", S_IFREG|0o644, []byte("x"))
	fs.put("/d", S_IFDIR|0o755, nil)
	fs.put("/d/g", S_IFREG|0o644, []byte("old"))
	fs.put("/d/gone", S_IFREG|0o644, []byte("x"))

	if NewFileSystemHost(fs).Notify("/f", NOTIFY_TRUNCATE) {
		t.Error("Notify before Mount returned true")
	}
	mnt, host := mountMemFS(t, fs, nil,
		"-o", "attr_timeout=60,entry_timeout=60,negative_timeout=60,kernel_cache")
	at := func(p string) string { return filepath.Join(mnt, p) }

	// warm the kernel caches: data, attributes (a read invalidates atime, so stat after
	// it), positive and negative dentries
	for _, p := range []string{"f", "d/g"} {
		if b, err := os.ReadFile(at(p)); err != nil || string(b) != "old" {
			t.Fatalf("read %s = %q, %v", p, b, err)
		}
		statSize(t, at(p))
	}
	for _, p := range []string{"gone", "d/gone"} {
		statSize(t, at(p))
	}
	for _, p := range []string{"new", "d/new"} {
		if _, err := os.Stat(at(p)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat %s: %v, want not exist", p, err)
		}
	}

	// out-of-band changes, as another frontend of the same store would make them
	fs.put("/f", S_IFREG|0o644, []byte("new contents"))
	fs.put("/d/g", S_IFREG|0o644, []byte("new contents"))
	fs.put("/new", S_IFREG|0o644, []byte("n"))
	fs.put("/d/new", S_IFREG|0o644, []byte("n"))
	fs.remove("/gone")
	fs.remove("/d/gone")

	// the kernel still serves its caches: proves that the checks below mean something
	for _, p := range []string{"f", "d/g"} {
		if got := statSize(t, at(p)); got != 3 {
			t.Fatalf("size of %s before Notify = %d, want the cached 3", p, got)
		}
	}
	if b, err := os.ReadFile(at("f")); err != nil || string(b) != "old" {
		t.Fatalf("read f before Notify = %q, %v, want the cached \"old\"", b, err)
	}
	for _, p := range []string{"new", "d/new"} {
		if _, err := os.Stat(at(p)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat %s before Notify: %v, want the cached ENOENT", p, err)
		}
	}
	for _, p := range []string{"gone", "d/gone"} {
		statSize(t, at(p))
	}

	notes := []struct {
		path   string
		action uint32
	}{
		{"/f", NOTIFY_TRUNCATE},
		{"/d/g", NOTIFY_TRUNCATE},
		{"/new", NOTIFY_CREATE},
		{"/d/new", NOTIFY_CREATE},
		{"/gone", NOTIFY_UNLINK},
		{"/d/gone", NOTIFY_UNLINK},
		{"/never/seen", NOTIFY_CREATE}, // nothing cached: still a success
	}
	for _, n := range notes {
		if !host.Notify(n.path, n.action) {
			t.Errorf("Notify(%s, %#x) = false", n.path, n.action)
		}
	}

	for _, p := range []string{"f", "d/g"} {
		if got := statSize(t, at(p)); got != int64(len("new contents")) {
			t.Errorf("size of %s after Notify = %d", p, got)
		}
		if b, err := os.ReadFile(at(p)); err != nil || string(b) != "new contents" {
			t.Errorf("read %s after Notify = %q, %v", p, b, err)
		}
	}
	for _, p := range []string{"new", "d/new"} {
		if _, err := os.Stat(at(p)); err != nil {
			t.Errorf("stat %s after Notify: %v", p, err)
		}
	}
	for _, p := range []string{"gone", "d/gone"} {
		if _, err := os.Stat(at(p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat %s after Notify: %v, want not exist", p, err)
		}
		// a stale positive dentry would turn O_CREAT into an OPEN of the old node
		if err := os.WriteFile(at(p), []byte("again"), 0o644); err != nil {
			t.Errorf("create %s after Notify: %v", p, err)
		}
	}
	for dir, want := range map[string]string{"": "d f gone new", "d": "g gone new"} {
		ents, err := os.ReadDir(at(dir))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("readdir %q = %q, want %q", dir, got, want)
		}
	}

	host.Unmount()
	awaitDestroy(t, fs)
	if host.Notify("/f", NOTIFY_TRUNCATE) {
		t.Error("Notify after Unmount returned true")
	}
}

func awaitDestroy(t *testing.T, fs *memFS) {
	t.Helper()
	select {
	case <-fs.destroyed:
	case <-time.After(10 * time.Second):
		t.Fatal("Destroy not called after unmount")
	}
}

// TestFuse3NotifyConcurrent runs Notify from several goroutines while the mount is in
// use and while it goes away, through Unmount or from outside: Notify must neither crash
// nor hang, and must report false once the file system is gone.
func TestFuse3NotifyConcurrent(t *testing.T) {
	tests := []struct {
		name    string
		unmount func(t *testing.T, host *FileSystemHost, mnt string)
	}{
		{"Unmount", func(t *testing.T, host *FileSystemHost, mnt string) {
			if !host.Unmount() {
				t.Error("Unmount failed")
			}
		}},
		{"external", func(t *testing.T, host *FileSystemHost, mnt string) {
			if out, err := exec.Command("fusermount3", "-u", "-z", mnt).CombinedOutput(); err != nil {
				t.Errorf("fusermount3 -u -z: %v %s", err, out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newMemFS()
			fs.put("/d", S_IFDIR|0o755, nil)
			fs.put("/d/f", S_IFREG|0o644, []byte("x"))
			mnt, host := mountMemFS(t, fs, nil, "-o", "attr_timeout=60,entry_timeout=60")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			stopped := false
			stopAll := func() {
				if !stopped {
					stopped = true
					close(stop)
					wg.Wait()
				}
			}
			defer stopAll() // also when the test fails half-way
			var ok atomic.Int64
			loop := func(f func()) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
							f()
						}
					}
				}()
			}
			for i := 0; i < 3; i++ {
				loop(func() {
					if host.Notify("/d/f", NOTIFY_CREATE) {
						ok.Add(1)
					}
				})
				loop(func() { os.ReadFile(filepath.Join(mnt, "d", "f")) })
			}
			time.Sleep(100 * time.Millisecond)
			tt.unmount(t, host, mnt)
			awaitDestroy(t, fs)
			time.Sleep(20 * time.Millisecond)
			stopAll()
			if ok.Load() == 0 {
				t.Error("no Notify succeeded while mounted")
			}
			if host.Notify("/d/f", NOTIFY_CREATE) {
				t.Error("Notify after unmount returned true")
			}
		})
	}
}

func TestFuse3MaxWrite(t *testing.T) {
	// libfuse 3.14 offers 1 MiB (its buffer size) to the kernel by default; it has no
	// max_write mount option (fuse: unknown option)
	tests := []struct {
		name string
		want int64
	}{
		{"default", 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newMemFS()
			mnt, _ := mountMemFS(t, fs, nil)
			buf := bytes.Repeat([]byte{'x'}, 4<<20)
			if err := os.WriteFile(filepath.Join(mnt, "big"), buf, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := fs.maxWrite.Load(); got != tt.want {
				t.Errorf("largest WRITE = %d bytes, want %d", got, tt.want)
			}
		})
	}
}

func TestFuse3NoFlushAndWriteback(t *testing.T) {
	tests := []struct {
		name        string
		noFlush     bool
		writeback   bool
		wantFlushes bool
		wantFewer   bool // 64 4-KiB writes reach the file system as fewer WRITEs
	}{
		{"defaults", false, false, true, false},
		{"noflush", true, false, false, false},
		{"writeback", false, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newMemFS()
			mnt, _ := mountMemFS(t, fs, func(h *FileSystemHost) {
				h.SetNoFlush(tt.noFlush)
				h.SetCapWritebackCache(tt.writeback)
			})
			p := filepath.Join(mnt, "f")
			f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			chunk := bytes.Repeat([]byte{'y'}, 4096)
			for i := 0; i < 64; i++ {
				if _, err := f.Write(chunk); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if _, err := os.ReadFile(p); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("WRITE requests %d, FLUSH requests %d", fs.writes.Load(), fs.flushes.Load())
			if got := fs.flushes.Load() > 0; got != tt.wantFlushes {
				t.Errorf("flushes = %d, want some: %v", fs.flushes.Load(), tt.wantFlushes)
			}
			if got := fs.writes.Load() < 64; got != tt.wantFewer {
				t.Errorf("WRITE requests = %d for 64 writes, want fewer: %v", fs.writes.Load(), tt.wantFewer)
			}
			if got := statSize(t, p); got != 64*4096 {
				t.Errorf("size = %d", got)
			}
		})
	}
}

func TestFuse3ReaddirPlus(t *testing.T) {
	tests := []struct {
		name      string
		plus      bool
		plusOfst  bool
		wantNoGet bool // stat of every entry after readdir makes no Getattr call
	}{
		{"off", false, true, false},
		{"plus_zero_offsets", true, false, false},
		{"plus_offsets", true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newMemFS()
			fs.plusOfst = tt.plusOfst
			for i := 0; i < 20; i++ {
				fs.put("/e"+string(rune('a'+i)), S_IFREG|0o644, []byte("z"))
			}
			mnt, _ := mountMemFS(t, fs, func(h *FileSystemHost) { h.SetCapReaddirPlus(tt.plus) },
				"-o", "attr_timeout=60,entry_timeout=60")
			ents, err := os.ReadDir(mnt)
			if err != nil || len(ents) != 20 {
				t.Fatalf("readdir: %d entries, %v", len(ents), err)
			}
			before := fs.getattrs.Load()
			for _, e := range ents {
				statSize(t, filepath.Join(mnt, e.Name()))
			}
			calls := fs.getattrs.Load() - before
			if got := calls == 0; got != tt.wantNoGet {
				t.Errorf("stat of 20 entries after readdir made %d Getattr calls, want none: %v",
					calls, tt.wantNoGet)
			}
		})
	}
}

// BenchmarkFuse3Notify measures one Notify on a path the kernel has cached: attributes
// and data only, and a name change at the root and one directory down.
func BenchmarkFuse3Notify(b *testing.B) {
	tests := []struct {
		name   string
		path   string
		action uint32
	}{
		{"attr", "/d/f", NOTIFY_TRUNCATE},
		{"name_root", "/f", NOTIFY_CREATE},
		{"name_nested", "/d/f", NOTIFY_CREATE},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			fs := newMemFS()
			fs.put("/f", S_IFREG|0o644, []byte("x"))
			fs.put("/d", S_IFDIR|0o755, nil)
			fs.put("/d/f", S_IFREG|0o644, []byte("x"))
			mnt, host := mountMemFS(b, fs, nil, "-o", "attr_timeout=60,entry_timeout=60")
			statSize(b, filepath.Join(mnt, tt.path))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !host.Notify(tt.path, tt.action) {
					b.Fatal("Notify failed")
				}
			}
		})
	}
}
