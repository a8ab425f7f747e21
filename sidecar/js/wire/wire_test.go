package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"reflect"
	"syscall"
	"testing"
)

// TestRoundTrip: every field of a message survives a frame.
func TestRoundTrip(t *testing.T) {
	st := syscall.Stat_t{Dev: 1, Ino: 2, Nlink: 3, Mode: 0o100644, Uid: 4, Gid: 5, Rdev: 6, Size: 7, Blksize: 4096, Blocks: 8,
		Atim: syscall.Timespec{Sec: 9, Nsec: 10}, Mtim: syscall.Timespec{Sec: 11, Nsec: 12}, Ctim: syscall.Timespec{Sec: 13, Nsec: 14}}
	msgs := []*Msg{
		{Op: OpReady},
		{Op: OpOpen, Path: "/workspace/a b", N: int64(syscall.O_CREAT | syscall.O_WRONLY), M: 0o644},
		{Op: OpStat, Path: "/workspace/l", Check: true},
		{Op: OpReply, N: -1, M: 1 << 40, T: [2]int64{-5, 1 << 62}, Path: "x", Path2: "é", Data: []byte{0, 1, 2}},
		{Op: OpReply, Info: &FileInfo{Name: "f", Size: 7, Mode: 0o644, ModTime: 123, HasStat: true, Stat: st}},
		{Op: OpReply, Info: &FileInfo{Name: "d", Mode: fs.ModeDir | 0o755}},
		{Op: OpReply, Ents: []Dirent{{Name: "a", Type: fs.ModeDir}, {Name: "b", Type: fs.ModeSymlink}}},
		{Op: OpReply, Ents: []Dirent{}},
		{Op: OpReply, Err: &Error{Errno: syscall.ENOENT, Op: "open", Path: "/x", Text: "open /x: no such file or directory"}},
	}
	var buf bytes.Buffer
	c := NewConn(&buf, MaxOwnerFrame)
	for _, m := range msgs {
		if err := c.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range msgs {
		got, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
	if _, err := c.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last frame: %v", err)
	}
}

// TestErrors: an error keeps what callers test with errors.Is and As.
func TestErrors(t *testing.T) {
	for _, err := range []error{
		&fs.PathError{Op: "open", Path: "/a", Err: syscall.EISDIR},
		syscall.EFBIG,
		io.EOF,
		errors.New("plain"),
	} {
		got := ErrorOf(err).Go()
		if got.Error() != err.Error() {
			t.Errorf("%v came back as %v", err, got)
		}
		if errno, ok := errors.AsType[syscall.Errno](err); ok && !errors.Is(got, errno) {
			t.Errorf("%v lost its errno: %v", err, got)
		}
		if errors.Is(err, io.EOF) != errors.Is(got, io.EOF) {
			t.Errorf("%v: io.EOF %v", err, got)
		}
	}
	if ErrorOf(nil) != nil || (*Error)(nil).Go() != nil {
		t.Error("nil error not nil")
	}
}

// TestOversizedFrame: a frame over the reader's limit is refused before
// its body is read or allocated.
func TestOversizedFrame(t *testing.T) {
	var hdr [4]byte
	binary.LittleEndian.PutUint32(hdr[:], 1<<31)
	c := NewConn(bytes.NewBuffer(hdr[:]), MaxOwnerFrame)
	if _, err := c.Recv(); !errors.Is(err, ErrFrameTooBig) {
		t.Errorf("Recv = %v, want ErrFrameTooBig", err)
	}
}

// FuzzRecv: no frame body, however malformed, panics the reader or makes
// it allocate past the frame.
func FuzzRecv(f *testing.F) {
	var buf bytes.Buffer
	c := NewConn(&buf, MaxOwnerFrame)
	_ = c.Send(&Msg{Op: OpReply, Path: "a", Ents: []Dirent{{Name: "x"}}, Err: &Error{Errno: 2}, Info: &FileInfo{HasStat: true}})
	f.Add(buf.Bytes()[4:])
	f.Add([]byte{byte(OpReply), 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		frame := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
		c := NewConn(bytes.NewBuffer(append(frame, body...)), MaxOwnerFrame)
		_, _ = c.Recv()
	})
}
