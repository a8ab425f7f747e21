//go:build linux

package fuse

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// memNode is one file or directory of memFS.
type memNode struct {
	stat Stat_t
	data []byte
}

// memFS is a tiny in-memory file system that counts the requests the tests care about.
// Its tree can be changed "out of band" with put and remove, as another frontend would.
type memFS struct {
	FileSystemBase
	mu       sync.Mutex
	nodes    map[string]*memNode
	nextIno  uint64
	plusOfst bool // Readdir passes non-zero offsets (needed for libfuse3 readdirplus)
	discard  bool // Write keeps only the size, so benchmarks measure the transport

	getattrs  atomic.Int64
	flushes   atomic.Int64
	writes    atomic.Int64
	maxWrite  atomic.Int64
	initDone  chan struct{}
	initOnce  sync.Once
	destroyed chan struct{}
}

func newMemFS() *memFS {
	fs := &memFS{
		nodes:     map[string]*memNode{},
		initDone:  make(chan struct{}),
		destroyed: make(chan struct{}),
	}
	fs.put("/", S_IFDIR|0o755, nil)
	return fs
}

// put creates or replaces path with the given mode and contents.
func (fs *memFS) put(path string, mode uint32, data []byte) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.putLocked(path, mode, data)
}

func (fs *memFS) putLocked(path string, mode uint32, data []byte) {
	n := fs.nodes[path]
	if n == nil {
		fs.nextIno++
		n = &memNode{}
		n.stat.Ino = fs.nextIno
		n.stat.Nlink = 1
		fs.nodes[path] = n
	}
	n.stat.Mode = mode
	n.data = append([]byte(nil), data...)
	n.stat.Size = int64(len(data))
	n.stat.Mtim = NewTimespec(time.Now())
}

func (fs *memFS) remove(path string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.nodes, path)
}

func (fs *memFS) Init() {
	fs.initOnce.Do(func() { close(fs.initDone) })
}

func (fs *memFS) Destroy() {
	close(fs.destroyed)
}

func (fs *memFS) Getattr(path string, stat *Stat_t, fh uint64) int {
	fs.getattrs.Add(1)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[path]
	if n == nil {
		return -ENOENT
	}
	*stat = n.stat
	return 0
}

func (fs *memFS) Readdir(path string, fill func(name string, stat *Stat_t, ofst int64) bool,
	ofst int64, fh uint64) int {
	fs.mu.Lock()
	type entry struct {
		name string
		stat Stat_t
	}
	var entries []entry
	prefix := strings.TrimSuffix(path, "/") + "/"
	for p, n := range fs.nodes {
		if p != "/" && strings.HasPrefix(p, prefix) && !strings.Contains(p[len(prefix):], "/") {
			entries = append(entries, entry{p[len(prefix):], n.stat})
		}
	}
	fs.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	if !fs.plusOfst {
		fill(".", nil, 0)
		fill("..", nil, 0)
		for _, e := range entries {
			if !fill(e.name, &e.stat, 0) {
				break
			}
		}
		return 0
	}
	// offsets: 1 ".", 2 "..", 3+i entries[i]; ofst is the offset of the last entry seen
	for i := ofst; i < int64(len(entries))+2; i++ {
		var ok bool
		switch i {
		case 0:
			ok = fill(".", nil, 1)
		case 1:
			ok = fill("..", nil, 2)
		default:
			e := entries[i-2]
			ok = fill(e.name, &e.stat, i+1)
		}
		if !ok {
			break
		}
	}
	return 0
}

func (fs *memFS) Open(path string, flags int) (int, uint64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.nodes[path] == nil {
		return -ENOENT, ^uint64(0)
	}
	return 0, 0
}

func (fs *memFS) Create(path string, flags int, mode uint32) (int, uint64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.putLocked(path, S_IFREG|mode, nil)
	return 0, 0
}

func (fs *memFS) Read(path string, buff []byte, ofst int64, fh uint64) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[path]
	if n == nil {
		return -ENOENT
	}
	if ofst >= int64(len(n.data)) {
		return 0
	}
	return copy(buff, n.data[ofst:])
}

func (fs *memFS) Write(path string, buff []byte, ofst int64, fh uint64) int {
	fs.writes.Add(1)
	for {
		old := fs.maxWrite.Load()
		if int64(len(buff)) <= old || fs.maxWrite.CompareAndSwap(old, int64(len(buff))) {
			break
		}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[path]
	if n == nil {
		return -ENOENT
	}
	if fs.discard {
		if end := ofst + int64(len(buff)); end > n.stat.Size {
			n.stat.Size = end
		}
		return len(buff)
	}
	if end := ofst + int64(len(buff)); end > int64(len(n.data)) {
		n.data = append(n.data, make([]byte, end-int64(len(n.data)))...)
	}
	copy(n.data[ofst:], buff)
	n.stat.Size = int64(len(n.data))
	return len(buff)
}

func (fs *memFS) Truncate(path string, size int64, fh uint64) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[path]
	if n == nil {
		return -ENOENT
	}
	if fs.discard {
		n.stat.Size = size
		return 0
	}
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
	n.stat.Size = size
	return 0
}

func (fs *memFS) Unlink(path string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.nodes[path] == nil {
		return -ENOENT
	}
	delete(fs.nodes, path)
	return 0
}

func (fs *memFS) Rename(oldpath string, newpath string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n := fs.nodes[oldpath]
	if n == nil {
		return -ENOENT
	}
	delete(fs.nodes, oldpath)
	fs.nodes[newpath] = n
	return 0
}

func (fs *memFS) hasHidden() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for p := range fs.nodes {
		if strings.Contains(p, ".fuse_hidden") {
			return true
		}
	}
	return false
}

func (fs *memFS) Utimens(path string, tmsp []Timespec) int {
	return 0
}

func (fs *memFS) Flush(path string, fh uint64) int {
	fs.flushes.Add(1)
	return 0
}

// mountMemFS mounts fs on a fresh directory with opts and returns the mountpoint and
// host. The mount is removed in t.Cleanup, also when the test fails.
func mountMemFS(t testing.TB, fs *memFS, setup func(*FileSystemHost), opts ...string) (string, *FileSystemHost) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting FUSE needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	mnt := t.TempDir()
	host := NewFileSystemHost(fs)
	if setup != nil {
		setup(host)
	}
	done := make(chan bool, 1)
	go func() {
		done <- host.Mount(mnt, append([]string{"-o", "fsname=cgofusetest"}, opts...))
	}()
	t.Cleanup(func() {
		host.Unmount()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			// last resort so that one stuck test cannot wedge the rest
			out, err := exec.Command("fusermount3", "-u", "-z", mnt).CombinedOutput()
			t.Errorf("mount did not stop; fusermount3 -u -z: %v %s", err, out)
		}
	})
	select {
	case <-fs.initDone:
	case ok := <-done:
		done <- ok // for t.Cleanup
		t.Fatalf("Mount returned %v before Init", ok)
	case <-time.After(10 * time.Second):
		t.Fatal("timeout waiting for Init")
	}
	// Init runs before the mount is visible to everyone; wait until it is.
	for deadline := time.Now().Add(5 * time.Second); ; {
		var sfs syscall.Statfs_t
		if err := syscall.Statfs(mnt, &sfs); err == nil && sfs.Type == 0x65735546 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("mount did not appear")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return mnt, host
}

func statSize(t testing.TB, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return st.Size
}
