package sqlstore

import (
	"context"
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
