package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

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
	bin, err := exec.LookPath(o.Binary)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoLitestream, err)
	}
	tmp := out + ".restoring"
	clean := func() {
		for _, sfx := range []string{"", "-wal", "-shm", ".lock", ".tmp", "-txid"} {
			_ = os.Remove(tmp + sfx)
		}
	}
	clean()
	defer clean()
	if err := restoreTo(ctx, bin, o, tmp, at); err != nil {
		return err
	}
	// Litestream writes it 0644; a workspace is its owner's alone.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	restored := time.Now()
	if err := check(ctx, tmp); err != nil {
		return fmt.Errorf("restore %s: the restored store fails its check: %w", o.URL.Redacted(), err)
	}
	// A link, unlike a rename, refuses to replace an out made meanwhile.
	if err := os.Link(tmp, out); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	o.Logger.Info("restored", "replica", o.URL.Redacted(), "out", out, "at", at, "took", time.Since(start), "litestream", restored.Sub(start), "check", time.Since(restored))
	return nil
}

// restoreTo runs litestream restore into tmp.
func restoreTo(ctx context.Context, bin string, o Options, tmp string, at time.Time) error {
	args := []string{"restore", "-if-replica-exists", "-o", tmp}
	switch {
	case !at.IsZero():
		args = append(args, "-timestamp", at.UTC().Format(time.RFC3339Nano))
	case o.txid != 0:
		args = append(args, "-txid", formatTXID(o.txid))
	}
	_, out, err := runLitestream(ctx, bin, o, append(args, o.URL.String())...)
	switch {
	case err != nil && bytes.Contains(out, []byte("no backups found")):
		return fmt.Errorf("%s: %w", o.URL.Redacted(), ErrNoReplica)
	case err != nil && !at.IsZero() && bytes.Contains(out, []byte("timestamp does not exist")):
		// Litestream refuses a time outside its files' times, also one
		// after the last change: the store then was what it is now.
		last, err := newest(ctx, bin, o)
		if err != nil {
			return err
		}
		if at.Before(last) {
			return fmt.Errorf("%s: %w as %s", o.URL.Redacted(), ErrTooEarly, at.UTC().Format(time.RFC3339))
		}
		return restoreTo(ctx, bin, o, tmp, time.Time{})
	case err != nil:
		return fmt.Errorf("restore %s: %w", o.URL.Redacted(), err)
	}
	if _, err := os.Stat(tmp); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", o.URL.Redacted(), ErrNoReplica)
	}
	return nil
}

// newest is the time of the latest change the replica holds.
func newest(ctx context.Context, bin string, o Options) (time.Time, error) {
	out, all, err := runLitestream(ctx, bin, o, "restore", "-dry-run", "-json", "-o", os.DevNull, o.URL.String())
	if err != nil {
		if bytes.Contains(all, []byte("no matching backup")) {
			return time.Time{}, fmt.Errorf("%s: %w", o.URL.Redacted(), ErrNoReplica)
		}
		return time.Time{}, fmt.Errorf("restore plan of %s: %w", o.URL.Redacted(), err)
	}
	var plan struct {
		Files []struct {
			Timestamp time.Time `json:"timestamp"`
		} `json:"files"`
	}
	if err := json.Unmarshal(out, &plan); err != nil {
		return time.Time{}, fmt.Errorf("restore plan of %s: %w", o.URL.Redacted(), err)
	}
	var last time.Time
	for _, f := range plan.Files {
		if f.Timestamp.After(last) {
			last = f.Timestamp
		}
	}
	return last, nil
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

// runLitestream runs a litestream command with the replica's
// credentials, returning its stdout and all it printed.
// A host's restore runs niced (through nice(1), so that every thread of
// it is): beside it, the host's own work (lease renewals, requests of the
// workspaces it serves) and a local object store come first.
func runLitestream(ctx context.Context, bin string, o Options, args ...string) (stdout, all []byte, err error) {
	argv := append([]string{bin}, args...)
	if nice, err := exec.LookPath("nice"); err == nil && o.nice > 0 {
		argv = append([]string{nice, "-n", strconv.Itoa(o.nice)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), o.Credentials.env()...)
	var out bytes.Buffer
	both := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, both), both
	if err := cmd.Run(); err != nil {
		return out.Bytes(), both.Bytes(), fmt.Errorf("litestream %s: %w: %s", args[0], err, lastLines(both.String(), 5))
	}
	return out.Bytes(), both.Bytes(), nil
}

// lockedBuffer takes a child's stdout and stderr, copied by two goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte  { return l.b.Bytes() }
func (l *lockedBuffer) String() string { return l.b.String() }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
