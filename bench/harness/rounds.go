package harness

import (
	"context"
	"errors"
	"log/slog"
)

// RunRounds runs fn rounds times on a fresh target of each kind. The order of the
// kinds rotates every round so that drift (page cache, disk write-back, thermal)
// does not favour one target.
func (e *Env) RunRounds(ctx context.Context, kinds []Kind, rounds int, fn func(ctx context.Context, t *Target) error) error {
	for round := range rounds {
		for i := range kinds {
			k := kinds[(i+round)%len(kinds)]
			slog.Info("round", "round", round+1, "of", rounds, "target", k)
			if err := e.runOne(ctx, k, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Env) runOne(ctx context.Context, k Kind, fn func(ctx context.Context, t *Target) error) (err error) {
	t, err := e.Open(ctx, k)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	// Start every target from the same state: nothing dirty in the page cache.
	if err := DropCaches(); err != nil {
		return err
	}
	return fn(ctx, t)
}
