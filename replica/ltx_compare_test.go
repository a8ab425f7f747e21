package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/superfly/ltx"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// replicateFast runs `litestream replicate` on store to u with
// compactions every 1 and 3 s and a snapshot every 4 s, so that a test of
// seconds sees every kind of LTX file. It returns a stop func (SIGTERM,
// wait).
func replicateFast(t *testing.T, bin, store string, o Options) (stop func()) {
	t.Helper()
	cfg := map[string]any{
		"levels":       []map[string]string{{"interval": "1s"}, {"interval": "3s"}},
		"snapshot":     map[string]string{"interval": "4s", "retention": "1h"},
		"l0-retention": "1h",
		"logging":      map[string]any{"level": "warn", "stderr": true},
		"dbs": []map[string]any{{
			"path": store, "monitor-interval": "100ms", "min-checkpoint-page-count": minCheckpointPages, "truncate-page-n": truncatePages,
			"replica": map[string]string{"url": o.URL.String(), "sync-interval": "100ms"},
		}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "litestream.yml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "replicate", "-config", file)
	cmd.Env = append(os.Environ(), o.Credentials.env()...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("litestream: %s", log.String())
		}
	}
	t.Cleanup(stop)
	return stop
}

// litestreamRestore is `litestream restore` of u into a new file: its
// bytes, or what it printed as the error.
func litestreamRestore(t *testing.T, bin string, o Options, args ...string) ([]byte, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ls.db")
	cmd := exec.Command(bin, append(append([]string{"restore", "-o", out}, args...), o.URL.String())...)
	cmd.Env = append(os.Environ(), o.Credentials.env()...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, lastLine(string(b)))
	}
	return os.ReadFile(out)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestLTXRestoreMatchesLitestream replicates random workloads (files
// written, rewritten and deleted over several syncs, compactions and
// snapshots) with litestream, then restores the replica with litestream
// restore and in-process, at every whole second of the workload, at
// random transactions and at the newest: every pair is byte for byte the
// same database, and the newest passes Restore's checks.
func TestLTXRestoreMatchesLitestream(t *testing.T) {
	bin := testenv.Tool(t, "litestream")
	srv := newS3(t)
	seeds := []uint64{1, 2}
	if os.Getenv("SQLFS_TEST_LONG") != "" {
		seeds = append(seeds, 3, 4, 5)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			o := options(t, srv.url(t, fmt.Sprintf("cmp/%d", seed)))
			store := filepath.Join(t.TempDir(), "ws.sqlfs")
			f := openFS(t, store)
			stop := replicateFast(t, bin, store, o)
			r := rand.New(rand.NewPCG(seed, 9))
			start := time.Now()
			var names []string
			for round := range 12 {
				for range 1 + r.IntN(20) {
					switch k := r.IntN(10); {
					case k < 6 || len(names) == 0:
						name := fmt.Sprintf("/f%d-%d", round, r.IntN(1000))
						data := make([]byte, r.IntN(300<<10))
						for i := range data {
							data[i] = byte(r.IntN(8 + k*30))
						}
						if err := f.WriteFile(name, data, 0o644); err != nil {
							t.Fatal(err)
						}
						names = append(names, name)
					default:
						i := r.IntN(len(names))
						_ = f.Remove(names[i])
						names = append(names[:i], names[i+1:]...)
					}
				}
				if err := f.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(300+r.IntN(900)) * time.Millisecond)
			}
			end := time.Now()
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(testenv.Slack(2 * time.Second)) // the last sync, and a compaction
			stop()

			b := newBucket(NewS3Client(o.URL, o.Credentials), o.URL)
			levels, err := b.ltxFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			counts := make([]int, len(levels))
			var newest ltx.TXID
			for i, l := range levels {
				counts[i] = len(l)
				for _, lf := range l {
					newest = max(newest, lf.max)
				}
			}
			t.Logf("LTX files by level: %v, newest transaction %d", counts, newest)
			if counts[1] == 0 || counts[2] == 0 || counts[snapshotLevel] < 2 {
				t.Fatalf("the workload made no compactions or snapshots to restore from: %v", counts)
			}
			compare := func(what string, ours []byte, oerr error, theirs []byte, lerr error) {
				t.Helper()
				switch {
				case oerr != nil || lerr != nil:
					if oerr == nil || lerr == nil {
						t.Errorf("%s: in-process %v, litestream %v", what, oerr, lerr)
					}
				case !bytes.Equal(ours, theirs):
					t.Errorf("%s: %d bytes in-process, %d litestream's, not the same", what, len(ours), len(theirs))
				}
			}
			restore := func(txid ltx.TXID, at time.Time) ([]byte, error) {
				out := filepath.Join(t.TempDir(), "db")
				ro := o
				ro.txid = uint64(txid)
				if err := restoreTo(ctx, ro, out, at); err != nil {
					return nil, err
				}
				return os.ReadFile(out)
			}
			latest, lerr := litestreamRestore(t, bin, o)
			ours, oerr := restore(0, time.Time{})
			compare("newest", ours, oerr, latest, lerr)
			n := 0
			for at := start.Truncate(time.Second); at.Before(end.Add(2 * time.Second)); at = at.Add(time.Second) {
				ours, oerr := restore(0, at)
				theirs, lerr := litestreamRestore(t, bin, o, "-timestamp", at.UTC().Format(time.RFC3339Nano))
				if lerr != nil && strings.Contains(lerr.Error(), "timestamp does not exist") {
					// Outside litestream's bounds: before is too early, after is the newest.
					if errors.Is(oerr, ErrTooEarly) {
						continue
					}
					theirs, lerr = latest, nil
				}
				compare(at.Format(time.RFC3339), ours, oerr, theirs, lerr)
				n++
			}
			for range 4 {
				txid := 1 + ltx.TXID(r.Uint64N(uint64(newest)))
				ours, oerr := restore(txid, time.Time{})
				theirs, lerr := litestreamRestore(t, bin, o, "-txid", txid.String())
				compare(fmt.Sprintf("transaction %d", txid), ours, oerr, theirs, lerr)
			}
			if n < 5 {
				t.Errorf("only %d timestamps compared", n)
			}
			if err := Restore(ctx, o, filepath.Join(t.TempDir(), "ws.sqlfs"), time.Time{}); err != nil {
				t.Error(err)
			}
		})
	}
}
