package sqlstore_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestWALTruncatedOnlyWhenQuiet: while commits keep coming, the WAL file is
// never truncated (a TRUNCATE checkpoint holds the writer off while it
// copies and syncs the whole WAL); once they stop for the idle time, it is,
// however small the WAL was.
func TestWALTruncatedOnlyWhenQuiet(t *testing.T) {
	const idle = 100 * time.Millisecond
	defer sqlstore.SetCheckpointTiming(idle, 64<<10)()
	st, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// Busy: a commit of 64 KiB (a checkpoint nudge each) every 10 ms for
	// ten idle periods. PASSIVE checkpoints and WAL resets never shrink
	// the file; a truncation does.
	// On a loaded machine a commit (its fsync) or this goroutine's sleep
	// may take past the idle time: the store was quiet then, and a
	// truncation is right; such gaps are left out, and too many of them
	// make the run say nothing.
	data := bytes.Repeat([]byte("x"), 64<<10)
	var last int64
	var landed time.Time
	quietGaps := 0
	for i := range uint64(100) {
		if err := st.Commit(t.Context(), fileBatch(100+i%4, data)); err != nil {
			t.Fatal(err)
		}
		gap := time.Since(landed) // the keeper's quiet: no commit landing
		landed = time.Now()
		_, wal := st.FileBytes()
		switch {
		case i > 0 && gap >= idle/2:
			quietGaps++
		case wal < last:
			t.Fatalf("commit %d: WAL shrank from %d to %d bytes while commits kept coming (%v after the last)", i, last, wal, gap)
		}
		last = wal
		time.Sleep(idle / 10)
	}
	if quietGaps > 50 {
		t.Fatalf("%d of 100 commits landed over %v after the previous one: the machine is too slow for this test to show anything", quietGaps, idle/2)
	}

	// Quiet: truncated within a few idle periods, and again after one
	// small commit.
	for round, batch := range []*sqlstore.Batch{nil, fileBatch(200, []byte("small"))} {
		if batch != nil {
			if err := st.Commit(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(20 * idle)
		for {
			if _, wal := st.FileBytes(); wal == 0 {
				break
			}
			if time.Now().After(deadline) {
				_, wal := st.FileBytes()
				t.Fatalf("round %d: WAL still %d bytes after %v without commits", round, wal, 20*idle)
			}
			time.Sleep(idle / 10)
		}
	}
}

// A commit under way is not quiet, however long it takes: the keeper used
// to see only when the last commit landed, so a TRUNCATE begun during a
// slow commit waited for it and truncated the WAL the moment it landed
// (CI, at load 19: "WAL shrank ... while commits kept coming").
func TestWALNotTruncatedDuringASlowCommit(t *testing.T) {
	const idle = 200 * time.Millisecond
	defer sqlstore.SetCheckpointTiming(idle, 64<<20)()
	st, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for attempt := 0; ; attempt++ {
		if err := st.Commit(t.Context(), fileBatch(100, []byte("first"))); err != nil {
			t.Fatal(err)
		}
		err := st.CommitDuring(t.Context(), fileBatch(101, []byte("slow")), func() { time.Sleep(4 * idle) })
		if err != nil {
			t.Fatal(err)
		}
		landed := time.Now()
		time.Sleep(idle / 4)
		_, wal := st.FileBytes()
		if time.Since(landed) >= idle {
			if attempt == 5 {
				t.Fatal("the machine is too slow for this test to show anything")
			}
			continue // a truncation would have been right by now
		}
		if wal == 0 {
			t.Fatalf("WAL truncated %v after a slow commit landed", time.Since(landed))
		}
		return
	}
}

// TestCheckpointsFollowWALGrowth: a checkpoint runs each time the commits
// since the last one filled the threshold, not at every commit once the
// WAL file has reached it (SQLite reuses a checkpointed WAL from its start
// without shrinking it, so the file's size says nothing of what is left to
// copy; a checkpoint after every commit doubled the fsyncs of a synced
// workload).
func TestCheckpointsFollowWALGrowth(t *testing.T) {
	const threshold = 1 << 20
	defer sqlstore.SetCheckpointTiming(time.Hour, threshold)()
	st, err := sqlstore.Open(t.Context(), filepath.Join(t.TempDir(), "ws.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// Each commit writes a 64 KiB chunk and its rows, some 230 KiB of WAL
	// in 32 KiB pages: a checkpoint every ~5 commits. Waiting for a
	// checkpoint the commit started to finish before the next commit, as
	// between synced commits, lets SQLite start the WAL over (a fixed pause
	// did not on a loaded machine, where the keeper then ran one checkpoint
	// per commit: 170 for 300 in a CI run beside other builds).
	data := bytes.Repeat([]byte("x"), 64<<10)
	const commits = 300
	for i := range uint64(commits) {
		if err := st.Commit(t.Context(), fileBatch(100+i, data)); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if _, pending := st.WALBytes(); pending < threshold {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	_, walFile := st.FileBytes()
	runs := st.WALCheckpoints()
	used, pending := st.WALBytes()
	t.Logf("%d checkpoints for %d commits, WAL file %d bytes, %d used, %d pending", runs, commits, walFile, used, pending)
	if runs == 0 || runs > commits/2 {
		t.Errorf("%d checkpoints for %d commits with a threshold of %d bytes, want 1 to %d", runs, commits, threshold, commits/2)
	}
}
