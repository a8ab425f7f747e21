package js

import (
	"context"
	"errors"

	"github.com/sqlfs/sqlfs/sidecar/js/wire"
)

// CheckpointFunc serves sqlfs:checkpoint: it runs checkpoint operation op
// (create, list, restore, diff, delete or undo) with JSON arguments in
// actor's name, the exec's, and returns the JSON result. An error with an
// ErrorCode method gives the JavaScript error its code.
type CheckpointFunc func(ctx context.Context, actor, op string, args []byte) ([]byte, error)

func (v *vm) checkpoint(op, args string) string {
	out, err := v.svc.checkpoint(v.ctx, op, []byte(args))
	if err != nil {
		e := v.rt.NewGoError(err)
		var coded interface{ ErrorCode() string }
		if errors.As(err, &coded) {
			_ = e.Set("code", coded.ErrorCode())
		}
		panic(e)
	}
	return string(out)
}

func (s *localServices) checkpoint(ctx context.Context, op string, args []byte) ([]byte, error) {
	if s.p.Checkpoint == nil {
		return nil, errors.New("sqlfs:checkpoint: checkpoints are not available to this exec")
	}
	return s.p.Checkpoint(ctx, s.p.Actor, op, args)
}

// codedError is a checkpoint error from the owner, with its code.
type codedError struct{ msg, code string }

func (e codedError) Error() string     { return e.msg }
func (e codedError) ErrorCode() string { return e.code }

func (r remoteServices) checkpoint(_ context.Context, op string, args []byte) ([]byte, error) {
	m := r.c.call(&wire.Msg{Op: wire.OpCheckpoint, Path: op, Data: args})
	if m.Err != nil {
		if m.Path2 != "" {
			return nil, codedError{m.Err.Text, m.Path2}
		}
		return nil, m.Err.Go()
	}
	return m.Data, nil
}

// serveCheckpoint answers a worker's checkpoint call; Path2 carries the
// error's code.
func (s *server) serveCheckpoint(m *wire.Msg) *wire.Msg {
	out, err := s.svc.checkpoint(s.ctx, m.Path, m.Data)
	if err != nil {
		r := fail(err)
		var coded interface{ ErrorCode() string }
		if errors.As(err, &coded) {
			r.Path2 = coded.ErrorCode()
		}
		return r
	}
	return &wire.Msg{Data: out}
}
