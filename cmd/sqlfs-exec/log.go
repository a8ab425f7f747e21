package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func init() {
	register("log", "show and filter the audit trail", runLog)
}

const logUsage = `usage: sqlfs-exec log --store STORE [filters]

Prints the audit trail of STORE, oldest first: every change made through any
frontend (FUSE, shell, container, tools, import), and every refusal.
Columns: sequence, time, actor, operation, path(s), result.

At most --limit events are printed; when more follow, a last line on stderr
gives the command that prints the next page (the same flags with --after).
The store keeps events by age and count (sqlfs-mount and sqlfs-exec serve
--audit-max-age, --audit-max-events); events naming only paths the policy
hides are never shown. When events before the first shown are missing
(pruned, or hidden), a line on stderr says so.

flags:
`

func runLog(ctx context.Context, args []string) int {
	fs, ws := clientFlags("log", logUsage)
	var f sqlstore.AuditFilter
	fs.StringVar(&f.Actor, "actor", "", "only events of `ACTOR` (e.g. tool:write, exec:ID, import)")
	fs.StringVar(&f.ActorPrefix, "actor-prefix", "", "only actors starting with `PREFIX` (e.g. exec: or fuse:)")
	fs.StringVar(&f.Op, "op", "", "only operation `OP` (create, write, unlink, rename, …)")
	path := fs.String("path", "", "only events on `PATH` or below it")
	since := fs.String("since", "", "only events from `WHEN` on: a duration back from now (10m) or an RFC 3339 time")
	fs.Int64Var(&f.AfterSeq, "after", 0, "only events after sequence `N`")
	fs.IntVar(&f.Limit, "limit", 1000, "print at most `N` events")
	execID := fs.String("exec", "", "only events of exec `ID` (same as --actor exec:ID)")
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	failed := fs.Bool("refused", false, "only refused operations (result other than ok)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	if *execID != "" {
		f.Actor = tools.Actor(*execID)
	}
	if *path != "" {
		p, err := api.AuditPathPrefix(*path)
		if err != nil {
			return fail("log", err)
		}
		f.PathPrefix = p
	}
	if *since != "" {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			return fail("log", err)
		}
		f.Since = t
	}
	limit := f.Limit
	if limit <= 0 {
		return fail("log", fmt.Errorf("--limit %d: want at least 1", limit))
	}
	unfiltered := f == sqlstore.AuditFilter{AfterSeq: f.AfterSeq, Limit: f.Limit}
	return ws.run(ctx, "log", func(conn api.Conn) int {
		// One event more than asked for tells whether more follow.
		query := f
		query.Limit++
		events, err := conn.Audit(ctx, query)
		if err != nil {
			return fail("log", err)
		}
		more := len(events) > limit
		if more {
			events = events[:limit]
		}
		if unfiltered && len(events) > 0 && events[0].Seq > f.AfterSeq+1 {
			// A gap is pruning, or events whose paths the policy hides.
			fmt.Fprintf(os.Stderr, "-- events before %d are not shown: pruned by the store's audit retention, or hidden by its policy\n", events[0].Seq)
		}
		enc := json.NewEncoder(os.Stdout)
		for _, e := range events {
			if *failed && e.Result == "ok" {
				continue
			}
			if *asJSON {
				if err := enc.Encode(e); err != nil {
					return fail("log", err)
				}
				continue
			}
			fmt.Printf("%d\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.Time.Local().Format("2006-01-02 15:04:05.000"), e.Actor, e.Op, eventPaths(e), e.Result)
		}
		if more {
			fmt.Fprintf(os.Stderr, "-- %d events shown, more follow: %s\n", limit, nextPage(fs, events[len(events)-1].Seq))
		}
		return 0
	})
}

// eventPaths is an event's path column: a rename's two paths as "from ->
// to"; a connect event keeps in its second path the reason it was refused
// (fs.FS.RecordDetail), which is not a destination.
func eventPaths(e api.AuditEvent) string {
	switch {
	case e.Path2 == "":
		return e.Path
	case e.Op == "connect":
		return e.Path + " (" + e.Path2 + ")"
	default:
		return e.Path + " -> " + e.Path2
	}
}

// nextPage is the command that prints the events after seq with the same
// flags.
func nextPage(fs *flag.FlagSet, seq int64) string {
	words := []string{"sqlfs-exec", "log"}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "after" {
			return
		}
		value := fl.Value.String()
		if q, err := syntax.Quote(value, syntax.LangBash); err == nil {
			value = q
		}
		words = append(words, "--"+fl.Name+"="+value)
	})
	return strings.Join(append(words, "--after="+strconv.FormatInt(seq, 10)), " ")
}

// parseSince reads a duration back from now or an absolute time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(secs, 0), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (10m), an RFC 3339 time or Unix seconds", s)
}
