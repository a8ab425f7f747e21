package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// SchemaV1 is the first schema, to build stores as older programs made them.
var SchemaV1 = migrations[0].sql

// SetCheckpointTiming shortens the WAL keeper's timing for a test, for
// stores opened after the call; the returned func restores it.
func SetCheckpointTiming(idle time.Duration, walBytes int64) (restore func()) {
	oldIdle, oldWAL := checkpointIdle, checkpointWAL
	checkpointIdle, checkpointWAL = idle, walBytes
	return func() { checkpointIdle, checkpointWAL = oldIdle, oldWAL }
}

// WALCheckpoints is how many WAL checkpoints the store's WAL keeper has run.
func (s *Store) WALCheckpoints() uint64 { return s.wk.runs.Load() }

// WALBytes is what the WAL holds since it started over, and what of that
// no checkpoint has copied.
func (s *Store) WALBytes() (used, pending int64) { return s.walBytes() }

// LookupQueries are the queries of the lookup API, by what runs them.
var LookupQueries = map[string][]string{
	"open": openQueries, "readdir": {qDir, qDirXattrs}, "names": {qNamesOf, qNamesOfMany},
}

// SchemaUpTo is the SQL of schemas 1 to v, to build stores as older
// programs made them (fresh: no migration's fill runs).
func SchemaUpTo(v int) string {
	var q string
	for _, m := range migrations[:v] {
		q += m.sql + ";\n"
	}
	return q
}

// CommitDuring commits b, calling during inside its transaction: a commit
// that takes as long as during does.
func (s *Store) CommitDuring(ctx context.Context, b *Batch, during func()) error {
	return s.commitWith(ctx, b, func(*sql.Tx) error { during(); return nil })
}
