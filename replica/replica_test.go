package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url, err string // err: "" when valid, else a part of the message
	}{
		{"s3://bucket/ws?endpoint=http://127.0.0.1:9000&forcePathStyle=true", ""},
		{"s3://bucket/a/b", ""},
		{"s3://bucket/a?region=eu-west-1", ""},
		{"file:///tmp/x", "scheme must be s3"},
		{"bucket/path", "scheme must be s3"},
		{"s3:///path", "no bucket"},
		{"s3://bucket", "no path"},
		{"s3://bucket/", "no path"},
		{"s3://key:secret@bucket/p", "credentials do not belong"},
		{"s3://bucket/p?endpoint=127.0.0.1:9000", "endpoint must be"},
		{"s3://bucket/p?endpoint=ftp://h", "endpoint must be"},
		{"s3://bucket/p?forcePathStyle=yes", "forcePathStyle must be true or false"},
		{"s3://bucket/p?sync=1", "unknown parameter sync"},
		{"s3://bucket/a/../b", ". or .. segments"},
		{"s3://bucket/p#x", "fragment"},
		{"s3://bucket/%zz", "invalid URL escape"},
	} {
		u, err := ParseURL(tc.url)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseURL(%q): %v", tc.url, err)
		case tc.err == "" && u.String() != tc.url:
			t.Errorf("ParseURL(%q) = %q", tc.url, u)
		case tc.err != "" && (err == nil || !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseURL(%q) = %v, want ErrBadURL saying %q", tc.url, err, tc.err)
		}
	}
	u, _ := ParseURL("s3://b/host?endpoint=http://127.0.0.1:1&forcePathStyle=true")
	if got, want := WorkspaceURL(u, "ws-1", 0).String(), "s3://b/host/ws-1/workspace.sqlfs?endpoint=http://127.0.0.1:1&forcePathStyle=true"; got != want {
		t.Errorf("WorkspaceURL = %s, want %s", got, want)
	}
}

func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := "# keys\nAWS_ACCESS_KEY_ID=AK\nexport AWS_SECRET_ACCESS_KEY = SK \n\n"
	for _, tc := range []struct {
		name, file, err string
	}{
		{"0600", write("a", good, 0o600), ""},
		{"0400", write("b", good, 0o400), ""},
		{"group readable", write("c", good, 0o640), "mode 0640"},
		{"world readable", write("d", good, 0o644), "mode 0644"},
		{"missing secret", write("e", "AWS_ACCESS_KEY_ID=AK\n", 0o600), "must set both"},
		{"unknown key", write("f", good+"AWS_SESSION=x\n", 0o600), "unknown key AWS_SESSION"},
		{"not KEY=VALUE", write("g", "AWS_ACCESS_KEY_ID\n", 0o600), ":1: want KEY=VALUE"},
		{"missing file", filepath.Join(dir, "none"), "no such file"},
		{"directory", dir, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadCredentials(tc.file)
			if tc.err == "" {
				if err != nil || c != (Credentials{"AK", "SK"}) {
					t.Fatalf("LoadCredentials = %+v, %v", c, err)
				}
				return
			}
			if !errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("LoadCredentials = %v, want ErrCredentials saying %q", err, tc.err)
			}
			if strings.Contains(err.Error(), "SK") {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "EK")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		if _, err := LoadCredentials(""); !errors.Is(err, ErrCredentials) {
			t.Fatalf("without a secret: %v", err)
		}
		t.Setenv("AWS_SECRET_ACCESS_KEY", "ES")
		if c, err := LoadCredentials(""); err != nil || c != (Credentials{"EK", "ES"}) {
			t.Fatalf("LoadCredentials(\"\") = %+v, %v", c, err)
		}
	})
}

func TestParseTimestamp(t *testing.T) {
	if ts, err := ParseTimestamp("2026-01-02T03:04:05Z"); err != nil || !ts.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("ParseTimestamp = %v, %v", ts, err)
	}
	for _, s := range []string{"yesterday", "2026-01-02 03:04:05", "2026-01-02", time.Now().Add(time.Hour).Format(time.RFC3339)} {
		if _, err := ParseTimestamp(s); !errors.Is(err, ErrBadTimestamp) {
			t.Errorf("ParseTimestamp(%q) = %v, want ErrBadTimestamp", s, err)
		}
	}
}

// writeTree makes a small tree of every kind of file in f and commits it.
func writeTree(t *testing.T, f *sfs.FS, tag string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.MkdirAll("src/"+tag, 0o755))
	for i := range 20 {
		must(f.WriteFile(fmt.Sprintf("src/%s/f%02d.txt", tag, i), []byte(strings.Repeat(tag, i*100+1)), 0o644))
	}
	big := make([]byte, 1<<20+123)
	for i := range big {
		big[i] = byte(i*7 + len(tag))
	}
	must(f.WriteFile("big-"+tag, big, 0o600))
	must(f.Symlink("src/"+tag+"/f01.txt", "link-"+tag))
	must(f.Sync(context.Background()))
}

// replicating is a store open as a replicating owner has it, replicated
// to prefix p of a fresh S3.
func replicating(t *testing.T, p string) (fakeS3, Options, string, *sfs.FS, *Supervisor) {
	t.Helper()
	s3 := newS3(t)
	o := options(t, s3.url(t, p))
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	f := openFS(t, store)
	return s3, o, store, f, startStore(t, store, o)
}

