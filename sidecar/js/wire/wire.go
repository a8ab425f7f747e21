// Package wire is the protocol between the js backend's owner and a worker
// process running one program: framed messages over a pair of pipes. The
// worker asks, the owner answers, one call at a time (the runtime is
// single-threaded); output writes need no answer. Each frame is a 4-byte
// little-endian length and a body of fixed fields (numbers as varints,
// strings and bytes length-prefixed), so a frame costs a few hundred
// nanoseconds to code and a reader can refuse an oversized frame before it
// allocates it: the owner reads frames of at most MaxOwnerFrame bytes, so a
// worker cannot make it hold more.
package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Op says what a message asks or answers.
type Op uint8

// The operations. Reply answers the call before it; Write and Exit get no
// answer.
const (
	OpInvalid Op = iota
	OpReply
	OpReady // worker → owner: started, waiting for its job
	OpJob   // owner → worker: Data is the job (JSON)
	OpExit  // worker → owner: N is the exit status
	OpWrite // N is the stream (1 stdout, 2 stderr), Data the bytes
	OpStdin // read up to N bytes of standard input

	OpOpen    // Path, N flag, M perm → N handle, M capabilities
	OpRead    // N handle, M length
	OpReadAt  // N handle, M offset, T[0] length
	OpFWrite  // N handle, Data
	OpWriteAt // N handle, M offset, Data
	OpFTrunc  // N handle, M size
	OpFStat   // N handle → Info
	OpClose   // N handle

	OpStat      // Path → Info
	OpLstat     // Path → Info
	OpReadDir   // Path → Ents
	OpMkdir     // Path, M perm
	OpMkdirAll  // Path, M perm
	OpRemove    // Path
	OpRemoveAll // Path
	OpRename    // Path → Path2
	OpSymlink   // Path (target), Path2 (name)
	OpReadlink  // Path → Path
	OpLink      // Path → Path2
	OpChmod     // Path, M mode
	OpChtimes   // Path, T atime and mtime (ns)
	OpTruncate  // Path, N size

	// Whole-file calls, one round trip for what is three to five otherwise.
	OpReadFile  // Path → Info (nil when unknown), Data the first MaxChunk bytes, N a handle left open when there may be more; an error's M is the step (0 open, 1 read)
	OpWriteFile // Path, N flag, M perm, Data (at most MaxChunk): open, write, close; an error's M is the step (0 open, 1 write)

	OpRun     // Data: a command request (JSON) → Data: its result (JSON)
	OpGit     // the same for the git built-in
	OpPublish // the same for sqlfs:publish
	OpFetch   // the same for fetch

	OpCheckpoint // Path the operation, Data its JSON arguments → Data the result, Path2 an error's code

	// Node's calls made whole by the owner, their checks included: one
	// round trip for what is two to nine otherwise.
	OpMkdirNode  // Path, M perm, N flags (NodeRecursive, NodeSlash) → Path the first directory made
	OpUnlinkNode // Path, N flags (NodeSlash)
	OpRenameNode // Path → Path2, N flags (NodeSlash of Path, NodeSlash2 of Path2, NodeNotAName)
	opCount
)

// Flags of OpMkdirNode, OpUnlinkNode and OpRenameNode: a recursive
// mkdir, a path the program wrote with a trailing slash (NodeSlash2 the
// second path of a rename), a rename of a name ending in "." or "..".
const (
	NodeRecursive = 1 << iota
	NodeSlash
	NodeSlash2
	NodeNotAName
)

// File capabilities, the bits of an OpOpen answer's M: what the owner's
// file offers beyond reading and writing at its offset.
const (
	CapReadAt = 1 << iota
	CapWriteAt
	CapTruncate
)

// Frame limits. A worker's calls carry at most MaxChunk bytes of data, so
// MaxOwnerFrame bounds what the owner reads from a worker; a worker takes
// the owner's bigger answers (long directory listings) up to MaxWorkerFrame.
const (
	MaxChunk       = 1 << 20
	MaxOwnerFrame  = MaxChunk + 64<<10
	MaxWorkerFrame = 256 << 20
)

