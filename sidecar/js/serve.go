package js

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/js/wire"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// server performs a worker's calls in the owner, against the exec's
// environment: the same builtin.FS, streams and services an in-process
// program uses.
type server struct {
	ctx     context.Context
	env     *builtin.Env
	svc     *localServices
	conn    *wire.Conn
	files   map[int64]builtin.File
	next    int64
	stopped atomic.Bool
	scratch []byte
	onCall  func(wire.Op) // Workers.onCall
	exit    *wire.Msg     // the worker's OpExit
}

// serve answers calls until the worker exits (its status) or the
// connection breaks (-1). Files the program left open are closed.
func (s *server) serve() int {
	defer func() {
		for _, f := range s.files {
			f.Close()
		}
	}()
	for {
		m, err := s.conn.Recv()
		if err != nil || s.stopped.Load() {
			return -1
		}
		if s.onCall != nil {
			s.onCall(m.Op)
		}
		switch m.Op {
		case wire.OpExit:
			s.exit = m
			return int(m.N)
		case wire.OpWrite:
			w := s.env.Stdout
			if m.N == 2 {
				w = s.env.Stderr
			}
			w.Write(m.Data)
			continue
		}
		reply := s.handle(m)
		reply.Op = wire.OpReply
		if err := s.conn.Send(reply); err != nil {
			return -1
		}
	}
}

// stop makes serve touch the environment no more, waiting a little for a
// call in progress to return: the caller is about to give the
// environment back.
func (s *server) stop(result <-chan int) {
	s.stopped.Store(true)
	select {
	case <-result:
	case <-time.After(20 * time.Millisecond):
	}
}

func fail(err error) *wire.Msg { return &wire.Msg{Err: wire.ErrorOf(err)} }

func infoReply(fi fs.FileInfo, err error) *wire.Msg {
	if err != nil {
		return fail(err)
	}
	return &wire.Msg{Info: wire.InfoOf(fi)}
}

func (s *server) chunk(n int64) []byte {
	n = min(max(n, 0), wire.MaxChunk)
	if s.scratch == nil {
		s.scratch = make([]byte, wire.MaxChunk)
	}
	return s.scratch[:n]
}

func (s *server) handle(m *wire.Msg) *wire.Msg {
	fsys := s.env.FS
	if m.Check && m.Op != wire.OpOpen { // an open makes the check as it opens
		switch m.Op {
		case wire.OpStat, wire.OpReadDir, wire.OpChmod, wire.OpChtimes, wire.OpTruncate:
		default:
			return fail(errBadCall)
		}
		if err := slashErr(fsys, m.Path, os.O_RDONLY); err != nil {
			return fail(err)
		}
	}
	switch m.Op {
	case wire.OpStdin:
		if s.env.Stdin == nil {
			return fail(io.EOF)
		}
		buf := s.chunk(m.N)
		n, err := s.env.Stdin.Read(buf)
		return &wire.Msg{Data: buf[:n], Err: wire.ErrorOf(err)}
	case wire.OpOpen:
		open := fsys.OpenFile
		if m.Check {
			open = func(name string, flag int, perm fs.FileMode) (builtin.File, error) {
				return openChecked(fsys, name, flag, perm)
			}
		}
		f, err := open(m.Path, int(m.N), fs.FileMode(m.M))
		if err != nil {
			return fail(err)
		}
		h := s.keep(f)
		var caps int64
		if _, ok := f.(io.ReaderAt); ok {
			caps |= wire.CapReadAt
		}
		if _, ok := f.(io.WriterAt); ok {
			caps |= wire.CapWriteAt
		}
		if _, ok := f.(interface{ Truncate(int64) error }); ok {
			caps |= wire.CapTruncate
		}
		return &wire.Msg{N: h, M: caps}
	case wire.OpRead, wire.OpReadAt, wire.OpFWrite, wire.OpWriteAt, wire.OpFTrunc, wire.OpFStat, wire.OpClose:
		return s.fileOp(m)
	case wire.OpStat:
		return infoReply(fsys.Stat(m.Path))
	case wire.OpLstat:
		return infoReply(fsys.Lstat(m.Path))
	case wire.OpReadDir:
		ents, err := fsys.ReadDir(m.Path)
		if err != nil {
			return fail(err)
		}
		out := make([]wire.Dirent, len(ents))
		for i, e := range ents {
			out[i] = wire.Dirent{Name: e.Name(), Type: e.Type()}
		}
		return &wire.Msg{Ents: out}
	case wire.OpMkdir:
		return fail(fsys.Mkdir(m.Path, fs.FileMode(m.M)))
	case wire.OpMkdirAll:
		return fail(fsys.MkdirAll(m.Path, fs.FileMode(m.M)))
	case wire.OpRemove:
		return fail(fsys.Remove(m.Path))
	case wire.OpRemoveAll:
		return fail(fsys.RemoveAll(m.Path))
	case wire.OpRename:
		return fail(fsys.Rename(m.Path, m.Path2))
	case wire.OpSymlink:
		return fail(fsys.Symlink(m.Path, m.Path2))
	case wire.OpLink:
		return fail(fsys.Link(m.Path, m.Path2))
	case wire.OpReadlink:
		target, err := fsys.Readlink(m.Path)
		if err != nil {
			return fail(err)
		}
		return &wire.Msg{Path: target}
	case wire.OpChmod:
		return fail(fsys.Chmod(m.Path, fs.FileMode(m.M)))
	case wire.OpChtimes:
		return fail(fsys.Chtimes(m.Path, time.Unix(0, m.T[0]), time.Unix(0, m.T[1])))
	case wire.OpTruncate:
		return fail(fsys.Truncate(m.Path, m.N))
	case wire.OpReadFile:
		return s.readFile(m.Path)
	case wire.OpWriteFile:
		step, err := writeWhole(fsys, m.Path, int(m.N), fs.FileMode(m.M), m.Data)
		return &wire.Msg{M: int64(step), Err: wire.ErrorOf(err)}
	case wire.OpRun:
		var r runRequest
		if err := json.Unmarshal(m.Data, &r); err != nil {
			return fail(err)
		}
		return jsonReply(s.svc.run(s.ctx, r))
	case wire.OpGit:
		var args []string
		if err := json.Unmarshal(m.Data, &args); err != nil {
			return fail(err)
		}
		return jsonReply(s.svc.git(s.ctx, args, m.Path))
	case wire.OpPublish:
		url, err := s.svc.publish(s.ctx, m.Path, time.Duration(m.N))
		if _, ok := err.(errNotPublishable); ok {
			return &wire.Msg{M: 1, Err: wire.ErrorOf(err)}
		}
		return &wire.Msg{Path: url, Err: wire.ErrorOf(err)}
	case wire.OpMkdirNode:
		first, err := mkdirNode(fsys, m.Path, m.N&wire.NodeSlash != 0, fs.FileMode(m.M), m.N&wire.NodeRecursive != 0)
		return &wire.Msg{Path: first, Err: wire.ErrorOf(err)}
	case wire.OpUnlinkNode:
		return fail(unlinkNode(fsys, m.Path, m.N&wire.NodeSlash != 0))
	case wire.OpRenameNode:
		flags := renameFlags{fromSlash: m.N&wire.NodeSlash != 0, toSlash: m.N&wire.NodeSlash2 != 0, notAName: m.N&wire.NodeNotAName != 0}
		return fail(renameNode(fsys, m.Path, m.Path2, flags))
	case wire.OpCheckpoint:
		return s.serveCheckpoint(m)
	case wire.OpFetch:
		var r fetchRequest
		if err := json.Unmarshal(m.Data, &r); err != nil {
			return fail(err)
		}
		resp, err := s.svc.fetch(s.ctx, r)
		if err != nil {
			return fail(err)
		}
		return jsonReply(resp)
	}
	return fail(errBadCall)
}

