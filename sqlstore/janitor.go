package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// auditPruneEvery is how often the audit trail is pruned; the first
// pruning runs checkpointIdle after open.
const auditPruneEvery = 10 * time.Minute

// gcBatch bounds the rows one garbage-collecting transaction deletes, so
// the writer never waits long for the lock.
const gcBatch = 256

// janitor does the store's upkeep that may wait, on a write connection of
// its own, in bounded transactions: it prunes the audit trail to the
// store's retention and frees the rows and chunks that only deleted
// checkpoints saw.
type janitor struct {
	db *sql.DB
	// ctx ends with close, so a long pruning does not hold it up.
	ctx    context.Context
	cancel context.CancelFunc
	nudge  chan struct{}
	done   chan struct{}
}

func (s *Store) startJanitor() error {
	db, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=10000"))
	if err != nil {
		return fmt.Errorf("open janitor: %w", err)
	}
	db.SetMaxOpenConns(1)
	j := &janitor{db: db, nudge: make(chan struct{}, 1), done: make(chan struct{})}
	j.ctx, j.cancel = context.WithCancel(context.Background())
	s.jan = j
	go j.run(s)
	return nil
}

func (j *janitor) kick() {
	select {
	case j.nudge <- struct{}{}:
	default:
	}
}

func (j *janitor) run(s *Store) {
	defer close(j.done)
	// The first pruning, and freeing what a deletion cut short by a crash
	// may have left, wait a moment, not to slow the open and the requests
	// that follow it: their write transactions would queue behind the
	// writer's (a host wakes a workspace for one request).
	tick := time.NewTimer(checkpointIdle)
	defer tick.Stop()
	first := true
	for {
		select {
		case <-j.ctx.Done():
			return
		case now := <-tick.C:
			if first {
				j.kick()
				first = false
			}
			j.pruneAudit(s, now)
			tick.Reset(auditPruneEvery)
		case <-j.nudge:
			if _, err := collectGarbage(j.ctx, j.db, s.wrote); err != nil && j.ctx.Err() == nil {
				slog.Warn("freeing deleted checkpoints' data failed; retried later", "store", s.path, "err", err)
			}
		}
	}
}

func (j *janitor) pruneAudit(s *Store, now time.Time) {
	n, err := pruneAudit(j.ctx, j.db, s.retention, now)
	if err != nil {
		if j.ctx.Err() == nil {
			slog.Warn("pruning the audit trail failed; retried later", "store", s.path, "err", err)
		}
		return
	}
	if n > 0 {
		s.wrote()
		slog.Info("audit trail pruned", "store", s.path, "events", n,
			"max_age", s.retention.MaxAge, "max_events", s.retention.MaxEvents)
	}
}

func (j *janitor) close() error {
	j.cancel()
	<-j.done
	return j.db.Close()
}

// wrote tells the WAL keeper of a commit made beside the writer.
func (s *Store) wrote() {
	if s.wk != nil {
		s.wk.wrote()
	}
}

// garbageQuery selects the _hist rows no checkpoint sees: no checkpoint's
// generation lies in [born, died).
func garbageQuery(v versioned, cols string) string {
	return fmt.Sprintf(`SELECT %s FROM %s_hist h WHERE NOT EXISTS
		(SELECT 1 FROM checkpoints c WHERE c.gen >= h.born AND c.gen < h.died)`, cols, v.name)
}

// collectGarbage deletes every _hist row no checkpoint sees, gcBatch rows a
// transaction, and clears the pending mark; it returns how many rows went.
func collectGarbage(ctx context.Context, db *sql.DB, wrote func()) (int64, error) {
	var total int64
	for _, v := range versionedTables {
		q := fmt.Sprintf(`DELETE FROM %s_hist WHERE rowid IN (%s LIMIT %d)`, v.name, garbageQuery(v, "rowid"), gcBatch)
		for {
			res, err := db.ExecContext(ctx, q)
			if err != nil {
				return total, fmt.Errorf("free %s: %w", v.name, err)
			}
			n, _ := res.RowsAffected()
			total += n
			if v.name == "chunks" {
				metrics.StoreChunksFreed.Add(float64(n))
			}
			if n > 0 {
				wrote()
			}
			if n < gcBatch {
				break
			}
		}
	}
	// Only if no deletion came meanwhile: that one's rows may be left.
	_, err := db.ExecContext(ctx, `DELETE FROM meta WHERE k = 'gc_pending' AND NOT EXISTS (`+
		garbageQuery(versionedTables[0], "1")+` UNION ALL `+garbageQuery(versionedTables[1], "1")+
		` UNION ALL `+garbageQuery(versionedTables[2], "1")+` UNION ALL `+garbageQuery(versionedTables[3], "1")+`)`)
	if err != nil {
		return total, fmt.Errorf("free deleted checkpoints: %w", err)
	}
	return total, nil
}

// CollectGarbage frees now, on the caller's goroutine, what the janitor
// frees in the background after a checkpoint is deleted.
func (s *Store) CollectGarbage(ctx context.Context) (int64, error) {
	return collectGarbage(ctx, s.w, s.wrote)
}
