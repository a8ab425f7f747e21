package replica

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/metrics"
)

// waitStaged waits for the restore Prepare started for id to end.
func waitStaged(t *testing.T, o *Opener, id string) *stage {
	t.Helper()
	o.mu.Lock()
	s := o.stages[id]
	o.mu.Unlock()
	if s == nil {
		t.Fatalf("no staged restore of %s", id)
	}
	select {
	case <-s.done:
	case <-time.After(testenv.Slack(time.Minute)):
		t.Fatalf("the staged restore of %s did not end", id)
	}
	if s.err != nil {
		t.Fatalf("staged restore of %s: %v", id, s.err)
	}
	return s
}

// replicatedGen1 are the options of a host replica holding workspace w's
// generation 1, replicated by litestream.
func replicatedGen1(t *testing.T) Options {
	t.Helper()
	ctx := context.Background()
	base := newS3(t).url(t, "host")
	o := options(t, WorkspaceURL(base, "w", 1))
	store := filepath.Join(t.TempDir(), "w.sqlfs")
	writeStore(t, openDir(t), "w", store, "f.txt", "replicated")
	sup := startStore(t, store, o)
	if err := sup.Sync(ctx, store); err != nil {
		t.Fatal(err)
	}
	if err := sup.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return Options{URL: base, Credentials: testKeys, Logger: o.Logger}
}

// TestStagedCopyOutlivesTheNextStage: a Prepare arriving after an open
// took a staged copy (takeStage) but before it linked it into place
// stages anew. Each staged copy has a name of its own: the new stage
// neither removes nor replaces the copy taken, and the open's removal of
// its copy leaves the new stage's. Before, both had the one name
// .restore/ID.staged.sqlfs: the new stage removed the taken copy (its
// open then failed, or linked the new stage's file) and the open's
// removal took the new stage's.
func TestStagedCopyOutlivesTheNextStage(t *testing.T) {
	ctx := context.Background()
	op := &Opener{Dir: openDir(t), Options: replicatedGen1(t)}
	until := time.Now().Add(testenv.Slack(time.Minute))
	op.Prepare("w", 1, until)
	waitStaged(t, op, "w")
	taken, from, err := op.takeStage(ctx, "w", 2)
	if err != nil || taken == "" || from != 1 {
		t.Fatalf("taking the staged copy: %q from %d, %v", taken, from, err)
	}
	before, err := os.Stat(taken)
	if err != nil {
		t.Fatal(err)
	}
	op.Prepare("w", 1, until)
	next := waitStaged(t, op, "w")
	after, err := os.Stat(taken)
	if err != nil {
		t.Fatalf("the copy taken, after the next stage: %v", err)
	}
	if !os.SameFile(before, after) {
		t.Fatalf("the next stage replaced the copy taken (%s)", taken)
	}
	if err := os.Remove(taken); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(next.file); err != nil {
		t.Fatalf("the next stage's copy, after the open removed its own: %v", err)
	}
}

// TestNothingRestorableIsNoNewWorkspace: a host without a fleet opening a
// workspace it has no store of, whose restore finds nothing restorable
// while the replica lists objects of it, refuses the open and names what
// it found, instead of starting the workspace empty over whatever the
// replica holds. Only a workspace with no trace in the replica starts new.
func TestNothingRestorableIsNoNewWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string // objects under the host's replica
		want []string // in the error; none: opens new
	}{
		{name: "no trace", keys: []string{"other/workspace.sqlfs/0000/0000000000000001-0000000000000001.ltx"}},
		{name: "a generation without LTX files", keys: []string{"w/gen-3/workspace.sqlfs/0000/notes"}, want: []string{"gen-3"}},
		{name: "the store's path without LTX files", keys: []string{"w/workspace.sqlfs/0001/x.ltx"}, want: []string{"workspace.sqlfs"}},
		{name: "an object beside the generations", keys: []string{"w/gen-2/workspace.sqlfs/0000/junk", "w/README"}, want: []string{"gen-2", "README"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := newS3(t)
			base := srv.url(t, "host")
			putObjects(t, base, testKeys, tc.keys)
			d := openDir(t)
			if err := d.Create("w", nil); err != nil {
				t.Fatal(err)
			}
			op := &Opener{Dir: d, Options: Options{URL: base, Credentials: testKeys, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}}
			ws, err := op.Open(ctx, "w")
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("open of a workspace the replica has no trace of: %v", err)
				}
				ws.Close(ctx)
				return
			}
			if err == nil {
				ws.Close(ctx)
			}
			wantNotRestorable(t, err, tc.want, d.StorePath("w"))
		})
	}
}

// putObjects puts an object "x" at each of keys under base.
func putObjects(t *testing.T, base URL, keys Credentials, names []string) {
	t.Helper()
	client := NewS3Client(base, keys).(*s3.Client)
	b := newBucket(client, base)
	for _, k := range names {
		if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &b.name, Key: aws.String(b.prefix + k), Body: bytes.NewReader([]byte("x"))}); err != nil {
			t.Fatal(err)
		}
	}
}

// wantNotRestorable checks an open refused with ErrNotRestorable, naming
// each of want, that left no store at store.
func wantNotRestorable(t *testing.T, err error, want []string, store string) {
	t.Helper()
	if err == nil {
		t.Fatal("the workspace started empty over a replica that lists it")
	}
	if !errors.Is(err, ErrNotRestorable) {
		t.Fatalf("open: %v; want %v", err, ErrNotRestorable)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error %q does not name %s", err, w)
		}
	}
	if _, err := os.Stat(store); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a store after the refused open: %v", err)
	}
}

// TestTakenStageOutlivesItsDeadline: an open that took a staged restore
// still waiting for its turn (the restores behind a dead holder's other
// workspaces) gets that restore when its turn comes, even after the
// stage's deadline (a copy nobody takes by then is deleted). Before, the
// deadline cancelled the restore the open waited for: counted failed (16
// of 77 in a TestFailover run whose restores ran up to 2 min past the
// kill), and the open queued again, behind every restore asked since.
func TestTakenStageOutlivesItsDeadline(t *testing.T) {
	ctx := context.Background()
	op := &Opener{Dir: openDir(t), Options: replicatedGen1(t), MaxRestores: 1}
	op.init()
	release, err := op.queue.wait(ctx, newTurn(true)) // the one turn, busy
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(testenv.Slack(time.Second))
	before := testutil.ToFloat64(metrics.ReplicaStaged.WithLabelValues("used"))
	op.Prepare("w", 1, until)
	type taken struct {
		file string
		from int64
		err  error
	}
	got := make(chan taken, 1)
	go func() {
		file, from, err := op.takeStage(ctx, "w", 2)
		got <- taken{file, from, err}
	}()
	for {
		op.mu.Lock()
		left := op.stages["w"] != nil
		op.mu.Unlock()
		if !left {
			break
		}
		if time.Now().After(until) {
			release()
			t.Fatal("the open did not take the stage before its deadline")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Until(until) + 200*time.Millisecond)
	release()
	var tk taken
	select {
	case tk = <-got:
	case <-time.After(testenv.Slack(time.Minute)):
		t.Fatal("the open still waits for the staged restore")
	}
	if tk.err != nil || tk.file == "" || tk.from != 1 {
		t.Fatalf("the open took %q from generation %d, %v; want the staged copy of generation 1", tk.file, tk.from, tk.err)
	}
	defer os.Remove(tk.file)
	if n := testutil.ToFloat64(metrics.ReplicaStaged.WithLabelValues("used")) - before; n != 1 {
		t.Errorf("staged restores used: %v; want 1", n)
	}
}