// Msg is one frame. Which fields mean what depends on Op (see the
// constants). Check, on a call that follows Path's final symlinks (OpStat,
// OpReadDir, OpChmod, OpChtimes, OpTruncate, OpOpen), asks the owner to
// fail it first as the kernel would when one of them has a target ending
// in "/" (for OpOpen as opening with flag N): the check is made where the
// file is, not by round trips of its own.
type Msg struct {
	Op    Op
	Check bool
	N, M  int64
	T     [2]int64
	Path  string
	Path2 string
	Data  []byte
	Info  *FileInfo
	Ents  []Dirent
	Err   *Error
}

// FileInfo is a file's description; Stat holds the inode's numbers when
// the owner's FileInfo had them.
type FileInfo struct {
	Name    string
	Size    int64
	Mode    fs.FileMode
	ModTime int64 // ns since the epoch
	HasStat bool
	Stat    syscall.Stat_t
}

// Dirent is one directory entry: its name and type bits.
type Dirent struct {
	Name string
	Type fs.FileMode
}

// Error is a failed call: an errno (with the op and path of a
// *fs.PathError when it was one), end of file, or a message.
type Error struct {
	Errno syscall.Errno
	EOF   bool
	Op    string
	Path  string
	Text  string
}

// ErrorOf describes err for the wire; nil stays nil.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	e := &Error{Text: err.Error()}
	if errors.Is(err, io.EOF) {
		e.EOF = true
		return e
	}
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		e.Errno = errno
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok && e.Errno != 0 {
		e.Op, e.Path = pe.Op, pe.Path
	}
	return e
}

// Go makes an error equivalent to the one described: errors.Is and
// errors.As see the same errno and io.EOF as on the owner's side.
func (e *Error) Go() error {
	switch {
	case e == nil:
		return nil
	case e.EOF:
		return io.EOF
	case e.Errno != 0 && e.Op != "":
		return &fs.PathError{Op: e.Op, Path: e.Path, Err: e.Errno}
	case e.Errno != 0:
		return e.Errno
	}
	return errors.New(e.Text)
}

// InfoOf describes fi for the wire.
func InfoOf(fi fs.FileInfo) *FileInfo {
	out := &FileInfo{Name: fi.Name(), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.HasStat, out.Stat = true, *st
	}
	return out
}

// FileInfo implements fs.FileInfo.
func (fi *FileInfo) FileInfo() fs.FileInfo { return info{fi} }

type info struct{ fi *FileInfo }

func (i info) Name() string       { return i.fi.Name }
func (i info) Size() int64        { return i.fi.Size }
func (i info) Mode() fs.FileMode  { return i.fi.Mode }
func (i info) ModTime() time.Time { return time.Unix(0, i.fi.ModTime) }
func (i info) IsDir() bool        { return i.fi.Mode.IsDir() }
func (i info) Sys() any {
	if !i.fi.HasStat {
		return nil
	}
	return &i.fi.Stat
}

// ErrFrameTooBig is a frame over the reader's limit: the peer is broken
// or hostile, and the connection is no longer usable.
var ErrFrameTooBig = errors.New("wire: frame over the size limit")

// Conn sends and receives frames. Send is safe for concurrent use; Recv
// is for one goroutine.
type Conn struct {
	r   *bufio.Reader
	max int

	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
	in  []byte

	// With a shared page (Pipes), each side counts there the frames it
	// has written, and Recv spins a little on the peer's count before it
	// blocks in read(2): see wait.
	sent *atomic.Uint64 // in shared: frames this side wrote
	peer *atomic.Uint64 // in shared: frames the peer wrote
	got  uint64         // frames Recv read
	spin spinner

	// The page also holds a slot for a frame each way: a frame that
	// fits is written there instead of the pipe when the peer has read
	// every frame before it and is not asleep in read(2), so a call and
	// its answer between two spinning sides make no system call (four
	// otherwise, each through the worker's seccomp filter). See Send
	// and next.
	myRead          *atomic.Uint64 // in shared: frames this side has read (got)
	peerRead        *atomic.Uint64 // in shared: frames the peer has read
	asleep          *atomic.Uint64 // in shared: 1 while this side blocks in read(2)
	peerOff         *atomic.Uint64 // in shared: 1 while the peer does
	outSeq          *atomic.Uint64 // in shared: the number of the frame in out
	inSeq           *atomic.Uint64 // in shared: the number of the frame in in
	outSlot, inSlot []byte
	slotted         int // frames received through the slot, for tests         // the slots, this side's to write and to read
}

