package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/replica"
)

func init() {
	register("restore", "restore a store from its replica in object storage, to a point in time", runRestore)
	register("replica", "replica status: how far behind its replica each store is", runReplica)
}

const restoreUsage = `usage: sqlfs-exec restore --replica URL [--timestamp T] [--workspace ID] OUT

Restores the store the replica URL holds (what an owner started with
--replica URL shipped) into the new store OUT, as it was at T (RFC 3339, to
the second, within the owner's --replica-retention; default: the latest),
and checks it (SQLite's integrity and sqlfs's invariants) before giving it
the name OUT. With --workspace ID, URL is a host's replica (serve
--workspaces DIR --replica URL) and ID picks its workspace, from the
newest lease generation holding it at T when a fleet served it. OUT must not
exist. Keys come from the environment (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY) or --replica-credentials. The restore reads
Litestream's LTX files from the bucket itself (no litestream needed).

flags:
`

func runRestore(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	var (
		url       = fs.String("replica", "", "the replica `URL` (s3://BUCKET/PATH?endpoint=http://HOST:PORT&forcePathStyle=true)")
		creds     = fs.String("replica-credentials", "", "read the keys from `FILE` (mode 0600) instead of the environment")
		timestamp = fs.String("timestamp", "", "restore the store as it was at `T` (RFC 3339, e.g. 2026-12-01T15:04:05Z)")
		id        = fs.String("workspace", "", "restore workspace `ID` of a host's replica")
	)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), restoreUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *url == "" || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	u, err := replica.ParseURL(*url)
	if err != nil {
		return fail("restore", err)
	}
	if *id != "" {
		if err := host.CheckID(*id); err != nil {
			return fail("restore", err)
		}
	}
	var at time.Time
	if *timestamp != "" {
		if at, err = replica.ParseTimestamp(*timestamp); err != nil {
			return fail("restore", err)
		}
	}
	c, err := replica.LoadCredentials(*creds)
	if err != nil {
		return fail("restore", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	out := fs.Arg(0)
	start := time.Now()
	ro := replica.Options{URL: u, Credentials: c, Logger: log}
	if *id != "" {
		err = replica.RestoreWorkspace(ctx, ro, *id, out, at)
	} else {
		err = replica.Restore(ctx, ro, out, at)
	}
	if errors.Is(err, replica.ErrNoReplica) && *id != "" {
		err = fmt.Errorf("%w (no workspace %s there)", err, *id)
	}
	if err != nil {
		return fail("restore", err)
	}
	fmt.Printf("%s: restored and checked in %s\n", out, time.Since(start).Round(time.Millisecond))
	return 0
}

const replicaUsage = `usage: sqlfs-exec replica status (--store STORE | --workspaces DIR) [--json]

Asks the replication of a running owner (serve or sqlfs-mount with
--replica) how far behind its replica each store is: the transactions not
shipped yet, and when the object store last took an upload.

flags:
`

func runReplica(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprint(os.Stderr, replicaUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("replica status", flag.ContinueOnError)
	var (
		store   = fs.String("store", "", "the store `FILE` an owner serves")
		dir     = fs.String("workspaces", "", "the `DIR` a host serves")
		asJSON  = fs.Bool("json", false, "print JSON")
		timeout = fs.Duration("timeout", 10*time.Second, "give up after this long")
	)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), replicaUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	if (*store == "") == (*dir == "") || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	state := replica.StoreStateDir(*store)
	if *dir != "" {
		state = replica.DirStateDir(*dir)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	sts, err := replica.StatusAt(ctx, state)
	if err != nil {
		return fail("replica status", err)
	}
	type row struct {
		Workspace string `json:"workspace,omitempty"`
		replica.Status
	}
	rows := make([]row, 0, len(sts))
	for _, st := range sts {
		r := row{Status: st}
		if *dir != "" {
			r.Workspace = workspaceOfStore(*dir, st.Path)
		}
		rows = append(rows, r)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Println(string(b))
		return 0
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	name := "STORE"
	if *dir != "" {
		name = "WORKSPACE"
	}
	fmt.Fprintln(w, strings.Join([]string{name, "BEHIND (TXNS)", "LOCAL TXID", "REPLICA TXID", "LAST UPLOAD"}, "\t"))
	for _, r := range rows {
		n := r.Path
		if r.Workspace != "" {
			n = r.Workspace
		}
		last := "never"
		if !r.LastSync.IsZero() {
			last = time.Since(r.LastSync).Round(time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", n, r.Behind, r.LocalTXID, r.ReplicaTXID, last)
	}
	w.Flush()
	return 0
}

// workspaceOfStore names the workspace whose store is at path below the
// host's DIR: the first element below it, since a fleet keeps a lease
// generation's store one folder deeper (DIR/ID/gen-G/).
func workspaceOfStore(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if abs, aerr := filepath.Abs(dir); err != nil && aerr == nil {
		rel, err = filepath.Rel(abs, path)
	}
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return strings.SplitN(rel, string(filepath.Separator), 2)[0]
}
