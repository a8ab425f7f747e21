package replica

import (
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// Flags are the replication flags of the owners (sqlfs-exec serve,
// sqlfs-mount). sqlfs-exec restore has its own --replica and
// --replica-credentials: it reads a replica instead of writing one.
type Flags struct {
	url, credentials        string
	syncInterval, retention time.Duration
}

// Register adds --replica, --replica-credentials, --replica-sync-interval
// and --replica-retention to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "replica", "", "replicate continuously to `URL`, s3://BUCKET/PATH?endpoint=http://HOST:PORT&forcePathStyle=true (Litestream's form; a host's workspace ID goes to PATH/ID/workspace.sqlfs); needs litestream on PATH")
	fs.StringVar(&f.credentials, "replica-credentials", "", "read the object store's keys from `FILE` (AWS_ACCESS_KEY_ID=... and AWS_SECRET_ACCESS_KEY=... lines, mode 0600) instead of the environment's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	fs.DurationVar(&f.syncInterval, "replica-sync-interval", DefaultSyncInterval, "ship new commits to the replica at most this often (the replication lag is about this plus the upload)")
	fs.DurationVar(&f.retention, "replica-retention", DefaultRetention, "keep what restores any second of this long a past in the replica")
}

// Enabled says whether --replica was given.
func (f *Flags) Enabled() bool { return f.url != "" }

// Options checks the flags and returns what they configure, with state
// (Litestream's config and socket) in stateDir.
func (f *Flags) Options(stateDir string, log *slog.Logger) (Options, error) {
	u, err := ParseURL(f.url)
	if err != nil {
		return Options{}, fmt.Errorf("--replica: %w", err)
	}
	if f.syncInterval <= 0 || f.retention < time.Minute {
		return Options{}, fmt.Errorf("--replica-sync-interval must be positive and --replica-retention at least 1m, got %s and %s", f.syncInterval, f.retention)
	}
	creds, err := LoadCredentials(f.credentials)
	if err != nil {
		return Options{}, err
	}
	return Options{URL: u, Credentials: creds, SyncInterval: f.syncInterval, Retention: f.retention, StateDir: stateDir, Logger: log}, nil
}

// StoreStateDir is where an owner of the single store at path keeps its
// replication state.
func StoreStateDir(path string) string { return path + ".replica" }

// DirStateDir is where a host serving dir keeps its replication state (a
// name no workspace id can take).
func DirStateDir(dir string) string { return filepath.Join(dir, ".replica") }
