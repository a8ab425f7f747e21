package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/metrics"
)

// Tuning of the checkpointer; variables so tests can shorten them.
var (
	// checkpointWAL is the WAL size past which the checkpointer copies it
	// into the database without waiting for the next tick.
	checkpointWAL int64 = 64 << 20
	// checkpointIdle is how long the store must be quiet before the WAL
	// is truncated back to nothing.
	checkpointIdle = 2 * time.Second
)

// auditPruneEvery is how often the audit trail is pruned; the first
// pruning runs at the first tick after open.
const auditPruneEvery = 10 * time.Minute

// checkpointer copies the WAL into the database in the background on a
// connection of its own, each time commits have left checkpointWAL bytes
// uncopied. PASSIVE checkpoints never block the writer; once
// commits have stopped for checkpointIdle it truncates the WAL so it does
// not stay large. A TRUNCATE waits for the writer and holds it off until
// the whole WAL is copied and synced, so it never runs while commits keep
// coming (it used to, every tick during a large write, stalling it), and a
// PASSIVE copy goes first so that it has little left to copy. It also
// prunes the audit trail to the store's retention.
type checkpointer struct {
	db *sql.DB
	// ctx ends with close, so a long pruning does not hold it up.
	ctx    context.Context
	cancel context.CancelFunc
	nudge  chan struct{}
	stop   chan struct{}
	done   chan struct{}
	// writes counts the commits to the store (the pruning's included);
	// lastWrite is when the latest landed, in Unix nanoseconds.
	writes    atomic.Uint64
	lastWrite atomic.Int64
	// runs counts the checkpoints run.
	runs atomic.Uint64
}

func (s *Store) startCheckpointer() error {
	db, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=10000"))
	if err != nil {
		return fmt.Errorf("open checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	cp := &checkpointer{db: db, nudge: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	cp.ctx, cp.cancel = context.WithCancel(context.Background())
	s.cp = cp
	go cp.run(s)
	return nil
}

// committed tells the checkpointer what a commit left in the WAL: used
// bytes since SQLite last started it over, pending of them not yet
// copied. A checkpoint runs once pending passes the threshold; and while
// the WAL has gone two thresholds without starting over (PASSIVE copies
// that commits keep overtaking never let it), after every commit, so that
// one copy catches up and the next commit starts the WAL from the
// beginning instead of growing the file for as long as commits come.
func (cp *checkpointer) committed(used, pending int64) {
	cp.wrote()
	if pending < checkpointWAL && used < 2*checkpointWAL {
		return
	}
	select {
	case cp.nudge <- struct{}{}:
	default:
	}
}

func (cp *checkpointer) wrote() {
	cp.lastWrite.Store(time.Now().UnixNano())
	cp.writes.Add(1)
}

func (cp *checkpointer) run(s *Store) {
	defer close(cp.done)
	tick := time.NewTicker(checkpointIdle)
	defer tick.Stop()
	truncatedAt := cp.writes.Load() // writes when the WAL was last truncated
	var pruned time.Time
	for {
		modes := []string{"PASSIVE"}
		select {
		case <-cp.stop:
			return
		case <-cp.nudge:
		case now := <-tick.C:
			if now.Sub(pruned) >= auditPruneEvery {
				pruned = now
				cp.pruneAudit(s, now)
			}
			quiet := now.Sub(time.Unix(0, cp.lastWrite.Load())) >= checkpointIdle
			if _, wal := s.FileBytes(); wal == 0 || !quiet || cp.writes.Load() == truncatedAt {
				continue
			}
			// The copy runs PASSIVE, beside any commit; the TRUNCATE,
			// which holds commits off, then only truncates.
			modes = append(modes, "TRUNCATE")
		}
		writes := cp.writes.Load()
		for _, mode := range modes {
			if mode == "TRUNCATE" && cp.writes.Load() != writes {
				break // no longer quiet
			}
			start := time.Now()
			if _, err := cp.db.Exec("PRAGMA wal_checkpoint(" + mode + ")"); err != nil {
				slog.Warn("checkpoint failed; retried later", "mode", mode, "err", err)
				break
			}
			metrics.StoreCheckpointDuration.Observe(time.Since(start).Seconds())
			cp.runs.Add(1)
			if mode == "TRUNCATE" {
				truncatedAt = writes
			}
		}
	}
}

func (cp *checkpointer) pruneAudit(s *Store, now time.Time) {
	n, err := pruneAudit(cp.ctx, cp.db, s.retention, now)
	if err != nil {
		slog.Warn("pruning the audit trail failed; retried later", "store", s.path, "err", err)
		return
	}
	if n > 0 {
		cp.wrote()
		slog.Info("audit trail pruned", "store", s.path, "events", n,
			"max_age", s.retention.MaxAge, "max_events", s.retention.MaxEvents)
	}
}

// freeBytes is the space left on the store's filesystem.
func (s *Store) freeBytes() int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(s.path), &st); err != nil {
		return 1 << 62
	}
	return int64(st.Bavail) * st.Bsize
}

func (cp *checkpointer) close() error {
	cp.cancel()
	close(cp.stop)
	<-cp.done
	return cp.db.Close()
}
