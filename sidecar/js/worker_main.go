package js

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/js/wire"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// A process started as a worker serves its one job here, before main:
// every binary that links this package (sqlfs-exec, the test binaries)
// can be re-executed as a worker, with no hook of its own.
func init() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	os.Exit(workerMain())
}

// workerMain runs the jobs the owner sends over fds 3 and 4 (the pipes
// of wire.Pipes; fd 5 their shared page), one at a time, and
// reports each one's exit status. A broken connection means the owner is
// gone: the worker ends.
func workerMain() int {
	c := &client{conn: wire.PeerConn(wire.MaxWorkerFrame)}
	// Past the soft RLIMIT_CPU the owner set for the job, the kernel sends
	// SIGXCPU, which Go would ignore: end as the hard limit would.
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}()
	_ = time.Local.String() // load the zone now, as the program will
	warmUp()
	next := c.prepare()
	idle := retained()
	if err := c.conn.Send(&wire.Msg{Op: wire.OpReady, N: int64(landlockABI())}); err != nil {
		return 75
	}
	for {
		m, err := c.conn.Recv()
		if err != nil || m.Op != wire.OpJob {
			return 75
		}
		var job workerJob
		if err := json.Unmarshal(m.Data, &job); err != nil {
			fmt.Fprintf(os.Stderr, "sqlfs js worker: bad job: %v\n", err)
			return 75
		}
		hits, misses := programs.stats()
		code := runJob(c, job, next)
		h, m2 := programs.stats()
		if err := c.conn.Send(&wire.Msg{Op: wire.OpExit, N: int64(code), T: [2]int64{h - hits, m2 - misses}}); err != nil {
			return 75
		}
		// The runtime of the job is garbage now. A job that grew the
		// heap gives its memory back before the worker says it can take
		// another (the owner decides on its resident size); a small one's
		// garbage is left to the collector, since returning it would
		// cost the next job the page faults and the park a collection.
		if retained() > idle+keepRetained {
			debug.FreeOSMemory()
		}
		// The next job's runtime is set up before the worker is idle, so
		// an exec does not wait for it and an idle worker runs nothing.
		next = c.prepare()
		if err := c.conn.Send(&wire.Msg{Op: wire.OpReady, N: int64(landlockABI())}); err != nil {
			return 75
		}
	}
}

// keepRetained is how much memory a job may leave the worker holding
// above what it held idle before the worker returns it to the kernel.
const keepRetained = 64 << 20

// retained is the memory the Go runtime holds from the kernel (mapped
// and not returned), about what the worker has resident.
func retained() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// prepared is a runtime set up for the worker's next job, and how its
// setup failed, if it did.
type prepared struct {
	v   *vm
	err error
}

// prepare sets up the runtime of the next job: a fresh one, over an
// environment whose directory, variables and input the job fills in.
func (c *client) prepare() prepared {
	v := newVM(&builtin.Env{Stdout: stream{c, 1}, Stderr: stream{c, 2}, FS: remoteFS{c: c}})
	return prepared{v, v.setup()}
}

// runJob runs one job in a fresh runtime: nothing of an earlier job's
// program is reachable from it (the compiled-program cache holds
// immutable programs, keyed by file name and content).
func runJob(c *client, job workerJob, next prepared) int {
	// Soft pressure: the collector works harder as the heap nears the
	// limit, which the program's own heap check and the kernel enforce.
	// A quarter above it, so the check interrupts the program before the
	// collector thrashes.
	debug.SetMemoryLimit(job.MaxHeapBytes + job.MaxHeapBytes/4 + ProgramCacheBytes)
	env := next.v.env
	env.Dir = job.Dir
	env.Environ = func() []string { return job.Environ }
	if job.Stdin {
		env.Stdin = stdin{c}
	}
	p := Program{File: job.File, Code: job.Code, Print: job.Print, Argv: job.Argv, MaxHeapBytes: job.MaxHeapBytes}
	defer collectLess()()
	return next.v.run(context.Background(), remoteServices{c, job.AllowNetwork}, p, next.err)
}

