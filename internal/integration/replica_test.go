//go:build integration

package integration

import (
	"archive/tar"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// long: SQLFS_TEST_LONG=1 (make test-long) runs the long modes.
var long = os.Getenv("SQLFS_TEST_LONG") != ""

// ack is one acknowledged write: file load/N holds N, asked for at sent,
// answered at at.
type ack struct {
	n        int
	sent, at time.Time
}

// writeLoad writes small files load/N, N from first on, through the
// owner's tool API at rate writes a second for d, from enough goroutines
// to keep the pace while each call waits, and returns every acknowledged
// write in order of N. A failed write fails t.
func writeLoad(t *testing.T, c *api.Client, first, rate int, d time.Duration) []ack {
	t.Helper()
	const workers = 16
	period := time.Second / time.Duration(rate)
	total := int(d / period)
	start := time.Now()
	acks := make([]ack, total)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for n := w; n < total; n += workers {
				if wait := time.Until(start.Add(time.Duration(n) * period)); wait > 0 {
					time.Sleep(wait)
				}
				sent := time.Now()
				if err := writeFile(t, c, first+n); err != nil {
					errs <- err
					return
				}
				acks[n] = ack{n: first + n, sent: sent, at: time.Now()}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return acks
}

func writeFile(t *testing.T, c *api.Client, n int) error {
	args, _ := json.Marshal(tools.WriteInput{Path: "load/" + strconv.Itoa(n), Content: strconv.Itoa(n)})
	if _, err := c.Call(t.Context(), "write", args); err != nil {
		return fmt.Errorf("write load/%d: %w", n, err)
	}
	return nil
}

// committed makes the owner commit durably everything it did (a
// checkpoint is a synced commit; a tool's write answers after its own)
// and returns a time after it.
func committed(t *testing.T, c *api.Client) time.Time {
	t.Helper()
	if _, err := c.CreateCheckpoint(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// restored restores url into a new store, checks it (sqlfs-exec check)
// and exports its load/ directory, returning the export's path and how
// long the restore took.
func restored(t *testing.T, s3 *s3test.Server, url string, extra ...string) (string, time.Duration) {
	t.Helper()
	export, took, _ := restoredCPU(t, s3, url, extra...)
	return export, took
}

// restoredCPU is restored, saying also the CPU time (user and system) the
// restore took, litestream's included: on a shared machine the wall time
// is mostly the wait for a CPU, this is what the work itself costs.
func restoredCPU(t *testing.T, s3 *s3test.Server, url string, extra ...string) (export string, took, cpu time.Duration) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "restored.sqlfs")
	args := append(append([]string{"restore", "--replica", url}, extra...), out)
	cmd := command(t, s3, args...)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	took = time.Since(start)
	if err != nil {
		t.Fatalf("sqlfs-exec %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	// wait4's usage of a process includes the children it waited for.
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	run(t, s3, "check", "--store", out)
	export = filepath.Join(dir, "export")
	run(t, s3, "export", "--store", out, ".", export)
	return export, took, cpu
}

// present reports which load/N files the export holds, failing t on one
// whose content is not N.
func present(t *testing.T, export string) map[int]bool {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(export, "load"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			t.Fatalf("restored load/%s: not a file this test wrote", e.Name())
		}
		b, err := os.ReadFile(filepath.Join(export, "load", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != e.Name() {
			t.Errorf("restored load/%s holds %q", e.Name(), b)
		}
		got[n] = true
	}
	return got
}

// TestReplicationLag measures the lag from commit to object store of a
// workspace doing 1,000 small writes a second, exactly for each write: a
// watch lists the replica's level-0 objects every 20 ms, the store is
// rebuilt from them one transaction at a time, and each write's lag is the
// time from its commit (a tool's write answers after it) to the first
// upload that holds it (the p99 target: 1 s). The owner's own lag
// histogram is reported beside it. Then replication must come back to
// zero by itself once the load stops, and a restore hold every
// acknowledged write.
func TestReplicationLag(t *testing.T) {
	s3 := s3test.Start(t, s3test.Options{})
	url := s3.URL("lag/ws")
	o := startOwner(t, s3, filepath.Join(t.TempDir(), "ws.sqlfs"), url, lagFlags()...)
	c := o.client(t)
	before, err := o.scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const poll = 20 * time.Millisecond
	w := watchUploads(t, s3, url, poll)
	d := 20 * time.Second
	if long {
		d = 2 * time.Minute
	}
	start := time.Now()
	acks := writeLoad(t, c, 0, 1000, d)
	took := time.Since(start)
	load := loadAverage()
	after, err := o.scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lag := histogramOf(after, lagHistogram).since(histogramOf(before, lagHistogram))
	p50, samples := lag.quantile(0.5)
	p99, _ := lag.quantile(0.99)
	caught := o.waitSynced(t, committed(t, c), 60*time.Second)
	t.Logf("REPORT replication caught up %.2f s after the load stopped", caught.Seconds())
	first := w.firstHeld(t, len(acks))
	lo, hi := lagBounds(t, acks, first, w)
	var wl []float64
	for _, a := range acks {
		wl = append(wl, a.at.Sub(a.sent).Seconds())
	}
	slices.Sort(wl)
	t.Logf("REPORT replication lag, commit to object store, each of %d writes in %.1f s (%.0f/s, %s), load average %s: %s (lower-upper bound; write latency p99 %.3f s, listing every %v, %d uploads, longest wait between two %v); the owner's histogram: p50 <= %g s, p99 <= %g s (%g samples, bucket upper bounds)",
		len(acks), took.Seconds(), float64(len(acks))/took.Seconds(), strings.Join(lagFlags(), " "), load, formatLag(lo, hi),
		quantileOf(wl, 0.99), poll, len(w.seen), w.longestGap(start, start.Add(took)).Round(time.Millisecond), p50, p99, samples)
	if samples == 0 {
		t.Errorf("no replication lag was recorded during %d writes", len(acks))
	}
	export, _ := restored(t, s3, url)
	got := present(t, export)
	for _, a := range acks {
		if !got[a.n] {
			t.Fatalf("the replica lacks load/%d, acknowledged before the replica reported it held everything (%d of %d present)", a.n, len(got), len(acks))
		}
	}
}

// lagFlags are the owner's flags for TestReplicationLag:
// SQLFS_TEST_LAG_FLAGS, split at spaces, to measure others.
func lagFlags() []string { return strings.Fields(os.Getenv("SQLFS_TEST_LAG_FLAGS")) }

// TestRestoreSize restores a workspace of 100 MB (1 GiB with
// SQLFS_TEST_LONG) of incompressible files from the local S3 server,
// reports the time (targets 2 s and 15 s) and checks every byte.
func TestRestoreSize(t *testing.T) {
	size := 100 << 20
	if long {
		size = 1 << 30
	}
	const fileSize = 1 << 20
	s3 := s3test.Start(t, s3test.Options{})
	url := s3.URL("restore/ws")
	o := startOwner(t, s3, filepath.Join(t.TempDir(), "ws.sqlfs"), url)
	sums := map[string][32]byte{}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		buf := make([]byte, fileSize)
		for i := range size / fileSize {
			rand.Read(buf)
			name := fmt.Sprintf("f%04d", i)
			sums[name] = sha256.Sum256(buf)
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: fileSize, Typeflag: tar.TypeReg}); err != nil {
				pw.CloseWithError(err)
				return
			}
			if _, err := tw.Write(buf); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(tw.Close())
	}()
	c := o.client(t)
	if _, err := c.Import(t.Context(), "data", pr, tools.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	o.waitSynced(t, committed(t, c), 5*time.Minute)
	export, took, cpu := restoredCPU(t, s3, url)
	t.Logf("REPORT restore of %d MiB from the local S3 server: %.2f s (target %s), %.2f s of CPU (restore and check), load average %s",
		size>>20, took.Seconds(), map[bool]string{false: "2 s", true: "15 s"}[long], cpu.Seconds(), loadAverage())
	compareWithLitestream(t, s3, url, took)
	for name, want := range sums {
		b, err := os.ReadFile(filepath.Join(export, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(b) != want {
			t.Fatalf("restored data/%s differs from what was imported", name)
		}
	}
}

// compareWithLitestream times `litestream restore` of url (without a check)
// against sqlfs-exec restore (with its check), alternating, three rounds
// each after the first restore (ours, took): medians and their ratio.
func compareWithLitestream(t *testing.T, s3 *s3test.Server, url string, took time.Duration) {
	bin := testenv.Tool(t, "litestream")
	ours, theirs := []time.Duration{took}, []time.Duration{}
	for round := range 3 {
		out := filepath.Join(t.TempDir(), fmt.Sprintf("ls%d.db", round))
		cmd := exec.CommandContext(t.Context(), bin, "restore", "-o", out, url)
		cmd.Env = s3.Env(os.Environ())
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("litestream restore: %v\n%s", err, b)
		}
		theirs = append(theirs, time.Since(start))
		os.Remove(out)
		if round < 2 {
			_, d, _ := restoredCPU(t, s3, url)
			ours = append(ours, d)
		}
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mo, mt := med(ours), med(theirs)
	t.Logf("REPORT side by side, alternating: sqlfs-exec restore (with check) %v, median %.2f s; litestream restore (no check) %v, median %.2f s; ratio %.2f; load average %s",
		ours, mo.Seconds(), theirs, mt.Seconds(), mo.Seconds()/mt.Seconds(), loadAverage())
}

// TestObjectStoreOutage stops the S3 server for 60 s (10 s with -short)
// while the workspace keeps writing: writes keep succeeding locally, the
// replica's sync age shows the outage, and once the server is back the
// replica catches up by itself and holds every write.
func TestObjectStoreOutage(t *testing.T) {
	outage := 60 * time.Second
	if testing.Short() {
		outage = 10 * time.Second
	}
	s3 := s3test.Start(t, s3test.Options{})
	url := s3.URL("outage/ws")
	o := startOwner(t, s3, filepath.Join(t.TempDir(), "ws.sqlfs"), url)
	c := o.client(t)
	var acks []ack
	writeBatch := func(d time.Duration) { acks = append(acks, writeLoad(t, c, len(acks), 50, d)...) }
	writeBatch(3 * time.Second)
	o.waitSynced(t, committed(t, c), time.Minute)
	s3.Stop(t)
	down := time.Now()
	writeBatch(outage)
	age := o.metric(t, syncAge)
	t.Logf("REPORT after %.0f s of outage the replica's last sync is %.1f s old (load average %s)", time.Since(down).Seconds(), age, loadAverage())
	if age < outage.Seconds()/2 {
		t.Errorf("sync age %.1f s after a %v outage: the metric does not show it", age, outage)
	}
	s3.Restart(t)
	up := time.Now()
	writeBatch(3 * time.Second)
	o.waitSynced(t, committed(t, c), 3*time.Minute)
	t.Logf("REPORT replication caught up with every write %.1f s after the S3 server came back (3 s of them writing)", time.Since(up).Seconds())
	export, _ := restored(t, s3, url)
	got := present(t, export)
	for _, a := range acks {
		if !got[a.n] {
			t.Fatalf("after the outage the replica lacks load/%d (%d of %d present)", a.n, len(got), len(acks))
		}
	}
}

// TestKillAfterSyncedWrite writes files through the FUSE mount with fsync,
// SIGKILLs the owner (and its litestream) right after an acknowledged
// write, throws its disk away and restores: every write acknowledged
// before the last moment the replica said it held everything is there,
// the restored files are a prefix of the writes (a consistent state), and
// the test reports how much was lost, against the lag the owner showed.
func TestKillAfterSyncedWrite(t *testing.T) {
	_, err := os.Stat("/dev/fuse")
	testenv.Require(t, "this test mounts a workspace (/dev/fuse)", err)
	s3 := s3test.Start(t, s3test.Options{})
	url := s3.URL("kill/ws")
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	mnt := filepath.Join(dir, "mnt")
	for _, d := range []string{disk, mnt} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	o := startOwner(t, s3, filepath.Join(disk, "ws.sqlfs"), url, "--mount", mnt)
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	if err := os.Mkdir(filepath.Join(mnt, "load"), 0o755); err != nil {
		t.Fatal(err)
	}
	var acks []ack
	writeSynced := func(until time.Time) {
		for time.Now().Before(until) {
			n := len(acks)
			f, err := os.Create(filepath.Join(mnt, "load", strconv.Itoa(n)))
			if err == nil {
				_, err = f.WriteString(strconv.Itoa(n))
			}
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatalf("synced write %d: %v", n, err)
			}
			acks = append(acks, ack{n: n, at: time.Now()})
		}
	}
	writeSynced(time.Now().Add(5 * time.Second))
	asked := time.Now()
	age := o.metric(t, syncAge)
	held := asked.Add(-time.Duration(age * float64(time.Second)))
	writeSynced(time.Now().Add(500 * time.Millisecond))
	killed := time.Now()
	o.Kill()
	exec.Command("umount", "-l", mnt).Run()
	if err := os.RemoveAll(disk); err != nil {
		t.Fatal(err)
	}
	export, _ := restored(t, s3, url)
	got := present(t, export)
	kept := 0
	for kept < len(acks) && got[kept] {
		kept++
	}
	if kept != len(got) {
		t.Errorf("the restore holds %d writes but not the first %d only: not a state the workspace was in", len(got), kept)
	}
	for _, a := range acks {
		if !got[a.n] && !a.at.After(held) {
			t.Errorf("load/%d, acknowledged %v before the kill and %v before the replica reported holding everything, was lost",
				a.n, killed.Sub(a.at).Round(time.Millisecond), held.Sub(a.at).Round(time.Millisecond))
		}
	}
	lostSpan := time.Duration(0)
	if kept < len(acks) {
		lostSpan = killed.Sub(acks[kept].at)
	}
	t.Logf("REPORT SIGKILL after %d synced writes: %d lost, the last %v before the kill (the replica's sync age was %.2f s %v before the kill; load average %s)",
		len(acks), len(acks)-kept, lostSpan.Round(time.Millisecond), age, killed.Sub(asked).Round(time.Millisecond), loadAverage())
}
