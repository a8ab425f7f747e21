//go:build linux && !cgofuse

package fuse

// FUSE over io_uring (Linux 6.14+, CONFIG_FUSE_IO_URING, the fuse module's
// parameter /sys/module/fuse/parameters/enable_uring set to Y). The kernel
// then hands each request to a ring entry of the queue of the CPU the
// caller runs on, and takes the reply with the next fetch in one
// io_uring_enter, instead of a read and a write of /dev/fuse by whichever
// server thread is free. The kernel protocol (include/uapi/linux/fuse.h,
// fs/fuse/dev_uring.c) stays in this file; requests are parsed and
// dispatched by go-fuse's own server (Server.HandleRequestIov, a sqlfs
// patch), so every opcode is served as on /dev/fuse. FORGET, INTERRUPT and
// notifications stay on /dev/fuse: the kernel sends the first two there
// and takes notifications only there.
//
// The kernel's rules, which the code below follows:
//   - INIT's reply asks for FUSE_OVER_IO_URING; from then on the kernel
//     holds every new request until the ring is ready or a registration
//     fails. So the rings are created before the reply (a refused
//     io_uring_setup leaves the flag out), and a thread that cannot
//     register makes a registration fail on purpose: the kernel then
//     falls back to /dev/fuse (fc->io_uring = 0) rather than hold the
//     mount's requests for ever.
//   - Registration needs the connection initialized (after the reply),
//     one queue per possible CPU (qid = CPU number), and the ring is used
//     only once every queue has an entry.
//   - Each entry is a header buffer (struct fuse_uring_req_header: the
//     in/out header, the opcode's input struct, fuse_uring_ent_in_out) and
//     a payload buffer of at least max(8192, max_write, max_pages*4096).
//   - Commands are IORING_OP_URING_CMD on the /dev/fuse file, with
//     struct fuse_uring_cmd_req in the SQE's 80-byte command area, so the
//     ring is set up with IORING_SETUP_SQE128.
//   - A request arrives as: fuse_in_header in in_out, the opcode's first
//     argument in op_in, the rest (names, data, extensions) in the
//     payload, its size in ring_ent_in_out.payload_sz. The reply is the
//     fuse_out_header in in_out and every output argument in the payload,
//     their size in payload_sz; it is committed by its request's unique
//     (commit_id), and the same command fetches the entry's next request.
//   - Unmount or abort completes every waiting command with -ENOTCONN,
//     which ends the threads.
//
// Each entry has its own OS thread and its own ring, pinned to its
// queue's CPU (LockOSThread + sched_setaffinity), so the reply and the
// next request cost one io_uring_enter on the caller's CPU and a request
// that blocks (a commit waiting for the store) holds up only its entry;
// the kernel hands the queue's next request to another free entry.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	gofuse "github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// io_uring ABI (include/uapi/linux/io_uring.h).
const (
	ioringSetupSQE128       = 1 << 10
	ioringSetupSingleIssuer = 1 << 12
	ioringSetupDeferTaskrun = 1 << 13
	ioringFeatSingleMmap    = 1 << 0
	ioringEnterGetevents    = 1 << 0
	ioringOpUringCmd        = 46
	iosqeFixedFile          = 1 << 0
	ioringRegisterFiles     = 2
	ioringOffSQRing         = 0
	ioringOffCQRing         = 0x8000000
	ioringOffSQEs           = 0x10000000
	sqe128Size              = 128
	cqeSize                 = 16
)

// FUSE over io_uring ABI (include/uapi/linux/fuse.h, protocol 7.42).
const (
	fuseIOUringCmdRegister       = 1
	fuseIOUringCmdCommitAndFetch = 2
	// struct fuse_uring_req_header: in_out[128], op_in[128],
	// struct fuse_uring_ent_in_out (flags, commit_id, payload_sz, padding,
	// reserved).
	uringInOutOff      = 0
	uringOpInOff       = 128
	uringOpInSize      = 128
	uringEntInOutOff   = 256
	uringCommitIDOff   = uringEntInOutOff + 8
	uringPayloadSzOff  = uringEntInOutOff + 16
	uringReqHeaderSize = 288
	// struct fuse_uring_cmd_req in the SQE's command area (offset 48):
	// flags, commit_id, qid.
	sqeCmdOff      = 48
	sqeCommitIDOff = sqeCmdOff + 8
	sqeQIDOff      = sqeCmdOff + 16
	// fuse_in_header and fuse_out_header sizes.
	fuseInHeaderSize  = 40
	fuseOutHeaderSize = 16
)

