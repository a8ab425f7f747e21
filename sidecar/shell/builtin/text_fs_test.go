package builtin

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// textNode is one entry of textMemFS.
type textNode struct {
	data   []byte
	mode   fs.FileMode
	target string // symlink target
	mtime  time.Time
}

// textMemFS is an in-memory FS for the text commands' tests: enough POSIX
// (directories, symlinks, modes, errno errors) to exercise them without a
// store.
type textMemFS struct {
	nodes map[string]*textNode
}

// newTextFS builds a tree from "path": "content" pairs;
// content "/" is a directory, "->target" a symlink.
func newTextFS(files map[string]string) *textMemFS {
	m := &textMemFS{nodes: map[string]*textNode{"/": {mode: fs.ModeDir | 0o755}}}
	for p, c := range files {
		p = path.Join("/", p)
		_ = m.MkdirAll(path.Dir(p), 0o755)
		switch {
		case c == "/":
			_ = m.MkdirAll(p, 0o755)
		case strings.HasPrefix(c, "->"):
			_ = m.Symlink(c[2:], p)
		default:
			m.nodes[p] = &textNode{data: []byte(c), mode: 0o644, mtime: time.Unix(1700000000, 0)}
		}
	}
	return m
}

func textPathErr(op, name string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: name, Err: errno}
}

// resolve follows symlinks in every component (and the last if follow).
func (m *textMemFS) resolve(name string, follow bool) (string, *textNode, error) {
	name = path.Clean("/" + name)
	cur := "/"
	parts := strings.Split(strings.TrimPrefix(name, "/"), "/")
	for i, p := range parts {
		if p == "" {
			continue
		}
		next := path.Join(cur, p)
		n, ok := m.nodes[next]
		if !ok {
			return next, nil, textPathErr("open", name, syscall.ENOENT)
		}
		last := i == len(parts)-1
		for hops := 0; n.mode&fs.ModeSymlink != 0 && (!last || follow); hops++ {
			if hops > 40 {
				return "", nil, textPathErr("open", name, syscall.ELOOP)
			}
			t := n.target
			if !path.IsAbs(t) {
				t = path.Join(path.Dir(next), t)
			}
			next = path.Clean(t)
			if n, ok = m.nodes[next]; !ok {
				return next, nil, textPathErr("open", name, syscall.ENOENT)
			}
		}
		if !last && !n.mode.IsDir() {
			return "", nil, textPathErr("open", name, syscall.ENOTDIR)
		}
		cur = next
	}
	return cur, m.nodes[cur], nil
}

// textMemFile is an open textMemFS file; writes always append, which is
// all the commands under test do (after O_TRUNC or with O_APPEND).
type textMemFile struct {
	name  string
	node  *textNode
	r     *bytes.Reader
	write bool
}

type textMemInfo struct {
	name string
	n    *textNode
}

func (i textMemInfo) Name() string       { return path.Base(i.name) }
func (i textMemInfo) Size() int64        { return int64(len(i.n.data)) }
func (i textMemInfo) Mode() fs.FileMode  { return i.n.mode }
func (i textMemInfo) ModTime() time.Time { return i.n.mtime }
func (i textMemInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i textMemInfo) Sys() any           { return nil }

func (f *textMemFile) Read(p []byte) (int, error) {
	if f.node.mode.IsDir() {
		return 0, textPathErr("read", f.name, syscall.EISDIR)
	}
	if f.r == nil {
		f.r = bytes.NewReader(f.node.data)
	}
	return f.r.Read(p)
}

func (f *textMemFile) Write(p []byte) (int, error) {
	if !f.write {
		return 0, textPathErr("write", f.name, syscall.EBADF)
	}
	f.node.data = append(f.node.data, p...)
	return len(p), nil
}

func (f *textMemFile) Close() error               { return nil }
func (f *textMemFile) Stat() (fs.FileInfo, error) { return textMemInfo{f.name, f.node}, nil }

func (m *textMemFS) Open(name string) (File, error) { return m.OpenFile(name, os.O_RDONLY, 0) }

func (m *textMemFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	p, n, err := m.resolve(name, true)
	if err != nil {
		if n == nil && p != "" && flag&os.O_CREATE != 0 {
			if dn, ok := m.nodes[path.Dir(p)]; !ok || !dn.mode.IsDir() {
				return nil, err
			}
			n = &textNode{mode: perm & fs.ModePerm, mtime: time.Now()}
			m.nodes[p] = n
		} else {
			return nil, err
		}
	} else if flag&os.O_EXCL != 0 && flag&os.O_CREATE != 0 {
		return nil, textPathErr("open", name, syscall.EEXIST)
	}
	write := flag&(os.O_WRONLY|os.O_RDWR) != 0
	if write && n.mode.IsDir() {
		return nil, textPathErr("open", name, syscall.EISDIR)
	}
	if flag&os.O_TRUNC != 0 {
		n.data = nil
	}
	return &textMemFile{name: p, node: n, write: write}, nil
}

func (m *textMemFS) Stat(name string) (fs.FileInfo, error) {
	p, n, err := m.resolve(name, true)
	if err != nil {
		return nil, err
	}
	return textMemInfo{p, n}, nil
}

func (m *textMemFS) Lstat(name string) (fs.FileInfo, error) {
	p, n, err := m.resolve(name, false)
	if err != nil {
		return nil, err
	}
	return textMemInfo{p, n}, nil
}

type textMemDirEntry struct{ textMemInfo }

func (e textMemDirEntry) Type() fs.FileMode          { return e.n.mode.Type() }
func (e textMemDirEntry) Info() (fs.FileInfo, error) { return e.textMemInfo, nil }