// A worker's live heap between jobs is small (a few MiB: the runtime and
// the library's compiled files), and Go collects each time the heap
// doubles: a program allocating tens of MiB (a loop over files) paid
// for a collection every few MiB, each one marking, sweeping and
// slowing the program with its write barrier. So while a job's heap
// is small, the collector lets it allocate gcHeadroom between
// collections; past twice that (a program that keeps what it
// allocates), it is back to Go's default, so garbage never makes up
// much of what the heap check (vm.watch) and the limits count.
const gcHeadroom = 32 << 20

// collectLess sets the collector for a job's start and returns what
// restores it at the job's end.
func collectLess() (restore func()) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	live, base := s[0].Value.Uint64(), s[1].Value.Uint64()
	pct := 100 * gcHeadroom / max(int(live), 1<<20)
	if pct <= 100 {
		return func() {}
	}
	debug.SetGCPercent(pct)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(s[1:])
			if s[1].Value.Uint64() > base+2*gcHeadroom {
				debug.SetGCPercent(100)
				return
			}
		}
	}()
	return func() {
		close(done)
		debug.SetGCPercent(100)
	}
}

// warmUp runs an empty program before the worker says it is ready, so
// the first exec does not pay for compiling the library files, the
// runtime's first allocations and page faults of code never run yet.
func warmUp() {
	env := &builtin.Env{Stdout: io.Discard, Stderr: io.Discard, Dir: "/workspace", Environ: func() []string { return nil }}
	runProgram(context.Background(), env, remoteServices{}, Program{File: "/workspace/[eval]", Code: "", Argv: []string{"/usr/bin/node"}})
}

// client makes a worker's calls to its owner, one at a time.
type client struct{ conn *wire.Conn }

// call sends m and returns the answer; without an owner there is nothing
// left to do, so a broken connection ends the worker.
func (c *client) call(m *wire.Msg) *wire.Msg {
	if err := c.conn.Send(m); err != nil {
		os.Exit(75)
	}
	r, err := c.conn.Recv()
	if err != nil {
		os.Exit(75)
	}
	return r
}

func (c *client) err(m *wire.Msg) error { return c.call(m).Err.Go() }

// stream is the program's stdout (1) or stderr (2): writes need no answer.
type stream struct {
	c  *client
	fd int64
}

func (s stream) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += wire.MaxChunk {
		if err := s.c.conn.Send(&wire.Msg{Op: wire.OpWrite, N: s.fd, Data: p[off:min(len(p), off+wire.MaxChunk)]}); err != nil {
			os.Exit(75)
		}
	}
	return len(p), nil
}

type stdin struct{ c *client }

func (s stdin) Read(p []byte) (int, error) {
	r := s.c.call(&wire.Msg{Op: wire.OpStdin, N: int64(len(p))})
	return copy(p, r.Data), r.Err.Go()
}

// remoteFS is builtin.FS over the owner's; with check, its calls that
// follow a path's final symlinks have the owner check them first
// (wire.Msg.Check).
type remoteFS struct {
	c     *client
	check bool
}

func (r remoteFS) checking() builtin.FS { return remoteFS{r.c, true} }

func (r remoteFS) Open(name string) (builtin.File, error) { return r.OpenFile(name, os.O_RDONLY, 0) }

func (r remoteFS) OpenFile(name string, flag int, perm fs.FileMode) (builtin.File, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpOpen, Check: r.check, Path: name, N: int64(flag), M: int64(perm)})
	if m.Err != nil {
		return nil, m.Err.Go()
	}
	f := &remoteFile{c: r.c, h: m.N}
	if m.M&(wire.CapReadAt|wire.CapWriteAt|wire.CapTruncate) == wire.CapReadAt|wire.CapWriteAt|wire.CapTruncate {
		return &remoteFileAt{f}, nil
	}
	return f, nil
}

func (r remoteFS) readHead(name string) ([]byte, builtin.File, fs.FileInfo, step, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpReadFile, Path: name})
	if m.Err != nil {
		return nil, nil, nil, step(m.M), m.Err.Go()
	}
	var fi fs.FileInfo
	if m.Info != nil {
		fi = m.Info.FileInfo()
	}
	if m.N == 0 {
		return m.Data, nil, fi, 0, nil
	}
	return m.Data, &remoteFile{c: r.c, h: m.N}, fi, 0, nil
}

