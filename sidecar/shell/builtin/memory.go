package builtin

import (
	"context"
	"io"
)

// Memory is the exec's memory budget, charged for data a command must hold
// at once (sort's lines, tac's input, sed's hold space, awk's and jq's
// values). Grow fails once the exec is past its budget: the command must
// then stop, and its error names the limit. Whatever a command still holds
// is released when it returns, so Shrink is only for buffers that shrink
// while it runs.
type Memory interface {
	Grow(n int64) error
	Shrink(n int64)
	// Limit is the exec's budget: no single value may be larger.
	Limit() int64
}

// grow charges n bytes to the exec's budget; a command run without one
// (unit tests) holds what it likes.
func (e *Env) grow(n int64) error {
	if e.Mem == nil || n <= 0 {
		return nil
	}
	return e.Mem.Grow(n)
}

// memLimit is the largest value a command may build, 0 for no bound.
func (e *Env) memLimit() int64 {
	if e.Mem == nil {
		return 0
	}
	return e.Mem.Limit()
}

func (e *Env) shrink(n int64) {
	if e.Mem != nil && n > 0 {
		e.Mem.Shrink(n)
	}
}

// memGauge keeps one buffer's charge equal to its current size.
type memGauge struct {
	env  *Env
	held int64
}

// set charges or releases the difference from the last size.
func (g *memGauge) set(size int64) error {
	d := size - g.held
	if d > 0 {
		if err := g.env.grow(d); err != nil {
			return err
		}
	} else {
		g.env.shrink(-d)
	}
	g.held = size
	return nil
}

// readAllCharged reads r to the end, charging the buffer against env's
// budget as it grows and checking ctx between reads.
func readAllCharged(ctx context.Context, env *Env, r io.Reader) ([]byte, error) {
	b := make([]byte, 0, 4096)
	if err := env.grow(int64(cap(b))); err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			old := cap(b)
			b = append(b, 0)[:len(b)]
			if err := env.grow(int64(cap(b) - old)); err != nil {
				return b, err
			}
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// chargedWriter charges everything written through it: for output a
// command collects in memory before it can write it out (sed -i).
type chargedWriter struct {
	env *Env
	w   io.Writer
}

func (c *chargedWriter) Write(p []byte) (int, error) {
	if err := c.env.grow(int64(len(p))); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
