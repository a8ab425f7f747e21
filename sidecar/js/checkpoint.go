package js

import (
	"context"
	"errors"
)

// CheckpointFunc serves sqlfs:checkpoint: it runs checkpoint operation op
// (create, list, restore, diff, delete or undo) with JSON arguments in
// actor's name, the exec's, and returns the JSON result. An error with an
// ErrorCode method gives the JavaScript error its code.
type CheckpointFunc func(ctx context.Context, actor, op string, args []byte) ([]byte, error)

func (v *vm) checkpoint(op, args string) string {
	if v.cfg.checkpoint == nil {
		panic(v.rt.NewGoError(errors.New("sqlfs:checkpoint: checkpoints are not available to this exec")))
	}
	out, err := v.cfg.checkpoint(v.ctx, v.cfg.actor, op, []byte(args))
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
