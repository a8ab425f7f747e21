package replica

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/superfly/ltx"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Errors of Restore, for errors.Is.
var (
	// ErrNoReplica: the replica holds nothing at that URL (a workspace
	// never replicated, or a wrong path).
	ErrNoReplica = errors.New("the replica holds no store there")
	// ErrTooEarly: the replica holds the store, but nothing from at or
	// before the timestamp (before it was first replicated, or past the
	// retention).
	ErrTooEarly = errors.New("the replica holds nothing that old")
	// ErrBadTimestamp: a timestamp that is not RFC 3339 or lies ahead.
	ErrBadTimestamp = errors.New("bad timestamp")
)

// ParseTimestamp reads an RFC 3339 time (2026-12-01T15:04:05Z), refusing
// one in the future.
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w %q: want RFC 3339, e.g. %s", ErrBadTimestamp, s, time.Now().UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	if t.After(time.Now()) {
		return time.Time{}, fmt.Errorf("%w %q: it is in the future", ErrBadTimestamp, s)
	}
	return t, nil
}

// Restore writes the store the replica o.URL holds, as it was at the
// second at (zero: the latest it has), to the new file out, and checks it
// (SQLite's integrity and sqlfs's invariants) before giving it that name:
// out never exists half restored. An existing out is refused.
func Restore(ctx context.Context, o Options, out string, at time.Time) (err error) {
	o.defaults()
	start := time.Now()
	defer func() {
		switch {
		case err == nil:
			metrics.ReplicaRestores.WithLabelValues("ok").Inc()
			metrics.ReplicaRestoreDuration.Observe(time.Since(start).Seconds())
		case errors.Is(err, ErrNoReplica):
			metrics.ReplicaRestores.WithLabelValues("empty").Inc()
		default:
			metrics.ReplicaRestores.WithLabelValues("error").Inc()
		}
	}()
	if o.URL.u == nil {
		return fmt.Errorf("%w: none given", ErrBadURL)
	}
	for _, p := range []string{out, out + "-wal"} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("restore: %s: %w: restore into a new name", p, fs.ErrExist)
		}
	}
	tmp := out + ".restoring"
	clean := func() {
		for _, sfx := range []string{"", "-wal", "-shm", ".lock"} {
			_ = os.Remove(tmp + sfx)
		}
	}
	clean()
	defer clean()
	var restored time.Time
	err = niced(o.nice, func() (err error) {
		// A panic on niced's goroutine would end the host, and every host
		// opening the workspace after it: it is this restore's error.
		defer func() {
			if p := recover(); p != nil {
				o.Logger.Error("restore panicked", "replica", o.URL.Redacted(), "panic", p, "stack", string(debug.Stack()))
				err = fmt.Errorf("restore %s: panic: %v", o.URL.Redacted(), p)
			}
		}()
		if err := restoreTo(ctx, o, tmp, at); err != nil {
			return err
		}
		restored = time.Now()
		if err := check(ctx, tmp); err != nil {
			return fmt.Errorf("restore %s: the restored store fails its check: %w", o.URL.Redacted(), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A link, unlike a rename, refuses to replace an out made meanwhile.
	if err := os.Link(tmp, out); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := syncFile(filepath.Dir(out)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	o.Logger.Info("restored", "replica", o.URL.Redacted(), "out", out, "at", at, "took", time.Since(start), "ltx", restored.Sub(start), "check", time.Since(restored))
	return nil
}

// restoreTo writes the store the replica o.URL holds, as it was at the
// second at (zero: the latest) or at transaction o.txid, to the new file
// tmp, synced (Litestream's restore, from the LTX files themselves).
func restoreTo(ctx context.Context, o Options, tmp string, at time.Time) error {
	client := o.client
	if client == nil {
		client = NewS3Client(o.URL, o.Credentials)
	}
	b := newBucket(client, o.URL)
	levels, err := b.ltxFiles(ctx)
	if err != nil {
		return err
	}
	var first, last time.Time
	for _, l := range levels {
		for _, f := range l {
			if first.IsZero() || f.modified.Before(first) {
				first = f.modified
			}
			if f.modified.After(last) {
				last = f.modified
			}
		}
	}
	if first.IsZero() {
		return fmt.Errorf("%s: %w", o.URL.Redacted(), ErrNoReplica)
	}
	txid := ltx.TXID(o.txid)
	if !at.IsZero() {
		// Litestream's bounds, from the uploads' times.
		switch {
		case at.Before(first):
			return fmt.Errorf("%s: %w as %s", o.URL.Redacted(), ErrTooEarly, at.UTC().Format(time.RFC3339))
		case at.After(last):
			at = time.Time{} // the store then was what it is now
		default:
			if err := b.headTimes(ctx, levels); err != nil {
				return fmt.Errorf("restore %s: %w", o.URL.Redacted(), err)
			}
		}
	}
	for attempt := 1; ; attempt++ {
		plan, err := restorePlan(levels, txid, at)
		switch {
		case errors.Is(err, errTxNotAvailable) && !at.IsZero():
			return fmt.Errorf("%s: %w as %s", o.URL.Redacted(), ErrTooEarly, at.UTC().Format(time.RFC3339))
		case errors.Is(err, errTxNotAvailable):
			return fmt.Errorf("restore %s: %w (transaction %s)", o.URL.Redacted(), err, txid)
		case err != nil:
			return fmt.Errorf("restore %s: %w", o.URL.Redacted(), err)
		}
		err = applyPlan(ctx, b, plan, tmp)
		if err == nil {
			return nil
		}
		_ = os.Remove(tmp)
		if !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return fmt.Errorf("restore %s: %w", o.URL.Redacted(), err)
		}
		// A live replicator compacted a file of the plan away meanwhile:
		// the same transaction, from the files there now.
		o.Logger.Debug("an LTX file of the restore plan is gone; planning again", "replica", o.URL.Redacted(), "err", err)
		txid, at = plan[len(plan)-1].max, time.Time{}
		if levels, err = b.ltxFiles(ctx); err != nil {
			return err
		}
	}
}

// check opens the store, runs its check and closes it (the WAL copied in).
func check(ctx context.Context, path string) error {
	st, err := sqlstore.Open(ctx, path, sqlstore.Options{})
	if err != nil {
		return err
	}
	problems, err := st.Check(ctx)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", sqlstore.ErrStoreCorrupt, strings.TrimSpace(sqlstore.FormatProblems(problems)))
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("%s: WAL left after close", path)
	}
	return nil
}
