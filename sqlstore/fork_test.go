package sqlstore_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestForkWhileCommitting forks a store while commits keep coming and the
// WAL keeper copies the WAL into the database, truncates it and SQLite
// starts it over (a pause now and then lets it): every fork opens, passes
// Check, and holds one commit's state, at least every commit that returned
// before the fork began: files f100 up to some f(100+k), none missing,
// each with its own data.
func TestForkWhileCommitting(t *testing.T) {
	// Restored after the store closes (cleanups run last first): its WAL
	// keeper reads the timing until then.
	t.Cleanup(sqlstore.SetCheckpointTiming(20*time.Millisecond, 256<<10))
	st, _ := newStore(t)
	var committed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := st.Commit(t.Context(), fileBatch(100+i, bytes.Repeat([]byte{byte(i)}, 16<<10))); err != nil {
				t.Error(err)
				return
			}
			committed.Add(1)
			if i%16 == 15 {
				time.Sleep(30 * time.Millisecond) // quiet: the keeper truncates
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	dir := t.TempDir()
	for round := range 20 {
		before := committed.Load()
		dst := filepath.Join(dir, fmt.Sprintf("fork%d.db", round))
		if err := st.Fork(t.Context(), sqlstore.Live, dst); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		fork, err := sqlstore.Open(t.Context(), dst, sqlstore.Options{})
		if err != nil {
			t.Fatalf("round %d: open the fork: %v", round, err)
		}
		problems, err := fork.Check(t.Context())
		fork.Close()
		if err != nil || len(problems) > 0 {
			t.Fatalf("round %d: fork check: %v\n%s", round, err, sqlstore.FormatProblems(problems))
		}
		db, err := sql.Open("sqlite3", "file:"+dst+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var n, lo, hi int64
		var bad int
		err = db.QueryRow(`SELECT count(*), coalesce(min(ino), 0), coalesce(max(ino), 0) FROM dentries WHERE parent = 1`).Scan(&n, &lo, &hi)
		if err == nil {
			err = db.QueryRow(`SELECT count(*) FROM chunks WHERE hex(substr(data, 1, 1)) != printf('%02X', ((key >> 24) - 100) & 255)`).Scan(&bad)
		}
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n < before || n > 0 && (lo != 100 || hi != 100+n-1) || bad != 0 {
			t.Fatalf("round %d: the fork holds %d files (inodes %d to %d, %d chunks with another's data); %d had been committed before it began",
				round, n, lo, hi, bad, before)
		}
	}
	t.Logf("%d commits, %d WAL checkpoints", committed.Load(), st.WALCheckpoints())
}

// TestReadsOfADeletedCheckpoint: a diff, a tree read or a fork of a
// checkpoint's generation that is deleted and collected between the
// caller resolving it and the read (a delete racing a fork or restore)
// fails with ErrCheckpointNotFound instead of reading what is left of it.
func TestReadsOfADeletedCheckpoint(t *testing.T) {
	ctx := t.Context()
	st, _ := newStore(t)
	commitFile(t, st, 2, "old")
	ci, err := st.CommitCheckpoint(ctx, &sqlstore.Batch{}, sqlstore.NewCheckpoint{})
	if err != nil {
		t.Fatal(err)
	}
	commitFile(t, st, 2, "new")
	if _, err := st.CommitDeleteCheckpoint(ctx, &sqlstore.Batch{}, fmt.Sprint(ci.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = st.Diff(ctx, ci.Gen, sqlstore.Live)
	if !errors.Is(err, sqlstore.ErrCheckpointNotFound) {
		t.Errorf("diff from a deleted generation: %v, want ErrCheckpointNotFound", err)
	}
	_, err = st.TreesAt(ctx, ci.Gen, []string{"/f2"})
	if !errors.Is(err, sqlstore.ErrCheckpointNotFound) {
		t.Errorf("tree of a deleted generation: %v, want ErrCheckpointNotFound", err)
	}
	dst := filepath.Join(t.TempDir(), "fork.db")
	err = st.Fork(ctx, ci.Gen, dst)
	if !errors.Is(err, sqlstore.ErrCheckpointNotFound) {
		t.Errorf("fork of a deleted generation: %v, want ErrCheckpointNotFound", err)
	}
	if _, serr := os.Stat(dst); serr == nil {
		t.Errorf("a failed fork left %s", dst)
	}
}
