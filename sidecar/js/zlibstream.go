package js

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
)

// zlibPiece bounds what a decompressing stream produces before it hands
// its output to the program: a small input that inflates to gigabytes
// comes out in pieces, as the program's stream takes them.
const zlibPiece = 1 << 20

// The states a stream call leaves a zlib stream in: it wants more input,
// it has more output for the same input (call more), or it ended.
const (
	zlibInput = "input"
	zlibMore  = "more"
	zlibEnd   = "end"
)

var errZlibPause = errors.New("zlib: output piece ready")

// zlibStream is one stream of node:zlib (createGzip, createGunzip, …),
// whose output comes as its input goes, as Node's does. A compressor
// writes into out; a decompressor runs Go's reader in a goroutine that
// reads its input from feed, and each call waits until that goroutine
// needs input again, pauses with a piece of output, or ends, so the
// output of every write is there when the write returns. The goroutine
// ends with the program (its context).
type zlibStream struct {
	v   *vm
	out bytes.Buffer
	w   interface {
		io.WriteCloser
		Flush() error
	}
	feed    chan []byte   // input for the decompressor; closed at the end
	cont    chan struct{} // go on after a piece of output
	ready   chan error    // nil: wants input; errZlibPause; else ended (io.EOF: cleanly)
	pending []byte
	ended   bool
}

func (v *vm) zlibStream(op string, level int) *zlibStream {
	s := &zlibStream{v: v}
	var err error
	switch op {
	case "gzip":
		s.w, err = gzip.NewWriterLevel(&s.out, level)
	case "deflate":
		s.w, err = zlib.NewWriterLevel(&s.out, level)
	case "deflateRaw":
		s.w, err = flate.NewWriter(&s.out, level)
	case "gunzip", "inflate", "inflateRaw", "unzip":
		s.feed, s.cont, s.ready = make(chan []byte), make(chan struct{}), make(chan error, 1)
		go s.inflate(op)
		if err := <-s.ready; err != nil {
			panic(v.zlibError(err))
		}
		return s
	default:
		panic(v.rt.NewTypeError("zlib: unknown operation " + op))
	}
	if err != nil {
		panic(v.zlibError(err))
	}
	return s
}

// inflate is the decompressor's goroutine.
func (s *zlibStream) inflate(op string) {
	in := bufio.NewReader(readerFunc(s.read))
	var r io.Reader
	var err error
	if op == "unzip" {
		op = "inflate"
		if head, _ := in.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
			op = "gunzip"
		}
	}
	var members *gzip.Reader
	switch op {
	case "gunzip":
		// One member at a time: gzip's own multistream reads the next
		// header before it returns a member's last bytes.
		if members, err = gzip.NewReader(in); err == nil {
			members.Multistream(false)
			r = members
		}
	case "inflate":
		r, err = zlib.NewReader(in)
	default:
		r = flate.NewReader(in)
	}
	buf := make([]byte, 32<<10)
	for err == nil {
		var n int
		n, err = r.Read(buf)
		s.out.Write(buf[:n])
		if members != nil && err == io.EOF {
			// Another member, or the end; like Node, what follows a
			// member and is not one is ignored.
			if err = members.Reset(in); errors.Is(err, gzip.ErrHeader) {
				err = io.EOF
			}
		}
		if err == nil && s.out.Len() >= zlibPiece {
			s.ready <- errZlibPause
			select {
			case <-s.cont:
			case <-s.v.ctx.Done():
				err = s.v.ctx.Err()
			}
		}
	}
	s.ready <- err
}

// read is the decompressor's input: the pending chunk, else the next one
// once the program writes it.
func (s *zlibStream) read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		s.ready <- nil
		select {
		case chunk, ok := <-s.feed:
			if !ok {
				return 0, io.EOF
			}
			s.pending = chunk
		case <-s.v.ctx.Done():
			return 0, s.v.ctx.Err()
		}
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// Write gives the stream a chunk and returns the output so far and the
// state the stream is in.
func (s *zlibStream) Write(data goja.Value) []any {
	chunk := bytes.Clone(s.v.bytesOf(data))
	if s.w != nil {
		if _, err := s.w.Write(chunk); err != nil {
			panic(s.v.zlibError(err))
		}
		return s.output(zlibInput)
	}
	if s.ended || len(chunk) == 0 {
		return s.output(s.state())
	}
	s.feed <- chunk
	return s.wait()
}

// More goes on after a piece of output.
func (s *zlibStream) More() []any {
	if s.ended {
		return s.output(zlibEnd)
	}
	s.cont <- struct{}{}
	return s.wait()
}

// Flush is Z_SYNC_FLUSH: what a compressor holds comes out now.
func (s *zlibStream) Flush() []any {
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			panic(s.v.zlibError(err))
		}
	}
	return s.output(s.state())
}

// End is the end of the input: a compressor's trailer, a decompressor's
// last output (or its error, a stream cut short).
func (s *zlibStream) End() []any {
	if s.w != nil {
		if err := s.w.Close(); err != nil {
			panic(s.v.zlibError(err))
		}
		return s.output(zlibEnd)
	}
	if s.ended {
		return s.output(zlibEnd)
	}
	close(s.feed)
	return s.wait()
}

func (s *zlibStream) state() string {
	if s.ended {
		return zlibEnd
	}
	return zlibInput
}

func (s *zlibStream) wait() []any {
	err := <-s.ready
	switch {
	case err == nil:
		return s.output(zlibInput)
	case errors.Is(err, errZlibPause):
		return s.output(zlibMore)
	case errors.Is(err, io.EOF):
		s.ended = true
		return s.output(zlibEnd)
	}
	s.ended = true
	panic(s.v.zlibError(err))
}

func (s *zlibStream) output(state string) []any {
	out := buffer.WrapBytes(s.v.rt, bytes.Clone(s.out.Bytes()))
	s.out.Reset()
	return []any{out, state}
}