func (r remoteFS) writeWhole(name string, flag int, perm fs.FileMode, data []byte) (step, error) {
	if len(data) > wire.MaxChunk {
		return writeWhole(r, name, flag, perm, data)
	}
	m := r.c.call(&wire.Msg{Op: wire.OpWriteFile, Path: name, N: int64(flag), M: int64(perm), Data: data})
	return step(m.M), m.Err.Go()
}

func (r remoteFS) mkdirNode(abs string, slash bool, perm fs.FileMode, recursive bool) (string, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpMkdirNode, Path: abs, M: int64(perm), N: nodeFlags(recursive, slash)})
	return m.Path, m.Err.Go()
}

func (r remoteFS) unlinkNode(abs string, slash bool) error {
	return r.c.err(&wire.Msg{Op: wire.OpUnlinkNode, Path: abs, N: nodeFlags(false, slash)})
}

func (r remoteFS) renameNode(src, dst string, flags renameFlags) error {
	n := nodeFlags(false, flags.fromSlash)
	if flags.toSlash {
		n |= wire.NodeSlash2
	}
	if flags.notAName {
		n |= wire.NodeNotAName
	}
	return r.c.err(&wire.Msg{Op: wire.OpRenameNode, Path: src, Path2: dst, N: n})
}

func nodeFlags(recursive, slash bool) int64 {
	var n int64
	if recursive {
		n |= wire.NodeRecursive
	}
	if slash {
		n |= wire.NodeSlash
	}
	return n
}

func (r remoteFS) info(op wire.Op, name string) (fs.FileInfo, error) {
	m := r.c.call(&wire.Msg{Op: op, Check: r.check && op == wire.OpStat, Path: name})
	if m.Err != nil {
		return nil, m.Err.Go()
	}
	return m.Info.FileInfo(), nil
}

func (r remoteFS) Stat(name string) (fs.FileInfo, error)  { return r.info(wire.OpStat, name) }
func (r remoteFS) Lstat(name string) (fs.FileInfo, error) { return r.info(wire.OpLstat, name) }

func (r remoteFS) ReadDir(name string) ([]fs.DirEntry, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpReadDir, Check: r.check, Path: name})
	if m.Err != nil {
		return nil, m.Err.Go()
	}
	out := make([]fs.DirEntry, len(m.Ents))
	for i, e := range m.Ents {
		out[i] = remoteDirent{fs: r, dir: name, e: e}
	}
	return out, nil
}

func (r remoteFS) Mkdir(name string, perm fs.FileMode) error {
	return r.c.err(&wire.Msg{Op: wire.OpMkdir, Path: name, M: int64(perm)})
}

func (r remoteFS) MkdirAll(name string, perm fs.FileMode) error {
	return r.c.err(&wire.Msg{Op: wire.OpMkdirAll, Path: name, M: int64(perm)})
}

func (r remoteFS) Remove(name string) error {
	return r.c.err(&wire.Msg{Op: wire.OpRemove, Path: name})
}

func (r remoteFS) RemoveAll(name string) error {
	return r.c.err(&wire.Msg{Op: wire.OpRemoveAll, Path: name})
}

func (r remoteFS) Rename(oldname, newname string) error {
	return r.c.err(&wire.Msg{Op: wire.OpRename, Path: oldname, Path2: newname})
}

func (r remoteFS) Symlink(target, name string) error {
	return r.c.err(&wire.Msg{Op: wire.OpSymlink, Path: target, Path2: name})
}

func (r remoteFS) Readlink(name string) (string, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpReadlink, Path: name})
	return m.Path, m.Err.Go()
}

func (r remoteFS) Link(oldname, newname string) error {
	return r.c.err(&wire.Msg{Op: wire.OpLink, Path: oldname, Path2: newname})
}

func (r remoteFS) Chmod(name string, mode fs.FileMode) error {
	return r.c.err(&wire.Msg{Op: wire.OpChmod, Check: r.check, Path: name, M: int64(mode)})
}

func (r remoteFS) Chtimes(name string, atime, mtime time.Time) error {
	return r.c.err(&wire.Msg{Op: wire.OpChtimes, Check: r.check, Path: name, T: [2]int64{atime.UnixNano(), mtime.UnixNano()}})
}

func (r remoteFS) Truncate(name string, size int64) error {
	return r.c.err(&wire.Msg{Op: wire.OpTruncate, Check: r.check, Path: name, N: size})
}

type remoteDirent struct {
	fs  remoteFS
	dir string
	e   wire.Dirent
}

