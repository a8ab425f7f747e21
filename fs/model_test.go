package fs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// The model-based test drives the core with long random operation
// sequences and compares it after every step with a trivial model: a map
// from path to object. SQLFS_MODEL_SEED replays one seed; SQLFS_TEST_LONG
// runs more than a million operations. A failure prints the seed and the
// shortest operation sequence found that still fails.

// mobj is a file (shared by its hard links), directory or symlink.
type mobj struct {
	kind   byte // 'f', 'd', 'l'
	data   []byte
	target string
}

type model struct {
	paths map[string]*mobj
}

func newModel() *model {
	return &model{paths: map[string]*mobj{"/": {kind: 'd'}}}
}

// children lists the names directly in dir.
func (m *model) children(dir string) []string {
	var out []string
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for p := range m.paths {
		if p != "/" && path.Dir(p) == dir {
			out = append(out, strings.TrimPrefix(p, prefix))
		}
	}
	sort.Strings(out)
	return out
}

// parentErr is how resolving p's directory fails (names are never links in
// the middle of a path: see op generation).
func (m *model) parentErr(p string) syscall.Errno {
	dir := path.Dir(p)
	for _, q := range ancestors(dir) {
		o := m.paths[q]
		switch {
		case o == nil:
			return syscall.ENOENT
		case o.kind != 'd':
			return syscall.ENOTDIR
		}
	}
	return 0
}

// ancestors returns "/", "/a", "/a/b" for "/a/b".
func ancestors(p string) []string {
	out := []string{"/"}
	if p == "/" {
		return out
	}
	cur := ""
	for _, c := range strings.Split(p[1:], "/") {
		cur += "/" + c
		out = append(out, cur)
	}
	return out
}

func under(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }

// move renames every path at or below from to the same place below to.
func (m *model) move(from, to string) {
	moved := map[string]*mobj{}
	for p, o := range m.paths {
		if p == from || under(p, from) {
			moved[to+strings.TrimPrefix(p, from)] = o
			delete(m.paths, p)
		}
	}
	maps := m.paths
	for p, o := range moved {
		maps[p] = o
	}
}

// nlinks counts each file's names and each directory's subdirectories
// (plus its own two links), in one pass.
func (m *model) nlinks() map[*mobj]uint32 {
	n := map[*mobj]uint32{}
	for p, o := range m.paths {
		switch o.kind {
		case 'd':
			n[o] += 2
			if p != "/" {
				n[m.paths[path.Dir(p)]]++
			}
		default:
			n[o]++
		}
	}
	return n
}

// op is one step. Its fields are fixed when generated, so a sequence
// replays (and shrinks) without the generator.
type op struct {
	Kind       string
	A, B       string
	Off, Size  int64
	Fill       byte
	Flags      uint32
	Handle     int
	Goroutines int
}

func (o op) String() string {
	var b strings.Builder
	b.WriteString(o.Kind)
	for _, kv := range []struct {
		k, v string
		set  bool
	}{
		{"a", strconv.Quote(o.A), o.A != ""}, {"b", strconv.Quote(o.B), o.B != ""},
		{"off", fmt.Sprint(o.Off), o.Off != 0}, {"size", fmt.Sprint(o.Size), o.Size != 0},
		{"fill", fmt.Sprintf("%q", o.Fill), o.Fill != 0}, {"flags", fmt.Sprint(o.Flags), o.Flags != 0},
		{"h", fmt.Sprint(o.Handle), o.Kind[0] == 'h'}, {"goroutines", fmt.Sprint(o.Goroutines), o.Goroutines != 0},
	} {
		if kv.set {
			fmt.Fprintf(&b, " %s=%s", kv.k, kv.v)
		}
	}
	return b.String()
}

const modelChunk = 32 // small chunks: every op crosses chunk boundaries

func fill(b byte, n int64) []byte { return bytes.Repeat([]byte{b}, int(n)) }