// The shared page's layout: each side's counters on cache lines of their
// own, then a slot each way (the owner's to write first).
const (
	ownerSentOff   = 0
	peerSentOff    = 64
	ownerReadOff   = 128
	peerReadOff    = 192
	ownerAsleepOff = 256
	peerAsleepOff  = 320
	ownerSeqOff    = 384 // the frame in the owner's slot
	peerSeqOff     = 448
	slotOff        = 4096
	slotSize       = 64 << 10 // a frame's length (4 bytes) and body
	sharedSize     = slotOff + 2*slotSize
	peerSharedFile = 5 // the peer's fd of the page, after its pipes
)

// Pipes makes the channel between a process and the peer it starts: own
// is this side's ends (read, write, the shared page), theirs the peer's,
// to pass as its first three extra files (fds 3, 4 and 5, what PeerConn
// takes). The pipes carry every frame and stay blocking, so a call
// blocks its thread in read(2) with no trip through the Go runtime's
// poller. The shared page (a sealed memfd: the peer cannot shrink it
// under the owner's mapping) holds each side's count of frames written,
// on which a receiver spins briefly instead of sleeping (see wait). The
// caller closes theirs once the peer has them.
func Pipes() (own, theirs [3]*os.File, err error) {
	var toPeer, fromPeer [2]int
	if err := unix.Pipe2(toPeer[:], unix.O_CLOEXEC); err != nil {
		return own, theirs, fmt.Errorf("pipe: %w", err)
	}
	if err := unix.Pipe2(fromPeer[:], unix.O_CLOEXEC); err != nil {
		closeFds(toPeer[:]...)
		return own, theirs, fmt.Errorf("pipe: %w", err)
	}
	mem, err := sharedFile()
	if err != nil {
		closeFds(toPeer[0], toPeer[1], fromPeer[0], fromPeer[1])
		return own, theirs, err
	}
	memPeer, err := unix.FcntlInt(uintptr(mem), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		closeFds(toPeer[0], toPeer[1], fromPeer[0], fromPeer[1], mem)
		return own, theirs, fmt.Errorf("dup: %w", err)
	}
	own = [3]*os.File{os.NewFile(uintptr(fromPeer[0]), "wire-r"), os.NewFile(uintptr(toPeer[1]), "wire-w"), os.NewFile(uintptr(mem), "wire-shared")}
	theirs = [3]*os.File{os.NewFile(uintptr(toPeer[0]), "wire-peer-r"), os.NewFile(uintptr(fromPeer[1]), "wire-peer-w"), os.NewFile(uintptr(memPeer), "wire-peer-shared")}
	return own, theirs, nil
}