var errBadCall = errors.New("js worker: unknown call")

func jsonReply(v any) *wire.Msg {
	data, err := json.Marshal(v)
	if err != nil {
		return fail(err)
	}
	return &wire.Msg{Data: data}
}

// keep holds f open for the worker, under the handle it returns.
func (s *server) keep(f builtin.File) int64 {
	s.next++
	s.files[s.next] = f
	return s.next
}

// readFile answers a small regular file whole, with its description; a
// bigger one, or one that is not regular, stays open for the worker to
// read on from what it was sent.
func (s *server) readFile(name string) *wire.Msg {
	f, err := openChecked(s.env.FS, name, os.O_RDONLY, 0)
	if err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return &wire.Msg{N: s.keep(f)}
	}
	info := wire.InfoOf(fi)
	if !fi.Mode().IsRegular() || fi.Size() > wire.MaxChunk {
		return &wire.Msg{N: s.keep(f), Info: info}
	}
	// A byte more than the size, so the end is seen in this read (but
	// for a file of exactly MaxChunk bytes, read on from the handle).
	buf := s.chunk(fi.Size() + 1)
	n, err := io.ReadFull(f, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		f.Close()
		return &wire.Msg{Data: buf[:n], Info: info}
	case err != nil:
		f.Close()
		return &wire.Msg{M: int64(stepIO), Err: wire.ErrorOf(err)}
	}
	return &wire.Msg{Data: buf, N: s.keep(f), Info: info} // it grew since its stat
}

func (s *server) fileOp(m *wire.Msg) *wire.Msg {
	f := s.files[m.N]
	if f == nil {
		return fail(syscall.EBADF)
	}
	switch m.Op {
	case wire.OpRead:
		buf := s.chunk(m.M)
		n, err := f.Read(buf)
		return &wire.Msg{Data: buf[:n], Err: wire.ErrorOf(err)}
	case wire.OpReadAt:
		ra, ok := f.(io.ReaderAt)
		if !ok {
			return fail(syscall.EBADF)
		}
		buf := s.chunk(m.T[0])
		n, err := ra.ReadAt(buf, m.M)
		return &wire.Msg{Data: buf[:n], Err: wire.ErrorOf(err)}
	case wire.OpFWrite:
		n, err := f.Write(m.Data)
		return &wire.Msg{N: int64(n), Err: wire.ErrorOf(err)}
	case wire.OpWriteAt:
		wa, ok := f.(io.WriterAt)
		if !ok {
			return fail(syscall.EBADF)
		}
		n, err := wa.WriteAt(m.Data, m.M)
		return &wire.Msg{N: int64(n), Err: wire.ErrorOf(err)}
	case wire.OpFTrunc:
		t, ok := f.(interface{ Truncate(int64) error })
		if !ok {
			return fail(syscall.EBADF)
		}
		return fail(t.Truncate(m.M))
	case wire.OpFStat:
		return infoReply(f.Stat())
	}
	delete(s.files, m.N)
	return fail(f.Close())
}
