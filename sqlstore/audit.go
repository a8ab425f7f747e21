package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
)

// AuditEvent is one recorded change (or refused attempt).
type AuditEvent struct {
	Seq    int64
	Time   time.Time
	Actor  string // "fuse:pid=123 comm=cp", "exec:ID", "tool:write", …
	Op     string // create, write, unlink, rename, …
	Path   string
	Path2  string // rename target, link name
	Result string // "ok" or an errno name such as "EROFS"
}

// AuditFilter selects audit events; zero fields match everything.
type AuditFilter struct {
	Actor       string // exact actor
	ActorPrefix string // e.g. "exec:"
	Op          string
	PathPrefix  string
	Since       time.Time
	AfterSeq    int64
	Limit       int // default 1000
}

// Audit returns the events matching f, oldest first.
func (s *Store) Audit(ctx context.Context, f AuditFilter) ([]AuditEvent, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.Actor != "" {
		add("actor = ?", f.Actor)
	}
	if f.ActorPrefix != "" {
		add("substr(actor, 1, ?) = ?", len(f.ActorPrefix))
		args = append(args, f.ActorPrefix)
	}
	if f.Op != "" {
		add("op = ?", f.Op)
	}
	if f.PathPrefix != "" {
		add("(substr(path, 1, ?) = ?", len(f.PathPrefix))
		where[len(where)-1] += " OR substr(path2, 1, ?) = ?)"
		args = append(args, f.PathPrefix, len(f.PathPrefix), f.PathPrefix)
	}
	if !f.Since.IsZero() {
		add("time_ns >= ?", f.Since.UnixNano())
	}
	if f.AfterSeq > 0 {
		add("seq > ?", f.AfterSeq)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	q := "SELECT seq, time_ns, actor, op, path, path2, result FROM audit"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY seq LIMIT ?"
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.classify(fmt.Errorf("audit query: %w", err))
	}
	defer rows.Close()
	var out []AuditEvent
	for rows.Next() {
		var e AuditEvent
		var ns int64
		if err := rows.Scan(&e.Seq, &ns, &e.Actor, &e.Op, &e.Path, &e.Path2, &e.Result); err != nil {
			return nil, s.classify(fmt.Errorf("audit query: %w", err))
		}
		e.Time = time.Unix(0, ns)
		out = append(out, e)
	}
	return out, s.classify(rows.Err())
}

// LastAuditSeq is the number of the newest audit event, 0 without any.
// Events are numbered in commit order and never renumbered.
func (s *Store) LastAuditSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM audit`).Scan(&seq); err != nil {
		return 0, s.classify(fmt.Errorf("audit query: %w", err))
	}
	return seq, nil
}

// AuditRetention bounds the audit trail; the store prunes older events in
// the background. A zero field sets no bound of its kind.
type AuditRetention struct {
	MaxAge    time.Duration // events older than this are pruned
	MaxEvents int64         // only the newest MaxEvents are kept
}

// DefaultAuditRetention keeps a month of events, and at most a million of
// them: at about 125 bytes an event with its index (measured with 46-byte
// paths) a million stay near 125 MB. A workspace writing up to 33,000
// events a day keeps the whole month; a busier one its last million events.
var DefaultAuditRetention = AuditRetention{MaxAge: 30 * 24 * time.Hour, MaxEvents: 1_000_000}

// AddFlags registers --audit-max-age and --audit-max-events on fs, with r's
// values as defaults.
func (r *AuditRetention) AddFlags(fs *flag.FlagSet) {
	fs.DurationVar(&r.MaxAge, "audit-max-age", r.MaxAge, "prune audit events older than `AGE` (0: keep any age)")
	fs.Int64Var(&r.MaxEvents, "audit-max-events", r.MaxEvents, "keep at most the newest `N` audit events (0: no limit)")
}

// auditPruneBatch is how many events one pruning transaction deletes, so
// the writer never waits long for the lock.
const auditPruneBatch = 10_000

// PruneAudit deletes the events r no longer keeps, as of now, and returns
// how many. The newest event is always kept: event numbers are SQLite rowids,
// which would start again from 1 in an empty table and confuse readers
// paging on with "after N".
func (s *Store) PruneAudit(ctx context.Context, now time.Time) (int64, error) {
	return pruneAudit(ctx, s.w, s.retention, now)
}

func pruneAudit(ctx context.Context, db *sql.DB, r AuditRetention, now time.Time) (int64, error) {
	var newest sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(seq) FROM audit`).Scan(&newest); err != nil || !newest.Valid {
		return 0, err
	}
	var keepFrom int64 // the first event kept
	if r.MaxEvents > 0 {
		keepFrom = newest.Int64 - r.MaxEvents + 1
	}
	if r.MaxAge > 0 {
		// Events are numbered in time order, so the first young enough
		// bounds the old ones; the scan only reads what is deleted.
		var young int64
		err := db.QueryRowContext(ctx, `SELECT seq FROM audit WHERE time_ns >= ? ORDER BY seq LIMIT 1`,
			now.Add(-r.MaxAge).UnixNano()).Scan(&young)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			keepFrom = newest.Int64
		case err != nil:
			return 0, err
		default:
			keepFrom = max(keepFrom, young)
		}
	}
	var pruned int64
	for {
		res, err := db.ExecContext(ctx, `DELETE FROM audit WHERE seq IN
			(SELECT seq FROM audit WHERE seq < ? ORDER BY seq LIMIT ?)`, keepFrom, auditPruneBatch)
		if err != nil {
			return pruned, fmt.Errorf("prune audit: %w", err)
		}
		n, _ := res.RowsAffected()
		pruned += n
		if n < auditPruneBatch {
			return pruned, nil
		}
	}
}