// uringThreadsPerQueue is how many entries (each its own thread and ring)
// every CPU's queue has: requests from one CPU served at once.
const uringThreadsPerQueue = 4

// ioUringParams is struct io_uring_params.
type ioUringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

// ring is one io_uring with one command in flight at a time, used by the
// thread that created it only (IORING_SETUP_SINGLE_ISSUER).
type ring struct {
	fd             int
	rings, sqeMem  []byte
	sqHead, sqTail *uint32
	sqMask         uint32
	sqArray        []uint32
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []byte
	pending        uint32 // SQEs queued, not yet submitted
}

func newRing(entries uint32) (*ring, error) {
	p := ioUringParams{flags: ioringSetupSQE128 | ioringSetupSingleIssuer | ioringSetupDeferTaskrun}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno == unix.EINVAL {
		// A kernel without DEFER_TASKRUN (before 6.1): the plain ring.
		p = ioUringParams{flags: ioringSetupSQE128}
		fd, _, errno = unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	}
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &ring{fd: int(fd)}
	if p.features&ioringFeatSingleMmap == 0 {
		r.close()
		return nil, errors.New("io_uring without IORING_FEAT_SINGLE_MMAP")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*cqeSize)
	var err error
	if r.rings, err = unix.Mmap(r.fd, ioringOffSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, fmt.Errorf("mmap of the io_uring rings: %w", err)
	}
	if r.sqeMem, err = unix.Mmap(r.fd, ioringOffSQEs, int(p.sqEntries*sqe128Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, fmt.Errorf("mmap of the io_uring SQEs: %w", err)
	}
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&r.rings[off])) }
	r.sqHead, r.sqTail, r.sqMask = u32(p.sqOff.head), u32(p.sqOff.tail), *u32(p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(u32(p.sqOff.array), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = u32(p.cqOff.head), u32(p.cqOff.tail), *u32(p.cqOff.ringMask)
	r.cqes = r.rings[p.cqOff.cqes : p.cqOff.cqes+p.cqEntries*cqeSize]
	return r, nil
}

func (r *ring) close() {
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
	}
	if r.rings != nil {
		_ = unix.Munmap(r.rings)
	}
	_ = unix.Close(r.fd)
}

// registerFile makes fd the ring's fixed file 0: the ring holds the file
// from then on, so the commands never name a descriptor number that the
// process may have closed and reused meanwhile.
func (r *ring) registerFile(fd int) error {
	fds := [1]int32{int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), ioringRegisterFiles, uintptr(unsafe.Pointer(&fds[0])), 1, 0, 0); errno != 0 {
		return fmt.Errorf("io_uring_register of /dev/fuse: %w", errno)
	}
	return nil
}

// queueCmd queues a FUSE uring command; fixed says the file is the ring's
// fixed file 0 rather than descriptor fd.
func (r *ring) queueCmd(fixed bool, fd int, cmdOp uint32, iov *[2]unix.Iovec, commitID uint64, qid uint16) {
	tail := *r.sqTail
	i := tail & r.sqMask
	sqe := r.sqeMem[i*sqe128Size : (i+1)*sqe128Size]
	clear(sqe)
	ne := binary.NativeEndian
	sqe[0] = ioringOpUringCmd
	if fixed {
		sqe[1] = iosqeFixedFile
		fd = 0
	}
	ne.PutUint32(sqe[4:], uint32(fd))
	ne.PutUint32(sqe[8:], cmdOp)
	if iov != nil {
		ne.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(iov))))
		ne.PutUint32(sqe[24:], uint32(len(iov)))
	}
	ne.PutUint64(sqe[sqeCommitIDOff:], commitID)
	ne.PutUint16(sqe[sqeQIDOff:], qid)
	r.sqArray[i] = i
	atomic.StoreUint32(r.sqTail, tail+1)
	r.pending++
}

