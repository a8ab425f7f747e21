package replica

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/internal/s3test"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

func TestMain(m *testing.M) {
	s3test.Isolate()
	os.Exit(m.Run())
}

var testKeys = Credentials{AccessKeyID: s3test.FakeAccessKey, SecretAccessKey: s3test.FakeSecretKey}

type fakeS3 struct{ *s3test.Server }

func newS3(t *testing.T) fakeS3 { return fakeS3{s3test.StartFake(t, s3test.Options{})} }

func (f fakeS3) url(t *testing.T, p string) URL {
	t.Helper()
	u, err := ParseURL(f.URL(p))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// options replicate to u with the test keys, litestream from make tools,
// and a short sync interval.
func options(t *testing.T, u URL) Options {
	t.Helper()
	return Options{
		URL:            u,
		Credentials:    testKeys,
		SyncInterval:   100 * time.Millisecond,
		StateDir:       t.TempDir(),
		Binary:         testenv.Tool(t, "litestream"),
		Logger:         slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slogLevel()})),
		RestartBackoff: 100 * time.Millisecond,
	}
}

// testWriter logs through t (and nowhere once the test ended).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// startOpener is a host's Opener over a fresh Dir replicating to a fake
// S3 (its litestream supervised over the whole Dir), with its options;
// everything stops at the end of t.
func startOpener(t *testing.T) (*Opener, Options) {
	t.Helper()
	ctx := context.Background()
	s3 := newS3(t)
	o := options(t, s3.url(t, "host"))
	d := openDir(t)
	sup, err := StartDir(ctx, d.Root(), host.StoreName, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(ctx) })
	return &Opener{Dir: d, Supervisor: sup, Options: o}, o
}

func startStore(t *testing.T, store string, o Options) *Supervisor {
	t.Helper()
	s, err := StartStore(context.Background(), store, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// openFS opens a store the way an owner that replicates does.
func openFS(t *testing.T, store string) *sfs.FS {
	t.Helper()
	f, err := sfs.Open(context.Background(), store, sfs.Options{ExternalWALCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// tree is every path of f with its type, mode and a hash of its data.
func tree(t *testing.T, f *sfs.FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := f.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name)
			a, err := f.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			desc := os.FileMode(a.Mode).String()
			switch {
			case a.Mode&0o170000 == 0o040000:
				walk(p)
			case a.Mode&0o170000 == 0o120000:
				l, err := f.Readlink(p)
				if err != nil {
					t.Fatal(err)
				}
				desc += " -> " + l
			default:
				b, err := f.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				h := sha256.Sum256(b)
				desc += " " + hex.EncodeToString(h[:8])
			}
			out[p] = desc
		}
	}
	walk("/")
	return out
}

// slogLevel is the tests' log level: SQLFS_TEST_LOG=debug shows litestream's.
func slogLevel() slog.Level {
	var l slog.Level = slog.LevelWarn
	if v := os.Getenv("SQLFS_TEST_LOG"); v != "" {
		_ = l.UnmarshalText([]byte(v))
	}
	return l
}