func TestReplicateThenRestore(t *testing.T) {
	ctx := context.Background()
	s3, o, store, f, sup := replicating(t, "one")
	writeTree(t, f, "a")
	if err := f.Remove("src/a/f03.txt"); err != nil {
		t.Fatal(err)
	}
	writeTree(t, f, "b")
	if err := sup.Sync(ctx, store); err != nil {
		t.Fatal(err)
	}
	want := tree(t, f)

	out := filepath.Join(t.TempDir(), "restored.sqlfs")
	if err := Restore(ctx, o, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	g := openFS(t, out)
	if got := tree(t, g); !maps.Equal(got, want) {
		t.Fatalf("restored tree differs:\n got %v\nwant %v", got, want)
	}
	if err := Restore(ctx, o, out, time.Time{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("restore over an existing store: %v, want ErrExist", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*restoring*")); len(ents) > 0 {
		t.Fatalf("restore left %v", ents)
	}

	empty := o
	empty.URL = s3.url(t, "nothing-here")
	if err := Restore(ctx, empty, filepath.Join(t.TempDir(), "x.sqlfs"), time.Time{}); !errors.Is(err, ErrNoReplica) {
		t.Fatalf("restore of an empty replica: %v, want ErrNoReplica", err)
	}
	if err := Restore(ctx, o, filepath.Join(t.TempDir(), "x.sqlfs"), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrTooEarly) {
		t.Fatalf("restore to before the replica began: %v, want ErrTooEarly", err)
	}
}

// TestRestorePointInTime restores each second between rounds of writes
// and finds exactly the rounds committed before it, in the tree and in
// the audit trail.
func TestRestorePointInTime(t *testing.T) {
	ctx := context.Background()
	_, o, store, f, sup := replicating(t, "pitr")
	var marks []time.Time
	var trees []map[string]string
	for round := range 3 {
		writeTree(t, f, fmt.Sprint("r", round))
		if err := sup.Sync(ctx, store); err != nil {
			t.Fatal(err)
		}
		trees = append(trees, tree(t, f))
		// The next whole second, with the next round a while after it.
		mark := time.Now().Truncate(time.Second).Add(time.Second)
		time.Sleep(time.Until(mark) + 200*time.Millisecond)
		marks = append(marks, mark)
	}
	all, err := f.Store().Audit(ctx, sqlstore.AuditFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	for i, mark := range marks {
		out := filepath.Join(t.TempDir(), "at.sqlfs")
		if err := Restore(ctx, o, out, mark); err != nil {
			t.Fatalf("restore at %s: %v", mark, err)
		}
		g := openFS(t, out)
		if got := tree(t, g); !maps.Equal(got, trees[i]) {
			t.Fatalf("restore at %s (after round %d): tree differs:\n got %v\nwant %v", mark, i, got, trees[i])
		}
		got, err := g.Store().Audit(ctx, sqlstore.AuditFilter{Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		var want []sqlstore.AuditEvent
		for _, e := range all {
			if e.Time.Before(mark) {
				want = append(want, e)
			}
		}
		if len(got) != len(want) || len(want) == 0 || got[len(got)-1] != want[len(want)-1] {
			t.Fatalf("restore at %s: %d audit events, the original has %d before then", mark, len(got), len(want))
		}
		g.Close()
	}
}

func TestSupervisorRestartsKilledLitestream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, o, store, f, sup := replicating(t, "kill")
	writeTree(t, f, "before")
	pid, err := sup.pid(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	writeTree(t, f, "after")
	if err := sup.Sync(ctx, store); err != nil {
		t.Fatal(err)
	}
	if again, err := sup.pid(ctx); err != nil || again == pid {
		t.Fatalf("litestream after the kill: pid %d (was %d), %v", again, pid, err)
	}
	want := tree(t, f)
	out := filepath.Join(t.TempDir(), "restored.sqlfs")
	if err := Restore(ctx, o, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, openFS(t, out)); !maps.Equal(got, want) {
		t.Fatalf("restored tree differs after litestream was killed:\n got %v\nwant %v", got, want)
	}
}

func TestStartRefusals(t *testing.T) {
	ctx := context.Background()
	s3 := newS3(t)
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	openFS(t, store)
	o := options(t, s3.url(t, "x"))
	o.Binary = filepath.Join(t.TempDir(), "no-litestream")
	if _, err := StartStore(ctx, store, o); !errors.Is(err, ErrNoLitestream) {
		t.Errorf("without litestream: %v", err)
	}
	o = options(t, URL{})
	if _, err := StartStore(ctx, store, o); !errors.Is(err, ErrBadURL) {
		t.Errorf("without a URL: %v", err)
	}
	o = options(t, s3.url(t, "x"))
	o.StateDir = filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if _, err := StartStore(ctx, store, o); err == nil || !strings.Contains(err.Error(), "100 a Unix socket allows") {
		t.Errorf("with a long state dir: %v", err)
	}
	o = options(t, s3.url(t, "x"))
	if _, err := StartStore(ctx, filepath.Join(t.TempDir(), "missing.sqlfs"), o); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing store: %v", err)
	}
	// The config holds no keys, and only its owner can read it.
	sup := startStore(t, store, o)
	b, err := os.ReadFile(sup.config)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), testKeys.SecretAccessKey) {
		t.Error("the litestream config holds the secret key")
	}
	// Litestream's default busy timeout (1 s) stalled the replica for a
	// second at each checkpoint that missed the store's write lock.
	var cfg struct {
		DBs []struct {
			BusyTimeout string `json:"busy-timeout"`
		} `json:"dbs"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.DBs) != 1 || cfg.DBs[0].BusyTimeout != "100ms" {
		t.Errorf("litestream config dbs %+v, want one with busy-timeout 100ms", cfg.DBs)
	}
	for p, want := range map[string]os.FileMode{sup.config: 0o600, o.StateDir: 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, want)
		}
	}
}