// wait submits what is queued and returns the result of the next
// completion. A signal (Go's runtime sends them) only restarts the wait:
// io_uring_enter reports the SQEs it took even when its wait is cut.
func (r *ring) wait() (int32, error) {
	for {
		head := *r.cqHead
		if head != atomic.LoadUint32(r.cqTail) {
			cqe := r.cqes[(head&r.cqMask)*cqeSize:]
			res := int32(binary.NativeEndian.Uint32(cqe[8:]))
			atomic.StoreUint32(r.cqHead, head+1)
			return res, nil
		}
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.pending), 1, ioringEnterGetevents, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, fmt.Errorf("io_uring_enter: %w", errno)
		}
		r.pending -= uint32(n)
	}
}

// uringServer serves a mount's requests through the kernel's ring.
type uringServer struct {
	threads []*uringThread
	served  atomic.Int64 // requests served through the ring
	wg      sync.WaitGroup
}

type uringThread struct {
	u     *uringServer
	qid   uint16
	start chan *gofuse.Server // nil (closed) to stop before registering
}

// newURingServer starts, for each possible CPU, uringThreadsPerQueue
// threads pinned to it, each with its ring and buffers, before the INIT
// reply. An error means the mount must not ask for io_uring.
func newURingServer(payloadSize int) (*uringServer, error) {
	ncpu, err := possibleCPUs()
	if err != nil {
		return nil, err
	}
	u := &uringServer{}
	errs := make(chan error)
	for q := range ncpu {
		for range uringThreadsPerQueue {
			t := &uringThread{u: u, qid: uint16(q), start: make(chan *gofuse.Server, 1)}
			u.threads = append(u.threads, t)
			u.wg.Add(1)
			go t.run(payloadSize, errs)
		}
	}
	for range u.threads {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		u.stop()
		return nil, err
	}
	return u, nil
}

// possibleCPUs is the kernel's num_possible_cpus(), the number of queues;
// the ring's qid is a CPU number, so the possible CPUs must be 0..n-1.
func possibleCPUs() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0, fmt.Errorf("possible CPUs: %w", err)
	}
	s := strings.TrimSpace(string(b))
	last := s
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		last = s[i+1:]
	}
	n, err := strconv.Atoi(last)
	if err != nil || (s != "0" && s != "0-"+last) {
		return 0, fmt.Errorf("possible CPUs %q: not 0-N", s)
	}
	return n + 1, nil
}

// start has the threads register with the mounted server's connection.
func (u *uringServer) start(server *gofuse.Server) {
	for _, t := range u.threads {
		t.start <- server
	}
}

// stop ends threads that have not registered (the mount did not get
// io_uring) and waits for them.
func (u *uringServer) stop() {
	for _, t := range u.threads {
		close(t.start)
	}
	u.wg.Wait()
}

func (t *uringThread) run(payloadSize int, setup chan<- error) {
	defer t.u.wg.Done()
	// Never unlocked: the thread, pinned to one CPU, ends with this
	// goroutine instead of going back to the runtime's pool.
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(int(t.qid))
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		// A cpuset without this CPU: the queue is still served, from
		// another CPU.
		slog.Debug("FUSE io_uring thread not pinned", "cpu", t.qid, "err", err)
	}
	r, err := newRing(4)
	if err != nil {
		setup <- err
		return
	}
	defer r.close()
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, page+payloadSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		setup <- fmt.Errorf("ring entry buffers: %w", err)
		return
	}
	defer unix.Munmap(mem)
	setup <- nil
	server, ok := <-t.start
	if !ok {
		return
	}
	header, payload := mem[:uringReqHeaderSize], mem[page:]
	iov := &[2]unix.Iovec{}
	iov[0].Base, iov[1].Base = &header[0], &payload[0]
	iov[0].SetLen(len(header))
	iov[1].SetLen(len(payload))

	var regErr error
	if err := server.WithDeviceFD(func(fd int) {
		if regErr = r.registerFile(fd); regErr != nil {
			// Refuse the ring on purpose (an iovec count the kernel
			// rejects): it then serves on /dev/fuse instead of waiting
			// for this queue.
			r.queueCmd(false, fd, fuseIOUringCmdRegister, nil, 0, t.qid)
			_, _ = r.wait()
		}
	}); err != nil {
		return // the connection is closed already
	}
	if regErr != nil {
		slog.Warn("FUSE over io_uring refused: serving on /dev/fuse", "err", regErr)
		return
	}
	t.serve(r, server, iov, header, payload)
}

