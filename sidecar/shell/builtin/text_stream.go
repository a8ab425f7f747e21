package builtin

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// textConcat reads the operands one after another as one stream (standard
// input when there are none), as the commands that used to concatenate
// them in memory did, reporting each unreadable operand as cmd does.
type textConcat struct {
	ctx    context.Context
	env    *Env
	cmd    string
	names  []string
	name   string
	cur    io.ReadCloser
	failed bool // some operand could not be read
}

func newTextConcat(ctx context.Context, env *Env, cmd string, names []string) *textConcat {
	if len(names) == 0 {
		names = []string{"-"}
	}
	return &textConcat{ctx: ctx, env: env, cmd: cmd, names: names}
}

func (c *textConcat) Read(p []byte) (int, error) {
	for {
		if err := c.ctx.Err(); err != nil {
			c.close()
			return 0, err
		}
		if c.cur == nil {
			if len(c.names) == 0 {
				return 0, io.EOF
			}
			c.name, c.names = c.names[0], c.names[1:]
			r, err := textOpen(c.env, c.name)
			if err != nil {
				textFileErr(c.env, c.cmd, c.name, err)
				c.failed = true
				continue
			}
			c.cur = r
		}
		n, err := c.cur.Read(p)
		if err != nil {
			if !errors.Is(err, io.EOF) && c.ctx.Err() == nil {
				textFileErr(c.env, c.cmd, c.name, err)
				c.failed = true
			}
			c.close()
			if n == 0 {
				continue
			}
		}
		return n, nil
	}
}

func (c *textConcat) close() {
	if c.cur != nil {
		c.cur.Close()
		c.cur = nil
	}
}

// ctxReader ends the read loops of the standard library (io.Copy through
// a decompressor, a hash) once ctx ends: a gzip bomb unpacks gigabytes from
// a few kilobytes without another read of its own input.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// textLineReader reads lines one at a time: memory stays constant except
// for a line longer than its buffer, which is charged to the exec's budget.
type textLineReader struct {
	ctx   context.Context
	br    *bufio.Reader
	sep   byte
	long  []byte // a line longer than the buffer
	mem   memGauge
	lines int
	err   error // why reading stopped before the end: a read error or the budget
}

func newTextLineReader(ctx context.Context, env *Env, r io.Reader, sep byte) *textLineReader {
	return &textLineReader{ctx: ctx, br: bufio.NewReaderSize(r, 64<<10), sep: sep, mem: memGauge{env: env}}
}

// next returns the next line without its terminator and whether it had
// one; ok is false at the end. The line is valid until the next call.
func (l *textLineReader) next() (line []byte, nl, ok bool) {
	if l.lines++; l.lines%1024 == 0 && l.ctx.Err() != nil {
		return nil, false, false
	}
	l.long = l.long[:0]
	for {
		chunk, err := l.br.ReadSlice(l.sep)
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long, chunk...)
			if err := l.mem.set(int64(cap(l.long))); err != nil {
				l.err = err
				return nil, false, false
			}
			if l.ctx.Err() != nil {
				return nil, false, false
			}
			continue
		}
		if len(l.long) > 0 {
			l.long = append(l.long, chunk...)
			chunk = l.long
		}
		switch {
		case err == nil:
			return chunk[:len(chunk)-1], true, true
		case errors.Is(err, io.EOF):
			return chunk, false, len(chunk) > 0
		default:
			if l.ctx.Err() == nil {
				l.err = err
			}
			return nil, false, false
		}
	}
}

// textEachLine runs fn on every line of the operands read as one stream;
// it reports false when an operand could not be read or the lines ended
// early (reported on stderr as cmd).
func textEachLine(ctx context.Context, env *Env, cmd string, names []string, sep byte, fn func(line []byte, nl bool)) bool {
	in := newTextConcat(ctx, env, cmd, names)
	lr := newTextLineReader(ctx, env, in, sep)
	for line, nl, ok := lr.next(); ok; line, nl, ok = lr.next() {
		fn(line, nl)
	}
	if lr.err != nil {
		env.Errorf(cmd, "%v", lr.err)
		return false
	}
	return !in.failed && ctx.Err() == nil
}