// gen makes a random op valid (mostly) for the model's state.
func gen(r *rand.Rand, m *model, handles int) op {
	var dirs, files, links, all []string
	for p, o := range m.paths {
		if p != "/" {
			all = append(all, p)
		}
		switch o.kind {
		case 'd':
			dirs = append(dirs, p)
		case 'f':
			files = append(files, p)
		case 'l':
			links = append(links, p)
		}
	}
	for _, s := range [][]string{dirs, files, links, all} {
		sort.Strings(s)
	}
	pick := func(s []string) string {
		if len(s) == 0 {
			return "/nothing"
		}
		return s[r.IntN(len(s))]
	}
	// Names of links start with "l" and only links get them, so a path
	// never runs through a symlink and the model needs no resolver.
	newName := func(prefix string) string {
		return path.Join(pick(dirs), prefix+strconv.Itoa(r.IntN(4)))
	}
	anyFile := func() string {
		if len(files) == 0 || r.IntN(8) == 0 {
			return newName("f")
		}
		return pick(files)
	}
	size := func() int64 { return int64(r.IntN(5 * modelChunk)) }
	fillByte := byte('A' + r.IntN(26))
	if o, ok := genCheckpointOp(r, m); ok {
		return o
	}
	switch k := r.IntN(100); {
	case k < 12:
		return op{Kind: "writefile", A: anyFile(), Size: size(), Fill: fillByte}
	case k < 24:
		return op{Kind: "write", A: anyFile(), Off: size(), Size: size(), Fill: fillByte}
	case k < 30:
		return op{Kind: "truncate", A: anyFile(), Size: size()}
	case k < 34:
		return op{Kind: "append", A: anyFile(), Size: int64(1 + r.IntN(modelChunk)), Goroutines: 1 + r.IntN(4)}
	case k < 44:
		src := pick(slices.Concat(dirs[1:], files))
		var dst string
		switch r.IntN(3) {
		case 0:
			dst = newName(string(path.Base(src)[0]))
		case 1:
			dst = pick(slices.Concat(dirs[1:], files))
		default:
			dst = newName("d")
		}
		return op{Kind: "rename", A: src, B: dst, Flags: []uint32{0, 0, sfs.RenameNoReplace, sfs.RenameExchange}[r.IntN(4)]}
	case k < 46:
		if len(links) > 0 {
			return op{Kind: "rename", A: pick(links), B: newName("l")}
		}
		return op{Kind: "mkdir", A: newName("d")}
	case k < 50:
		return op{Kind: "link", A: pick(files), B: newName("f")}
	case k < 56:
		// Now and then the wrong kind: EISDIR and ENOTDIR are checked too.
		return op{Kind: "unlink", A: pick(all)}
	case k < 59:
		return op{Kind: "symlink", A: pick(all) + strings.Repeat("/..", r.IntN(2)), B: newName("l")}
	case k < 65:
		return op{Kind: "mkdir", A: newName("d")}
	case k < 68:
		if r.IntN(4) == 0 {
			return op{Kind: "rmdir", A: pick(all)}
		}
		return op{Kind: "rmdir", A: pick(dirs[1:])}
	case k < 76:
		return op{Kind: "read", A: pick(files), Off: size(), Size: size()}
	case k < 80:
		return op{Kind: "open", A: anyFile(), Handle: handles}
	case k < 88 && handles > 0:
		h := r.IntN(handles)
		switch r.IntN(4) {
		case 0:
			return op{Kind: "hwrite", Handle: h, Off: size(), Size: size(), Fill: fillByte}
		case 1:
			return op{Kind: "hread", Handle: h, Off: size(), Size: size()}
		case 2:
			return op{Kind: "htruncate", Handle: h, Size: size()}
		}
		return op{Kind: "hclose", Handle: h}
	case k < 95:
		return op{Kind: "sync"}
	case k < 96:
		return op{Kind: "reopen"}
	case k < 97:
		// The owner stops with handles open, some on unlinked files.
		return op{Kind: "crash"}
	}
	return op{Kind: "readlink", A: pick(links)}
}