// serve registers the entry and serves its requests until the connection
// ends.
func (t *uringThread) serve(r *ring, server *gofuse.Server, iov *[2]unix.Iovec, header, payload []byte) {
	ne := binary.NativeEndian
	r.queueCmd(true, 0, fuseIOUringCmdRegister, iov, 0, t.qid)
	registering := true
	for {
		res, err := r.wait()
		if err != nil {
			slog.Error("FUSE io_uring thread ends", "cpu", t.qid, "err", err)
			return
		}
		if res < 0 {
			errno := syscall.Errno(-res)
			switch {
			case errno == unix.ENOTCONN || errno == unix.ECONNABORTED || errno == unix.ECANCELED || errno == unix.ENODEV:
				return // unmounted or aborted
			case registering:
				// The kernel refused the ring (and serves on /dev/fuse).
				slog.Warn("FUSE over io_uring registration refused: serving on /dev/fuse", "cpu", t.qid, "err", errno)
				return
			}
			// A commit the kernel could not match: the entry is lost to
			// it, register it afresh.
			slog.Warn("FUSE io_uring commit failed; registering the entry again", "cpu", t.qid, "err", errno)
			r.queueCmd(true, 0, fuseIOUringCmdRegister, iov, 0, t.qid)
			registering = true
			continue
		}
		registering = false
		commitID := ne.Uint64(header[uringCommitIDOff:])
		n := t.handle(server, header, payload)
		ne.PutUint32(header[uringPayloadSzOff:], uint32(n-fuseOutHeaderSize))
		t.u.served.Add(1)
		r.queueCmd(true, 0, fuseIOUringCmdCommitAndFetch, nil, commitID, t.qid)
	}
}

// handle serves the request in the entry's buffers through go-fuse and
// leaves the reply there: the out header in in_out, the output arguments
// at the start of the payload. It returns the reply's length.
//
// The reply's payload overwrites the request's, which go-fuse has read by
// then: names are copied into strings before a handler writes its output
// (a GETXATTR's value), and a WRITE's data is taken before its reply.
func (t *uringThread) handle(server *gofuse.Server, header, payload []byte) int {
	ne := binary.NativeEndian
	length := int(ne.Uint32(header[uringInOutOff:]))
	psz := int(ne.Uint32(header[uringPayloadSzOff:]))
	opsz := length - fuseInHeaderSize - psz
	if psz > len(payload) || opsz < 0 || opsz > uringOpInSize {
		slog.Error("FUSE io_uring request of inconsistent sizes", "len", length, "payload", psz)
		return replyError(header, gofuse.EIO)
	}
	in := [][]byte{header[:fuseInHeaderSize], header[uringOpInOff : uringOpInOff+opsz], payload[:psz]}
	out := [][]byte{header[:fuseOutHeaderSize], payload}
	n, st := server.HandleRequestIov(in, out)
	switch {
	case !st.Ok():
		return replyError(header, st)
	case n == 0:
		// A request that takes no reply (none is sent on a ring so far):
		// the entry must still be committed to fetch the next one.
		return replyError(header, gofuse.ENOSYS)
	}
	return n
}

// replyError writes an error reply to the request in header.
func replyError(header []byte, st gofuse.Status) int {
	ne := binary.NativeEndian
	unique := ne.Uint64(header[8:])
	ne.PutUint32(header[0:], fuseOutHeaderSize)
	ne.PutUint32(header[4:], uint32(-int32(st)))
	ne.PutUint64(header[8:], unique)
	return fuseOutHeaderSize
}