func closeFds(fds ...int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

const sharedSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// sharedFile is a memfd of sharedSize bytes that can neither shrink nor
// grow: a mapping of it cannot fault (SIGBUS) whatever the peer does.
func sharedFile() (int, error) {
	fd, err := unix.MemfdCreate("sqlfs-wire", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("memfd: %w", err)
	}
	if err := unix.Ftruncate(fd, sharedSize); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("memfd: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, sharedSeals); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("memfd seals: %w", err)
	}
	return fd, nil
}

// PeerConn is the peer's side of Pipes: fds 3, 4 and 5.
func PeerConn(max int) *Conn {
	c := peerConn(os.NewFile(3, "wire-r"), os.NewFile(4, "wire-w"), peerSharedFile, max)
	// Mapped, the page needs no descriptor; only close one that is the page.
	if c.sent != nil {
		unix.Close(peerSharedFile)
	}
	return c
}

// peerConn is the peer's Conn over the pipes r and w and the page shared.
func peerConn(r, w *os.File, shared, max int) *Conn {
	c := NewConn(struct {
		io.Reader
		io.Writer
	}{r, w}, max)
	c.share(shared, false)
	return c
}

// PipeConn is a Conn over own, the ends Pipes returned for this side.
func PipeConn(own [3]*os.File, max int) *Conn {
	c := NewConn(struct {
		io.Reader
		io.Writer
	}{own[0], own[1]}, max)
	c.share(int(own[2].Fd()), true)
	return c
}

// share maps the page of fd; owner says which count is this side's.
// Without the page (a peer started without one: fd is not a memfd sealed
// as Pipes seals it), Recv just blocks.
func (c *Conn) share(fd int, owner bool) {
	if seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0); err != nil || seals&sharedSeals != sharedSeals {
		return
	}
	mem, err := unix.Mmap(fd, 0, sharedSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return
	}
	// The counters point into the mapping: it must outlive every use,
	// which ends with the last reference to c (Send and Recv keep c
	// alive to their end).
	runtime.AddCleanup(c, func(m []byte) { _ = unix.Munmap(m) }, mem)
	word := func(off int) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&mem[off])) }
	ownerSlot, peerSlot := mem[slotOff:slotOff+slotSize], mem[slotOff+slotSize:slotOff+2*slotSize]
	if owner {
		c.sent, c.peer = word(ownerSentOff), word(peerSentOff)
		c.myRead, c.peerRead = word(ownerReadOff), word(peerReadOff)
		c.asleep, c.peerOff = word(ownerAsleepOff), word(peerAsleepOff)
		c.outSeq, c.inSeq = word(ownerSeqOff), word(peerSeqOff)
		c.outSlot, c.inSlot = ownerSlot, peerSlot
	} else {
		c.sent, c.peer = word(peerSentOff), word(ownerSentOff)
		c.myRead, c.peerRead = word(peerReadOff), word(ownerReadOff)
		c.asleep, c.peerOff = word(peerAsleepOff), word(ownerAsleepOff)
		c.outSeq, c.inSeq = word(peerSeqOff), word(ownerSeqOff)
		c.outSlot, c.inSlot = peerSlot, ownerSlot
	}
}

// NewConn frames messages over rw, refusing to read frames over max bytes.
func NewConn(rw io.ReadWriter, max int) *Conn {
	return &Conn{r: bufio.NewReaderSize(rw, 64<<10), w: bufio.NewWriterSize(rw, 64<<10), max: max}
}