// harness applies ops to a store and the model.
type harness struct {
	t       testing.TB
	api     string // a key of modelAPIs: how names change
	store   string
	f       *sfs.FS
	m       *model
	handles []*handle
	ck      ckptModel
	// cold counts the ops after a reopen still to run before the next
	// whole-tree comparison, which reads every directory: until then the
	// ops meet a store whose metadata is read lazily, as they reach it.
	cold int
}

// coldOps is how many ops follow a reopen before the tree is compared.
const coldOps = 8

type handle struct {
	fl  *sfs.File
	obj *mobj
}

func newHarness(t testing.TB, api string) *harness {
	h := &harness{t: t, api: api, store: filepath.Join(scratchDir(t), "model.db"), m: newModel()}
	var err error
	h.f, err = sfs.Open(t.Context(), h.store, sfs.Options{ChunkSize: modelChunk, CommitInterval: 5 * time.Millisecond, NoAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) close() error {
	for _, hd := range h.handles {
		hd.fl.Close()
	}
	h.handles = nil
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}

// scratchDir is a temporary directory in RAM where there is one: the test
// syncs often, and its subject is the core, not the disk.
func scratchDir(t testing.TB) string {
	if _, err := os.Stat("/dev/shm"); err != nil {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "sqlfs-model-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// apply runs o on both sides and returns what differed, or "".
func (h *harness) apply(o op) string {
	f, m := h.f, h.m
	names := modelAPIs[h.api](f)
	want := syscall.Errno(0)
	var got error
	switch o.Kind {
	case "writefile":
		want = m.fileErr(o.A, true)
		got = f.WriteFile(o.A, fill(o.Fill, o.Size), 0o644)
		if want == 0 {
			m.file(o.A).data = fill(o.Fill, o.Size)
		}
	case "write":
		want = m.fileErr(o.A, true)
		fl, err := f.OpenFile(o.A, os.O_RDWR|os.O_CREATE, 0o644)
		if got = err; err == nil {
			_, got = fl.WriteAt(fill(o.Fill, o.Size), o.Off)
			fl.Close()
		}
		if want == 0 {
			writeModel(m.file(o.A), o.Off, fill(o.Fill, o.Size))
		}
	case "truncate":
		want = m.fileErr(o.A, false)
		got = names.Truncate(o.A, o.Size)
		if want == 0 {
			obj := m.paths[o.A]
			obj.data = resize(obj.data, o.Size)
		}
	case "append":
		want = m.fileErr(o.A, true)
		if want != 0 {
			_, got = f.OpenFile(o.A, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			break
		}
		obj := m.file(o.A)
		before := int64(len(obj.data))
		got = h.appendConcurrently(o)
		data, err := f.ReadFile(o.A)
		if err != nil {
			return fmt.Sprintf("read after append: %v", err)
		}
		if msg := checkAppended(data, obj.data, o); msg != "" {
			return msg
		}
		obj.data = append(obj.data[:before:before], data[before:]...)
	case "rename":
		want = m.rename(o.A, o.B, o.Flags)
		got = names.Rename2(o.A, o.B, o.Flags)
	case "link":
		want = m.link(o.A, o.B)
		got = names.Link(o.A, o.B)
	case "unlink":
		want = m.remove(o.A, false)
		got = names.Unlink(o.A)
	case "rmdir":
		want = m.remove(o.A, true)
		got = names.Rmdir(o.A)
	case "symlink":
		want = m.create(o.B, &mobj{kind: 'l', target: o.A})
		got = names.Symlink(o.A, o.B)
	case "mkdir":
		want = m.create(o.A, &mobj{kind: 'd'})
		got = names.Mkdir(o.A, 0o755)
	case "readlink":
		obj := m.paths[o.A]
		s, err := names.Readlink(o.A)
		switch {
		case m.parentErr(o.A) != 0:
			want = m.parentErr(o.A)
		case obj == nil:
			want = syscall.ENOENT
		case obj.kind != 'l':
			want = syscall.EINVAL
		case err == nil && s != obj.target:
			return fmt.Sprintf("readlink = %q, model %q", s, obj.target)
		}
		got = err
	case "read":
		obj := m.paths[o.A]
		if obj == nil || obj.kind != 'f' {
			_, got = f.ReadFile(o.A)
			if want = m.parentErr(o.A); want == 0 {
				want = syscall.ENOENT
			}
			if obj != nil {
				want = errnoOf(got) // reading a directory or link: not modelled
			}
			break
		}
		fl, err := f.OpenFile(o.A, os.O_RDONLY, 0)
		if err != nil {
			return fmt.Sprintf("open: %v", err)
		}
		msg := readCheck(fl, obj, o)
		fl.Close()
		if msg != "" {
			return msg
		}
	case "open":
		want = m.fileErr(o.A, true)
		fl, err := f.OpenFile(o.A, os.O_RDWR|os.O_CREATE, 0o644)
		if got = err; err == nil {
			h.handles = append(h.handles, &handle{fl: fl, obj: m.file(o.A)})
		}
	case "hwrite", "hread", "hclose", "htruncate":
		if o.Handle >= len(h.handles) {
			return "" // shrunk away
		}
		hd := h.handles[o.Handle]
		switch o.Kind {
		case "hwrite":
			_, got = hd.fl.WriteAt(fill(o.Fill, o.Size), o.Off)
			writeModel(hd.obj, o.Off, fill(o.Fill, o.Size))
		case "hread":
			if msg := readCheck(hd.fl, hd.obj, o); msg != "" {
				return msg
			}
		case "htruncate":
			if got = hd.fl.Truncate(o.Size); got == nil {
				hd.obj.data = resize(hd.obj.data, o.Size)
			}
		case "hclose":
			got = hd.fl.Close()
			h.handles = slices.Delete(h.handles, o.Handle, o.Handle+1)
		}
	case "sync":
		if err := f.Sync(h.t.Context()); err != nil {
			return fmt.Sprintf("sync: %v", err)
		}
		problems, err := f.Store().Check(h.t.Context())
		if err != nil || len(problems) > 0 {
			return fmt.Sprintf("store check after commit: %v\n%s", err, sqlstore.FormatProblems(problems))
		}
	case "checkpoint", "restore", "restorepaths", "diff", "cdelete", "fork":
		var msg string
		if got, want, msg = h.applyCheckpointOp(o); msg != "" {
			return msg
		}
	case "reopen", "crash":
		if o.Kind == "crash" {
			h.handles = nil // never closed: the store closes under them
		}
		if err := h.close(); err != nil {
			return fmt.Sprintf("close: %v", err)
		}
		var err error
		h.f, err = sfs.Open(h.t.Context(), h.store, sfs.Options{ChunkSize: modelChunk, CommitInterval: 5 * time.Millisecond, NoAudit: true})
		if err != nil {
			return fmt.Sprintf("reopen: %v", err)
		}
		h.cold = coldOps + 1
	}
	if e := errnoOf(got); e != want {
		return fmt.Sprintf("error %v (%v), model says %v", e, got, want)
	}
	if h.cold > 0 {
		h.cold--
		return h.usage() // the counters come from the store's totals, not a walk
	}
	return h.compare()
}

// usage checks the core's counters against the model: every object a
// path or an open handle holds, and the bytes of the files among them. A
// file only a handle holds counts its size as the handle sees it: a
// restore rolls back an unlinked file that a checkpoint saw unlinked too,
// which the model leaves alone.
func (h *harness) usage() string {
	objs := map[*mobj]bool{}
	var bytes int64
	for _, o := range h.m.paths {
		if !objs[o] && o.kind == 'f' {
			bytes += int64(len(o.data))
		}
		objs[o] = true
	}
	for _, hd := range h.handles {
		if objs[hd.obj] {
			continue
		}
		objs[hd.obj] = true
		a, err := hd.fl.Stat()
		if err != nil {
			return fmt.Sprintf("stat of a handle: %v", err)
		}
		bytes += a.Size
	}
	if u := h.f.Usage(); u.Inodes != int64(len(objs)) || u.Bytes != bytes {
		return fmt.Sprintf("usage %d inodes of %d bytes, model %d of %d", u.Inodes, u.Bytes, len(objs), bytes)
	}
	return ""
}

// fileErr is the error of opening p as a regular file, creating it if create.
func (m *model) fileErr(p string, create bool) syscall.Errno {
	if e := m.parentErr(p); e != 0 {
		return e
	}
	switch o := m.paths[p]; {
	case o == nil && !create:
		return syscall.ENOENT
	case o == nil, o.kind == 'f':
		return 0
	case o.kind == 'd':
		return syscall.EISDIR
	}
	return syscall.EINVAL // a link: generation never opens one
}

// file returns the file at p, creating it.
func (m *model) file(p string) *mobj {
	if o := m.paths[p]; o != nil {
		return o
	}
	o := &mobj{kind: 'f'}
	m.paths[p] = o
	return o
}

func (m *model) create(p string, o *mobj) syscall.Errno {
	if e := m.parentErr(p); e != 0 {
		return e
	}
	if m.paths[p] != nil {
		return syscall.EEXIST
	}
	m.paths[p] = o
	return 0
}

func (m *model) remove(p string, dir bool) syscall.Errno {
	if e := m.parentErr(p); e != 0 {
		return e
	}
	o := m.paths[p]
	switch {
	case o == nil:
		return syscall.ENOENT
	case o.kind == 'd' && !dir:
		return syscall.EISDIR
	case o.kind != 'd' && dir:
		return syscall.ENOTDIR
	case o.kind == 'd' && len(m.children(p)) > 0:
		return syscall.ENOTEMPTY
	}
	delete(m.paths, p)
	return 0
}

func (m *model) link(old, new string) syscall.Errno {
	if e := m.parentErr(old); e != 0 {
		return e
	}
	o := m.paths[old]
	switch {
	case o == nil:
		return syscall.ENOENT
	case o.kind == 'd':
		return syscall.EPERM
	}
	if e := m.parentErr(new); e != 0 {
		return e
	}
	if m.paths[new] != nil {
		return syscall.EEXIST
	}
	m.paths[new] = o
	return 0
}

// rename follows the core's order of checks.
func (m *model) rename(a, b string, flags uint32) syscall.Errno {
	if e := m.parentErr(a); e != 0 {
		return e
	}
	if e := m.parentErr(b); e != 0 {
		return e
	}
	src, dst := m.paths[a], m.paths[b]
	switch {
	case src == nil:
		return syscall.ENOENT
	case flags&sfs.RenameNoReplace != 0 && dst != nil:
		return syscall.EEXIST
	case flags&sfs.RenameExchange != 0 && dst == nil:
		return syscall.ENOENT
	case dst == src:
		return 0
	case src.kind == 'd' && under(b, a),
		flags&sfs.RenameExchange != 0 && dst.kind == 'd' && under(a, b):
		return syscall.EINVAL
	}
	if flags&sfs.RenameExchange != 0 {
		tmp := "/\x00swap"
		m.move(a, tmp)
		m.move(b, a)
		m.move(tmp, b)
		return 0
	}
	if dst != nil {
		switch {
		case src.kind == 'd' && dst.kind != 'd':
			return syscall.ENOTDIR
		case src.kind != 'd' && dst.kind == 'd':
			return syscall.EISDIR
		case dst.kind == 'd' && len(m.children(b)) > 0:
			return syscall.ENOTEMPTY
		}
		delete(m.paths, b)
	}
	m.move(a, b)
	return 0
}

func resize(b []byte, n int64) []byte {
	if int64(len(b)) >= n {
		return b[:n:n]
	}
	return append(b[:len(b):len(b)], make([]byte, n-int64(len(b)))...)
}

func writeModel(o *mobj, off int64, p []byte) {
	if len(p) == 0 {
		return // an empty write does not extend the file
	}
	if end := off + int64(len(p)); end > int64(len(o.data)) {
		o.data = resize(o.data, end)
	}
	copy(o.data[off:], p)
}

func readCheck(fl *sfs.File, o *mobj, op op) string {
	buf := make([]byte, op.Size)
	n, err := fl.ReadAt(buf, op.Off)
	want := []byte{}
	if op.Off < int64(len(o.data)) {
		want = o.data[op.Off:min(int64(len(o.data)), op.Off+op.Size)]
	}
	if err != nil && err != io.EOF {
		return fmt.Sprintf("read: %v", err)
	}
	if !bytes.Equal(buf[:n], want) {
		return fmt.Sprintf("read at %d: %.60q, model %.60q", op.Off, buf[:n], want)
	}
	return ""
}

// appendConcurrently appends o.Goroutines records of o.Size bytes each,
// one goroutine per record, each through its own O_APPEND handle.
func (h *harness) appendConcurrently(o op) error {
	var wg sync.WaitGroup
	errs := make([]error, o.Goroutines)
	for g := range o.Goroutines {
		wg.Go(func() {
			fl, err := h.f.OpenFile(o.A, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				errs[g] = err
				return
			}
			_, errs[g] = fl.Write(fill(byte('a'+g), o.Size))
			if err := fl.Close(); errs[g] == nil {
				errs[g] = err
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkAppended checks that data is old followed by every goroutine's
// record, whole, in some order.
func checkAppended(data, old []byte, o op) string {
	if !bytes.HasPrefix(data, old) || int64(len(data)) != int64(len(old))+int64(o.Goroutines)*o.Size {
		return fmt.Sprintf("append: file is %d bytes (%q), want %d + %d×%d", len(data), data, len(old), o.Goroutines, o.Size)
	}
	seen := map[byte]bool{}
	for rec := data[len(old):]; len(rec) > 0; rec = rec[o.Size:] {
		r := rec[:o.Size]
		if !bytes.Equal(r, fill(r[0], o.Size)) || seen[r[0]] {
			return fmt.Sprintf("append: records interleave: %q", data[len(old):])
		}
		seen[r[0]] = true
	}
	return ""
}

// compare checks the whole tree and the counters against the model.
func (h *harness) compare() string {
	if msg := compareTree(h.f, h.m); msg != "" {
		return msg
	}
	return h.usage()
}

// compareTree checks the whole tree of f against m: every path the model
// has, looked up deepest first (so that in a store reopened cold each
// lookup meets directories not read yet), then the listings.
func compareTree(f *sfs.FS, m *model) string {
	var modelPaths []string
	for p := range m.paths {
		if p != "/" {
			modelPaths = append(modelPaths, p)
		}
	}
	sort.Strings(modelPaths)
	nlinks := m.nlinks()
	byDepth := slices.Clone(modelPaths)
	slices.SortStableFunc(byDepth, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, p := range append(byDepth, "/") {
		o := m.paths[p]
		a, err := f.Lstat(p)
		if err != nil {
			return fmt.Sprintf("lstat %s: %v", p, err)
		}
		if want := nlinks[o]; a.Nlink != want {
			return fmt.Sprintf("nlink %s = %d, model %d", p, a.Nlink, want)
		}
		switch o.kind {
		case 'f':
			data, err := f.ReadFile(p)
			if err != nil || !bytes.Equal(data, o.data) {
				return fmt.Sprintf("%s holds %d bytes %.60q (%v), model %d bytes %.60q", p, len(data), data, err, len(o.data), o.data)
			}
		case 'l':
			if a.Mode&syscall.S_IFMT != syscall.S_IFLNK {
				return fmt.Sprintf("%s is not a symlink", p)
			}
		case 'd':
			if !a.IsDir() {
				return fmt.Sprintf("%s is not a directory", p)
			}
		}
	}
	var fsPaths []string
	var walk func(dir string) string
	walk = func(dir string) string {
		ents, err := f.ReadDir(dir)
		if err != nil {
			return fmt.Sprintf("readdir %s: %v", dir, err)
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name)
			fsPaths = append(fsPaths, p)
			if e.Mode == syscall.S_IFDIR {
				if msg := walk(p); msg != "" {
					return msg
				}
			}
		}
		return ""
	}
	if msg := walk("/"); msg != "" {
		return msg
	}
	sort.Strings(fsPaths)
	if !slices.Equal(fsPaths, modelPaths) {
		return fmt.Sprintf("tree:\n  fs    %q\n  model %q", fsPaths, modelPaths)
	}
	return ""
}

// run replays ops on a fresh store; it returns the index of the failing op
// and what differed, or -1.
func runOps(t testing.TB, api string, ops []op) (int, string) {
	h := newHarness(t, api)
	defer h.close()
	for i, o := range ops {
		if msg := h.apply(o); msg != "" {
			return i, msg
		}
	}
	if msg := h.compare(); msg != "" && len(ops) > 0 {
		return len(ops) - 1, "at the end: " + msg
	}
	return -1, ""
}

// shrink finds a short subsequence of ops that still fails at an op of
// the same kind as the last one, by removing ever smaller blocks (delta
// debugging).
func shrink(t testing.TB, api string, ops []op) []op {
	kind := ops[len(ops)-1].Kind
	for block := len(ops) / 2; block >= 1; block /= 2 {
		for start := 0; start+block <= len(ops); {
			try := slices.Concat(ops[:start], ops[start+block:])
			if i, _ := runOps(t, api, try); i >= 0 && try[i].Kind == kind {
				ops = try[:i+1]
				continue
			}
			start += block
		}
	}
	return ops
}

// TestModel runs over the path API and the inode API alike.
func TestModel(t *testing.T) {
	for _, api := range slices.Sorted(maps.Keys(modelAPIs)) {
		t.Run(api, func(t *testing.T) { testModel(t, api) })
	}
}

func testModel(t *testing.T, api string) {
	seeds, steps := 4, 1500
	if os.Getenv("SQLFS_TEST_LONG") != "" {
		seeds, steps = 1000, 1000 // 1M operations, trees kept small
	}
	first := uint64(time.Now().UnixNano())
	if s := os.Getenv("SQLFS_MODEL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		must(t, err)
		first, seeds = v, 1
	}
	total := 0
	for i := range seeds {
		seed := first + uint64(i)
		r := rand.New(rand.NewPCG(seed, seed))
		h := newHarness(t, api)
		var ops []op
		failed := ""
		for range steps {
			o := gen(r, h.m, len(h.handles))
			ops = append(ops, o)
			if failed = h.apply(o); failed != "" {
				break
			}
		}
		if failed == "" {
			failed = h.compare()
		}
		h.close()
		total += len(ops)
		if seeds > 10 && i%50 == 49 {
			t.Logf("seed %d: %d ops, %d in all", seed, len(ops), total)
		}
		if failed != "" {
			short := shrink(t, api, ops)
			_, why := runOps(t, api, short)
			var b strings.Builder
			for _, o := range short {
				b.WriteString("\n  " + o.String())
			}
			// A failure that depends on timing may not replay: show the
			// ops that led to it too.
			var last strings.Builder
			for _, o := range ops[max(0, len(ops)-20):] {
				last.WriteString("\n  " + o.String())
			}
			t.Fatalf("seed %d (SQLFS_MODEL_SEED=%d): after op %d: %s\nlast ops:%s\nshortest failing sequence (%d ops, then: %s):%s",
				seed, seed, len(ops), failed, last.String(), len(short), why, b.String())
		}
	}
	t.Logf("%d operations over %d seeds from %d", total, seeds, first)
}
