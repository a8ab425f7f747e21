package sqlstore

import (
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/metrics"
)

// Tuning of the WAL keeper; variables so tests can shorten them.
var (
	// checkpointWAL is the WAL size past which the WAL keeper copies it
	// into the database without waiting for the next tick.
	checkpointWAL int64 = 64 << 20
	// checkpointIdle is how long the store must be quiet before the WAL
	// is truncated back to nothing.
	checkpointIdle = 2 * time.Second
)

// walKeeper runs SQLite's WAL checkpoints (copies of the WAL into the
// database; nothing to do with the workspace's checkpoints) in the
// background on a connection of its own, each time commits have left checkpointWAL bytes
// uncopied. PASSIVE checkpoints never block the writer; once
// commits have stopped for checkpointIdle it truncates the WAL so it does
// not stay large. A TRUNCATE waits for the writer and holds it off until
// the whole WAL is copied and synced, so it never runs while commits keep
// coming (it used to, every tick during a large write, stalling it), and a
// PASSIVE copy goes first so that it has little left to copy. With
// Options.ExternalWALCheckpoints there is none: a tool such as Litestream
// owns checkpointing.
type walKeeper struct {
	db    *sql.DB
	nudge chan struct{}
	stop  chan struct{}
	done  chan struct{}
	// writes counts the commits to the store (the audit pruning's included);
	// lastWrite is when the latest landed, in Unix nanoseconds.
	writes    atomic.Uint64
	lastWrite atomic.Int64
	// committing counts the commits under way: the store is not quiet
	// while one is (a TRUNCATE would wait for it, then truncate at once).
	committing atomic.Int32
	// runs counts the checkpoints run.
	runs atomic.Uint64
}

func (s *Store) startWALKeeper() error {
	db, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=10000"))
	if err != nil {
		return fmt.Errorf("open WAL keeper: %w", err)
	}
	db.SetMaxOpenConns(1)
	wk := &walKeeper{db: db, nudge: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.wk = wk
	go wk.run(s)
	return nil
}

// committed tells the WAL keeper what a commit left in the WAL: used
// bytes since SQLite last started it over, pending of them not yet
// copied. A checkpoint runs once pending passes the threshold; and while
// the WAL has gone two thresholds without starting over (PASSIVE copies
// that commits keep overtaking never let it), after every commit, so that
// one copy catches up and the next commit starts the WAL from the
// beginning instead of growing the file for as long as commits come.
func (cp *walKeeper) committed(used, pending int64) {
	cp.wrote()
	if pending < checkpointWAL && used < 2*checkpointWAL {
		return
	}
	select {
	case cp.nudge <- struct{}{}:
	default:
	}
}

func (cp *walKeeper) wrote() {
	cp.lastWrite.Store(time.Now().UnixNano())
	cp.writes.Add(1)
}

func (cp *walKeeper) run(s *Store) {
	defer close(cp.done)
	tick := time.NewTicker(checkpointIdle)
	defer tick.Stop()
	truncatedAt := cp.writes.Load() // writes when the WAL was last truncated
	for {
		modes := []string{"PASSIVE"}
		var writes uint64
		select {
		case <-cp.stop:
			return
		case <-cp.nudge:
		case <-tick.C:
			// Read before the quiet test, so that a commit landing
			// after it shows as one more write.
			writes = cp.writes.Load()
			if _, wal := s.FileBytes(); wal == 0 || !cp.quiet() || writes == truncatedAt {
				continue
			}
			// The copy runs PASSIVE, beside any commit; the TRUNCATE,
			// which holds commits off, then only truncates.
			modes = append(modes, "TRUNCATE")
		}
		for _, mode := range modes {
			if mode == "TRUNCATE" && (cp.writes.Load() != writes || !cp.quiet()) {
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

// quiet reports whether no commit is under way and none has landed for
// checkpointIdle.
func (cp *walKeeper) quiet() bool {
	return cp.committing.Load() == 0 && time.Since(time.Unix(0, cp.lastWrite.Load())) >= checkpointIdle
}

// freeBytes is the space left on the store's filesystem.
func (s *Store) freeBytes() int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(s.path), &st); err != nil {
		return 1 << 62
	}
	return int64(st.Bavail) * st.Bsize
}

func (cp *walKeeper) close() error {
	close(cp.stop)
	<-cp.done
	return cp.db.Close()
}