// Send writes m and flushes it.
func (c *Conn) Send(m *Msg) error {
	defer runtime.KeepAlive(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = encode(c.buf[:0], m)
	if c.outSlot != nil && len(c.buf) <= len(c.outSlot) && c.peerOff.Load() == 0 && c.peerRead.Load() == c.sent.Load() {
		// The peer has read every frame before this one (so it is done
		// with the slot) and is not asleep: the frame goes in the slot,
		// published by its number and then the count.
		n := c.sent.Load() + 1
		copy(c.outSlot, c.buf)
		c.outSeq.Store(n)
		c.sent.Swap(n)
		// The peer may have gone to sleep meanwhile: it set asleep before
		// it looked at the count a last time, this side stored the count
		// before it looks at asleep, so one of the two sees the other. A
		// marker (an empty frame) wakes it; one it did not need is
		// skipped later. Both stores are swaps: a read-modify-write is a
		// full fence, and a store may not be (the race detector's are
		// release stores, which x86 lets the next load pass: both sides
		// then slept for good).
		if c.peerOff.Load() != 0 {
			return c.write(marker[:])
		}
		return nil
	}
	if err := c.write(c.buf); err != nil {
		return err
	}
	if c.sent != nil {
		c.sent.Add(1)
	}
	return nil
}

// marker is a frame of no length, which no message is: on the pipe, it
// says to look at the slot.
var marker [4]byte

func (c *Conn) write(b []byte) error {
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	return c.w.Flush()
}

// Recv reads the next message.
func (c *Conn) Recv() (*Msg, error) {
	defer runtime.KeepAlive(c)
	body, err := c.next()
	if err != nil {
		return nil, err
	}
	d := decoder{b: body}
	m := d.msg()
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// next reads the next frame's body: from the slot when the peer put it
// there, else from the pipe.
func (c *Conn) next() ([]byte, error) {
	if c.peer == nil {
		return c.readFrame(false)
	}
	var missed time.Time
	if c.peer.Load() <= c.got {
		missed = c.wait()
	}
	for {
		if c.peer.Load() > c.got {
			// The next frame is out: in the slot when it has its number,
			// else in the pipe (behind markers nobody needed).
			var body []byte
			var err error
			if c.inSlot != nil && c.inSeq.Load() == c.got+1 {
				c.slotted++
				body, err = c.fromSlot()
			} else {
				body, err = c.readFrame(true)
			}
			if err != nil {
				return nil, err
			}
			if !missed.IsZero() {
				c.spin.blocked(time.Since(missed))
			}
			return body, nil
		}
		// Nothing yet: sleep in read(2) until a frame or a marker comes,
		// having said so first (see Send).
		if c.asleep != nil {
			c.asleep.Swap(1) // a fence before the load: see Send
			if c.peer.Load() > c.got {
				c.asleep.Store(0)
				continue
			}
		}
		body, err := c.readFrame(false)
		if c.asleep != nil {
			c.asleep.Store(0)
		}
		if err != nil {
			return nil, err
		}
		if body == nil {
			continue // a marker: the frame is in the slot
		}
		if !missed.IsZero() {
			c.spin.blocked(time.Since(missed))
		}
		return body, nil
	}
}

// fromSlot copies the frame in the peer's slot out, then says it is read:
// the peer may write the slot again from then on. The peer may be
// hostile: its length is checked, and the body is decoded from the copy.
func (c *Conn) fromSlot() ([]byte, error) {
	n := int(binary.LittleEndian.Uint32(c.inSlot))
	if n > c.max || n > len(c.inSlot)-4 {
		return nil, fmt.Errorf("%w: %d bytes in the slot, at most %d", ErrFrameTooBig, n, min(c.max, len(c.inSlot)-4))
	}
	body := c.body(n)
	copy(body, c.inSlot[4:4+n])
	c.count(1)
	return body, nil
}

// readFrame reads a frame from the pipe; a marker is a nil body, or
// skipped when skip is set.
func (c *Conn) readFrame(skip bool) ([]byte, error) {
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return nil, err
		}
		n := int(binary.LittleEndian.Uint32(hdr[:]))
		if n == 0 {
			if skip {
				continue
			}
			return nil, nil
		}
		if n > c.max {
			return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrFrameTooBig, n, c.max)
		}
		body := c.body(n)
		if _, err := io.ReadFull(c.r, body); err != nil {
			return nil, err
		}
		c.count(1)
		return body, nil
	}
}

// count counts k frames read, where the peer sees it.
func (c *Conn) count(k uint64) {
	c.got += k
	if c.myRead != nil {
		c.myRead.Store(c.got)
	}
}

// body is the buffer of a frame of n bytes, reused across frames.
func (c *Conn) body(n int) []byte {
	if cap(c.in) < n || cap(c.in) > 1<<20 && n < cap(c.in)/4 {
		c.in = make([]byte, n)
	}
	return c.in[:n]
}

// Field presence bits of a frame.
const (
	hasInfo = 1 << iota
	hasEnts
	hasErr
	hasCheck
)