func (m *textMemFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, n, err := m.resolve(name, true)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, textPathErr("readdir", name, syscall.ENOTDIR)
	}
	var out []fs.DirEntry
	for k, v := range m.nodes {
		if k != "/" && path.Dir(k) == p {
			out = append(out, textMemDirEntry{textMemInfo{k, v}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (m *textMemFS) Mkdir(name string, perm fs.FileMode) error {
	p := path.Clean("/" + name)
	if _, ok := m.nodes[p]; ok {
		return textPathErr("mkdir", name, syscall.EEXIST)
	}
	if d, ok := m.nodes[path.Dir(p)]; !ok || !d.mode.IsDir() {
		return textPathErr("mkdir", name, syscall.ENOENT)
	}
	m.nodes[p] = &textNode{mode: fs.ModeDir | perm&fs.ModePerm, mtime: time.Now()}
	return nil
}

func (m *textMemFS) MkdirAll(name string, perm fs.FileMode) error {
	p := path.Clean("/" + name)
	if n, ok := m.nodes[p]; ok {
		if n.mode.IsDir() {
			return nil
		}
		return textPathErr("mkdir", name, syscall.ENOTDIR)
	}
	if err := m.MkdirAll(path.Dir(p), perm); err != nil {
		return err
	}
	return m.Mkdir(p, perm)
}

func (m *textMemFS) Remove(name string) error {
	p := path.Clean("/" + name)
	n, ok := m.nodes[p]
	if !ok {
		return textPathErr("remove", name, syscall.ENOENT)
	}
	if n.mode.IsDir() {
		for k := range m.nodes {
			if k != p && strings.HasPrefix(k, p+"/") {
				return textPathErr("remove", name, syscall.ENOTEMPTY)
			}
		}
	}
	delete(m.nodes, p)
	return nil
}

func (m *textMemFS) RemoveAll(name string) error {
	p := path.Clean("/" + name)
	for k := range m.nodes {
		if k == p || strings.HasPrefix(k, p+"/") {
			delete(m.nodes, k)
		}
	}
	return nil
}

func (m *textMemFS) Rename(oldname, newname string) error {
	o, nw := path.Clean("/"+oldname), path.Clean("/"+newname)
	n, ok := m.nodes[o]
	if !ok {
		return textPathErr("rename", oldname, syscall.ENOENT)
	}
	delete(m.nodes, o)
	m.nodes[nw] = n
	return nil
}

func (m *textMemFS) Symlink(target, name string) error {
	p := path.Clean("/" + name)
	if _, ok := m.nodes[p]; ok {
		return textPathErr("symlink", name, syscall.EEXIST)
	}
	m.nodes[p] = &textNode{mode: fs.ModeSymlink | 0o777, target: target, data: []byte(target)}
	return nil
}

func (m *textMemFS) Readlink(name string) (string, error) {
	n, ok := m.nodes[path.Clean("/"+name)]
	if !ok || n.mode&fs.ModeSymlink == 0 {
		return "", textPathErr("readlink", name, syscall.EINVAL)
	}
	return n.target, nil
}

func (m *textMemFS) Link(oldname, newname string) error {
	_, n, err := m.resolve(oldname, false)
	if err != nil {
		return err
	}
	m.nodes[path.Clean("/"+newname)] = n
	return nil
}

func (m *textMemFS) Chmod(name string, mode fs.FileMode) error {
	_, n, err := m.resolve(name, true)
	if err != nil {
		return err
	}
	n.mode = n.mode.Type() | mode&fs.ModePerm
	return nil
}

func (m *textMemFS) Chtimes(name string, _, mtime time.Time) error {
	_, n, err := m.resolve(name, true)
	if err != nil {
		return err
	}
	n.mtime = mtime
	return nil
}

func (m *textMemFS) Truncate(name string, size int64) error {
	_, n, err := m.resolve(name, true)
	if err != nil {
		return err
	}
	n.data = append(n.data, make([]byte, max(0, int(size)-len(n.data)))...)[:size]
	return nil
}

// textCase is one command run in the table-driven tests.
type textCase struct {
	name   string
	args   []string
	stdin  string
	files  map[string]string // fixture tree under /w (the working directory)
	want   string            // stdout
	status int
	after  map[string]string // files expected afterwards, relative to /w
}

// runTextCases runs each case against a fresh in-memory tree.
func runTextCases(t *testing.T, cases []textCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"/w/": "/"}
			for k, v := range c.files {
				files[path.Join("/w", k)] = v
			}
			m := newTextFS(files)
			fn, ok := Lookup(c.args[0])
			if !ok {
				t.Fatalf("command %q not registered", c.args[0])
			}
			var stdout, stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(c.stdin), Stdout: &stdout, Stderr: &stderr, Dir: "/w",
				Getenv: func(n string) string {
					if n == "HOME" {
						return "/w"
					}
					return ""
				}, FS: m}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			status := fn(ctx, env, append([]string(nil), c.args...))
			if stdout.String() != c.want || status != c.status {
				t.Errorf("%q:\nstdout %q\nwant   %q\nstatus %d want %d\nstderr %s", c.args, stdout.String(), c.want, status, c.status, stderr.String())
			}
			for p, want := range c.after {
				got, err := io.ReadAll(textMust(m.Open(path.Join("/w", p))))
				if err != nil || string(got) != want {
					t.Errorf("%s afterwards = %q (%v), want %q", p, got, err, want)
				}
			}
		})
	}
}

func textMust(f File, err error) io.Reader {
	if err != nil {
		return strings.NewReader("<" + err.Error() + ">")
	}
	return f
}
