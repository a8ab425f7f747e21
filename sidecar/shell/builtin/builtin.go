// Package builtin holds the commands the shell backend runs in-process. A
// command sees only its streams and the shell's view of the filesystem
// (FS), never the host, so it works the same against any store.
package builtin

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"sync"
	"time"
)

// File is an open file of the shell's filesystem.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	Stat() (fs.FileInfo, error)
}

// FS is the filesystem as the shell sees it: /workspace is the store, /tmp
// a scratch area, /dev/null the bit bucket. Names are absolute and clean;
// use Env.Abs to resolve a command's argument.
type FS interface {
	Open(name string) (File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Mkdir(name string, perm fs.FileMode) error
	MkdirAll(name string, perm fs.FileMode) error
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldname, newname string) error
	Symlink(target, name string) error
	Readlink(name string) (string, error)
	Link(oldname, newname string) error
	Chmod(name string, mode fs.FileMode) error
	Chtimes(name string, atime, mtime time.Time) error
	Truncate(name string, size int64) error
}

// Env is what one command invocation gets.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Dir    string // the shell's working directory, absolute
	Getenv func(name string) string
	// Environ lists the exported variables as NAME=value, as a new
	// process would get them (env, printenv).
	Environ func() []string
	FS      FS
	// Mem is the exec's memory budget; nil (tests) means unbounded.
	Mem Memory
	// Run runs a command line as the shell would (for xargs, find -exec,
	// timeout, sh -c); nil where nesting is not possible.
	Run func(ctx context.Context, env *Env, args []string) int
	// HTTP is the exec's way to the network (the owner's egress policy
	// and credentials); nil means none.
	HTTP http.RoundTripper
	// Actor is whom the audit trail names for the exec's changes.
	Actor string
}

// Abs makes name absolute against the working directory. It does not clean
// it: ".." is resolved physically by the filesystem, since a symlink may
// precede it.
func (e *Env) Abs(name string) string {
	if path.IsAbs(name) {
		return name
	}
	return e.Dir + "/" + name
}

// Errorf prints "cmd: message" to stderr, the shape coreutils use.
func (e *Env) Errorf(cmd, format string, args ...any) {
	fmt.Fprintf(e.Stderr, cmd+": "+format+"\n", args...)
}

// Func runs one command; args[0] is its name. It returns the exit status.
type Func func(ctx context.Context, env *Env, args []string) int

var (
	mu       sync.RWMutex
	registry = map[string]Func{}
)

// register makes fn available under name. Called from init in the files
// that define commands; commands of other packages are the shell's
// Options.Commands.
func register(name string, fn Func) {
	mu.Lock()
	defer mu.Unlock()
	registry[name] = fn
}

// Lookup returns the command called name.
func Lookup(name string) (Func, bool) {
	mu.RLock()
	defer mu.RUnlock()
	fn, ok := registry[name]
	return fn, ok
}

// Names lists every registered command, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