func encode(b []byte, m *Msg) []byte {
	b = append(b, 0, 0, 0, 0) // length, filled in below
	b = append(b, byte(m.Op))
	var flags byte
	if m.Info != nil {
		flags |= hasInfo
	}
	if m.Ents != nil {
		flags |= hasEnts
	}
	if m.Err != nil {
		flags |= hasErr
	}
	if m.Check {
		flags |= hasCheck
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, m.N)
	b = binary.AppendVarint(b, m.M)
	b = binary.AppendVarint(b, m.T[0])
	b = binary.AppendVarint(b, m.T[1])
	b = appendString(b, m.Path)
	b = appendString(b, m.Path2)
	b = appendBytes(b, m.Data)
	if fi := m.Info; fi != nil {
		b = appendString(b, fi.Name)
		b = binary.AppendVarint(b, fi.Size)
		b = binary.AppendUvarint(b, uint64(fi.Mode))
		b = binary.AppendVarint(b, fi.ModTime)
		if fi.HasStat {
			b = append(b, 1)
			st := &fi.Stat
			for _, v := range []uint64{st.Dev, st.Ino, st.Nlink, uint64(st.Mode), uint64(st.Uid), uint64(st.Gid), st.Rdev} {
				b = binary.AppendUvarint(b, v)
			}
			for _, v := range []int64{st.Size, st.Blksize, st.Blocks, st.Atim.Sec, st.Atim.Nsec, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec} {
				b = binary.AppendVarint(b, v)
			}
		} else {
			b = append(b, 0)
		}
	}
	if m.Ents != nil {
		b = binary.AppendUvarint(b, uint64(len(m.Ents)))
		for _, e := range m.Ents {
			b = appendString(b, e.Name)
			b = binary.AppendUvarint(b, uint64(e.Type))
		}
	}
	if e := m.Err; e != nil {
		b = binary.AppendUvarint(b, uint64(e.Errno))
		eof := byte(0)
		if e.EOF {
			eof = 1
		}
		b = append(b, eof)
		b = appendString(b, e.Op)
		b = appendString(b, e.Path)
		b = appendString(b, e.Text)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

var errShort = errors.New("wire: malformed frame")

// decoder reads a frame's fields; the first error sticks and later reads
// return zeros.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errShort
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	if n == 0 {
		return nil
	}
	// A copy: the frame buffer is reused by the next Recv.
	p := make([]byte, n)
	copy(p, d.b)
	d.b = d.b[n:]
	return p
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) msg() *Msg {
	m := &Msg{Op: Op(d.byte())}
	if m.Op == OpInvalid || m.Op >= opCount {
		d.err = fmt.Errorf("wire: unknown op %d", m.Op)
		return nil
	}
	flags := d.byte()
	m.Check = flags&hasCheck != 0
	m.N, m.M = d.varint(), d.varint()
	m.T[0], m.T[1] = d.varint(), d.varint()
	m.Path, m.Path2 = d.string(), d.string()
	m.Data = d.bytes()
	if flags&hasInfo != 0 {
		fi := &FileInfo{Name: d.string(), Size: d.varint(), Mode: fs.FileMode(d.uvarint()), ModTime: d.varint()}
		if d.byte() == 1 {
			fi.HasStat = true
			st := &fi.Stat
			st.Dev, st.Ino, st.Nlink = d.uvarint(), d.uvarint(), d.uvarint()
			st.Mode, st.Uid, st.Gid = uint32(d.uvarint()), uint32(d.uvarint()), uint32(d.uvarint())
			st.Rdev = d.uvarint()
			st.Size, st.Blksize, st.Blocks = d.varint(), d.varint(), d.varint()
			st.Atim.Sec, st.Atim.Nsec = d.varint(), d.varint()
			st.Mtim.Sec, st.Mtim.Nsec = d.varint(), d.varint()
			st.Ctim.Sec, st.Ctim.Nsec = d.varint(), d.varint()
		}
		m.Info = fi
	}
	if flags&hasEnts != 0 {
		n := d.uvarint()
		if n > uint64(len(d.b)) { // each entry takes at least a byte
			d.err = errShort
			return nil
		}
		m.Ents = make([]Dirent, 0, n)
		for range n {
			m.Ents = append(m.Ents, Dirent{Name: d.string(), Type: fs.FileMode(d.uvarint())})
		}
	}
	if flags&hasErr != 0 {
		errno := d.uvarint()
		if errno > math.MaxInt32 {
			d.err = errShort
		}
		m.Err = &Error{Errno: syscall.Errno(errno), EOF: d.byte() == 1, Op: d.string(), Path: d.string(), Text: d.string()}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errShort
	}
	return m
}