func (d remoteDirent) Name() string               { return d.e.Name }
func (d remoteDirent) IsDir() bool                { return d.e.Type.IsDir() }
func (d remoteDirent) Type() fs.FileMode          { return d.e.Type }
func (d remoteDirent) Info() (fs.FileInfo, error) { return d.fs.Lstat(path.Join(d.dir, d.e.Name)) }

// remoteFile is a file open in the owner; remoteFileAt one that also
// reads and writes at offsets and truncates, as store files do.
type remoteFile struct {
	c *client
	h int64
}

type remoteFileAt struct{ *remoteFile }

func (f *remoteFile) Read(p []byte) (int, error) {
	m := f.c.call(&wire.Msg{Op: wire.OpRead, N: f.h, M: int64(min(len(p), wire.MaxChunk))})
	return copy(p, m.Data), m.Err.Go()
}

func (f *remoteFile) Write(p []byte) (int, error) {
	return f.writeChunks(p, -1)
}

// writeChunks writes p in frames of at most MaxChunk, at off unless it is
// negative.
func (f *remoteFile) writeChunks(p []byte, off int64) (int, error) {
	done := 0
	for {
		chunk := p[done:min(len(p), done+wire.MaxChunk)]
		m := &wire.Msg{Op: wire.OpFWrite, N: f.h, Data: chunk}
		if off >= 0 {
			m.Op, m.M = wire.OpWriteAt, off+int64(done)
		}
		r := f.c.call(m)
		done += int(r.N)
		if r.Err != nil {
			return done, r.Err.Go()
		}
		if done >= len(p) {
			return done, nil
		}
	}
}

func (f *remoteFile) Close() error {
	return f.c.err(&wire.Msg{Op: wire.OpClose, N: f.h})
}

func (f *remoteFile) Stat() (fs.FileInfo, error) {
	m := f.c.call(&wire.Msg{Op: wire.OpFStat, N: f.h})
	if m.Err != nil {
		return nil, m.Err.Go()
	}
	return m.Info.FileInfo(), nil
}

func (f *remoteFileAt) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		n := min(len(p)-done, wire.MaxChunk)
		m := f.c.call(&wire.Msg{Op: wire.OpReadAt, N: f.h, M: off + int64(done), T: [2]int64{int64(n)}})
		done += copy(p[done:], m.Data)
		if m.Err != nil {
			return done, m.Err.Go()
		}
		if len(m.Data) == 0 {
			return done, io.EOF
		}
	}
	return done, nil
}

func (f *remoteFileAt) WriteAt(p []byte, off int64) (int, error) { return f.writeChunks(p, off) }

func (f *remoteFileAt) Truncate(size int64) error {
	return f.c.err(&wire.Msg{Op: wire.OpFTrunc, N: f.h, M: size})
}

// remoteServices are the owner's services over the channel; the owner
// decides again whether fetch may connect.
type remoteServices struct {
	c          *client
	mayNetwork bool
}

func (r remoteServices) network() bool { return r.mayNetwork }

func (r remoteServices) jsonCall(op wire.Op, p string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	m := r.c.call(&wire.Msg{Op: op, Path: p, Data: data})
	if m.Err != nil {
		return m.Err.Go()
	}
	return json.Unmarshal(m.Data, resp)
}

func (r remoteServices) run(_ context.Context, req runRequest) runResult {
	var res runResult
	if err := r.jsonCall(wire.OpRun, "", req, &res); err != nil {
		return runResult{Status: 126, Stderr: []byte(err.Error() + "\n")}
	}
	return res
}

func (r remoteServices) git(_ context.Context, args []string, dir string) runResult {
	var res runResult
	if err := r.jsonCall(wire.OpGit, dir, args, &res); err != nil {
		return runResult{Status: 126, Stderr: []byte(err.Error() + "\n")}
	}
	return res
}

func (r remoteServices) publish(_ context.Context, p string, ttl time.Duration) (string, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpPublish, Path: p, N: int64(ttl)})
	if m.M == 1 {
		return "", errNotPublishable{p}
	}
	return m.Path, m.Err.Go()
}

func (r remoteServices) fetch(_ context.Context, req fetchRequest) (*fetchResponse, error) {
	var resp fetchResponse
	if err := r.jsonCall(wire.OpFetch, "", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
