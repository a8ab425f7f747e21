package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

func init() {
	register("checkpoint", "create, list, restore, diff or delete checkpoints of a workspace", runCheckpoint)
	register("fork", "write a new, independent store from a checkpoint or the live workspace", runFork)
	register("undo", "put back the paths an exec changed as they were before it", runUndo)
}

const checkpointUsage = `usage: sqlfs-exec checkpoint ACTION --store STORE [flags] [args]

A checkpoint is an immutable point of the whole workspace, taken in
milliseconds while it runs; no file data is copied. ID is a checkpoint's
id or its name.

  create [--name NAME]  take one; prints its id, one line
  list                  ID, time, and name (or "auto exec=EXEC_ID" for the
                        one taken before that exec), oldest first
  restore ID            replace the whole workspace with checkpoint ID's
  diff ID [ID2]         what changed from ID to ID2 (default: the workspace
                        now), as git's name-status: A, M or D, a tab, the
                        path; sorted
  delete ID             delete it; data nothing else holds is freed in the
                        background

Works through the owner of STORE when one runs, else opens STORE here.

flags:
`

// checkpointActions are the actions of sqlfs-exec checkpoint: the number
// of arguments each takes, and what it does.
var checkpointActions = map[string]struct {
	minArgs, maxArgs int
	run              func(ctx context.Context, conn api.Conn, name string, args []string) error
}{
	"create": {0, 0, func(ctx context.Context, conn api.Conn, name string, _ []string) error {
		info, err := conn.CreateCheckpoint(ctx, name)
		if err == nil {
			fmt.Println(info.ID)
		}
		return err
	}},
	"list": {0, 0, func(ctx context.Context, conn api.Conn, _ string, _ []string) error {
		cs, err := conn.Checkpoints(ctx)
		for _, c := range cs {
			label := c.Name
			if c.Auto {
				label = "auto exec=" + c.Exec
			}
			fmt.Printf("%s\t%s\t%s\n", c.ID, c.Created.Format(time.RFC3339), label)
		}
		return err
	}},
	"restore": {1, 1, func(ctx context.Context, conn api.Conn, _ string, args []string) error {
		info, err := conn.Restore(ctx, args[0])
		if err == nil {
			fmt.Printf("restored checkpoint %s\n", info)
		}
		return err
	}},
	"diff": {1, 2, func(ctx context.Context, conn api.Conn, _ string, args []string) error {
		to := ""
		if len(args) == 2 {
			to = args[1]
		}
		changes, err := conn.Diff(ctx, args[0], to)
		fmt.Print(tools.NameStatus(changes))
		return err
	}},
	"delete": {1, 1, func(ctx context.Context, conn api.Conn, _ string, args []string) error {
		info, err := conn.DeleteCheckpoint(ctx, args[0])
		if err == nil {
			fmt.Printf("deleted checkpoint %s\n", info)
		}
		return err
	}},
}

func runCheckpoint(ctx context.Context, args []string) int {
	fs, ws := clientFlags("checkpoint", checkpointUsage)
	name := fs.String("name", "", "create: the checkpoint's `NAME` (unique; not all digits)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if code, ok := parseFlags(fs, args); !ok {
			return code
		}
		fs.Usage()
		return 2
	}
	verb := args[0]
	action, ok := checkpointActions[verb]
	if !ok {
		verbs := make([]string, 0, len(checkpointActions))
		for v := range checkpointActions {
			verbs = append(verbs, v)
		}
		sort.Strings(verbs)
		fmt.Fprintf(os.Stderr, "sqlfs-exec checkpoint: unknown action %q; actions: %s\n", verb, strings.Join(verbs, ", "))
		return 2
	}
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	if fs.NArg() < action.minArgs || fs.NArg() > action.maxArgs || (*name != "" && verb != "create") {
		fs.Usage()
		return 2
	}
	cmd := "checkpoint " + verb
	return ws.run(ctx, cmd, func(conn api.Conn) int {
		if err := action.run(ctx, conn, *name, fs.Args()); err != nil {
			return fail(cmd, err)
		}
		return 0
	})
}

const forkUsage = `usage: sqlfs-exec fork --store STORE [--checkpoint ID] NEW_STORE

Writes NEW_STORE (which must not exist), a new and fully independent
workspace store holding checkpoint ID's tree (an id or a name), or without
--checkpoint the workspace as it is now, taken consistently while it runs.
The fork has no checkpoints of its own. Works through the owner of STORE
when one runs (NEW_STORE is then written by the owner's process).

flags:
`

func runFork(ctx context.Context, args []string) int {
	fs, ws := clientFlags("fork", forkUsage)
	ref := fs.String("checkpoint", "", "fork checkpoint `ID` (an id or a name) instead of the live workspace")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	// The owner may run in another directory.
	dst, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return fail("fork", err)
	}
	return ws.run(ctx, "fork", func(conn api.Conn) int {
		if err := conn.Fork(ctx, *ref, dst); err != nil {
			return fail("fork", err)
		}
		return 0
	})
}

const undoUsage = `usage: sqlfs-exec undo --store STORE EXEC_ID

Puts back exactly the paths the exec EXEC_ID changed (see sqlfs-exec
changes) as they were just before it ran, from the automatic checkpoint
taken before it, and prints them, one per line. Refused, naming the paths,
when anyone changed one of them (or a path above or below one) after it:
undo never loses later work. Needs that checkpoint: owners take one before
every exec unless started with --auto-checkpoint=false, and keep them as
--checkpoint-keep and --checkpoint-max-age say. EXEC_ID is the id in an
exec's result; sqlfs-exec checkpoint list shows it as "auto exec=EXEC_ID"
and sqlfs-exec log as the actor exec:EXEC_ID.

flags:
`

func runUndo(ctx context.Context, args []string) int {
	fs, ws := clientFlags("undo", undoUsage)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	return ws.run(ctx, "undo", func(conn api.Conn) int {
		res, err := conn.Undo(ctx, fs.Arg(0))
		if err != nil {
			return fail("undo", err)
		}
		for _, p := range res.Restored {
			fmt.Println(p)
		}
		return 0
	})
}
