package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// wsFlags name the workspace of a client command: the store, and the token
// for an owner that listens on TCP.
type wsFlags struct {
	store     string
	host      string // a host's URL (serve --workspaces), with workspace
	workspace string
	tokenFile string
	local     workspaceOptions // how to open the store when no owner serves it
	verbose   bool
}

// clientFlags makes the flag set of a subcommand that works on a
// workspace: its usage text and the workspace flags.
func clientFlags(name, usage string) (*flag.FlagSet, *wsFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	w := &wsFlags{}
	fs.StringVar(&w.store, "store", "", "workspace store `FILE` (this or --host)")
	fs.StringVar(&w.host, "host", "", "`URL` of a host (serve --workspaces): http://HOST:PORT or unix:SOCKET, with --workspace")
	fs.StringVar(&w.workspace, "workspace", "", "`ID` of the workspace on --host")
	fs.StringVar(&w.tokenFile, "token-file", "", "`FILE` holding the bearer token of an owner or host listening on TCP (the operator's or the workspace's)")
	fs.BoolVar(&w.verbose, "verbose", false, "log sqlfs's own progress to stderr (otherwise only warnings and errors)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprint(fs.Output(), "A workspace of a host (serve --workspaces) is named with --host URL --workspace ID instead of --store.\n\n")
		fs.PrintDefaults()
	}
	return fs, w
}

// egressFlag defines --egress-allow and --egress-deny, for the commands
// that run execs.
func (w *wsFlags) egressFlag(fs *flag.FlagSet) {
	fs.Var(&w.local.egress, "egress-allow", "when no owner runs: let execs that ask for allow_network connect to `HOST[:PORT]` (as serve's --egress-allow; repeatable); an owner applies its own rules")
	fs.Var(&w.local.egressDeny, "egress-deny", "when no owner runs: refuse connections to `HOST[:PORT]` whatever --egress-allow allows (as serve's --egress-deny; repeatable)")
}

// named says whether a workspace was named, by --store or --host.
func (w *wsFlags) named() bool { return w.store != "" || w.host != "" }

// connect reaches the workspace: through its owner's API when a process
// owns the store, otherwise by opening the store here. close releases it.
func (w *wsFlags) connect(ctx context.Context) (conn api.Conn, close func() error, err error) {
	switch {
	case w.store != "" && w.host != "":
		return nil, nil, errors.New("give --store or --host, not both")
	case (w.host == "") != (w.workspace == ""):
		return nil, nil, errors.New("--host and --workspace go together")
	case w.store == "" && w.host == "":
		return nil, nil, errors.New("--store is required (or --host with --workspace)")
	}
	token, err := readToken(w.tokenFile)
	if err != nil {
		return nil, nil, err
	}
	if w.host != "" {
		c, err := api.DialWorkspace(ctx, w.host, w.workspace, token)
		if err != nil {
			return nil, nil, fmt.Errorf("workspace %s on %s: %w", w.workspace, w.host, err)
		}
		return c, c.Close, nil
	}
	// A command's stderr is what the agent reads: sqlfs's own INFO lines
	// (mounting, the container's setup) go there only when asked.
	level := slog.LevelWarn
	if w.verbose {
		level = slog.LevelInfo
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	ws, err := openWorkspace(ctx, w.store, w.local)
	var owned *sqlstore.OwnedError
	if errors.As(err, &owned) {
		if len(w.local.egress) > 0 || len(w.local.egressDeny) > 0 {
			// The owner's operator set the ceiling; a client cannot raise it.
			return nil, nil, fmt.Errorf("%w; --egress-allow and --egress-deny are for a store opened here: the owner's own rules apply", err)
		}
		if owned.Socket == "" {
			return nil, nil, fmt.Errorf("%w; it serves no API (started with --listen none): stop it first", err)
		}
		c, err := api.Dial(ctx, owned.Socket, token)
		if err != nil {
			return nil, nil, fmt.Errorf("store owned by process %d: %w", owned.Pid, err)
		}
		return c, c.Close, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return api.Local{S: ws.Tools}, func() error { return ws.Close(context.WithoutCancel(ctx)) }, nil
}

// run calls fn with the workspace and releases it after, reporting a
// failed release (the final commit of a store opened here) as a failure.
func (w *wsFlags) run(ctx context.Context, cmd string, fn func(api.Conn) int) int {
	conn, closeConn, err := w.connect(ctx)
	if err != nil {
		return fail(cmd, err)
	}
	code := fn(conn)
	if err := closeConn(); err != nil {
		return fail(cmd, fmt.Errorf("closing the workspace: %w", err))
	}
	return code
}

// readToken reads a bearer token file; "" means no token.
func readToken(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	return api.ReadTokenFile(file)
}

// fail prints a command's error the same way for every subcommand and
// printURL calls tool with in and prints the url its result carries
// (publish's link, expose's preview).
func (w *wsFlags) printURL(ctx context.Context, tool string, in any) int {
	body, err := json.Marshal(in)
	if err != nil {
		return fail(tool, err)
	}
	return w.run(ctx, tool, func(conn api.Conn) int {
		res, err := conn.Call(ctx, tool, body)
		if err != nil {
			return fail(tool, err)
		}
		var out struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(res.Result, &out); err != nil {
			return fail(tool, err)
		}
		fmt.Println(out.URL)
		return 0
	})
}

// returns exit code 1.
func fail(cmd string, err error) int {
	var te *tools.Error
	if errors.As(err, &te) {
		fmt.Fprintf(os.Stderr, "sqlfs-exec %s: %s (%s)\n", cmd, te.Msg, te.Code)
	} else {
		fmt.Fprintf(os.Stderr, "sqlfs-exec %s: %v\n", cmd, err)
	}
	return 1
}

func init() {
	register("tool", "call an agent tool (read, ls, find, grep, write, edit, delete, exec, checkpoint, restore, undo, …)", runTool)
}

const toolUsage = `usage: sqlfs-exec tool --store STORE [--json] NAME [ARGS]

Calls the agent tool NAME with ARGS, a JSON object ('-' or nothing: read it
from stdin), through the owner of STORE when one runs. Prints the result as a
model sees it, or as JSON with --json. Tools: %s.
Example: sqlfs-exec tool --store ws.sqlfs read '{"path":"src/main.go"}'

flags:
`

func runTool(ctx context.Context, args []string) int {
	fs, ws := clientFlags("tool", fmt.Sprintf(toolUsage, strings.Join(api.ToolNames(), ", ")))
	ws.egressFlag(fs)
	asJSON := fs.Bool("json", false, "print the structured result as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return 2
	}
	var raw []byte
	var err error
	if fs.NArg() == 2 && fs.Arg(1) != "-" {
		raw = []byte(fs.Arg(1))
	} else if raw, err = io.ReadAll(os.Stdin); err != nil {
		return fail("tool", err)
	}
	return ws.run(ctx, "tool", func(conn api.Conn) int {
		res, err := conn.Call(ctx, fs.Arg(0), raw)
		if err != nil {
			return fail("tool", err)
		}
		if !*asJSON {
			fmt.Print(res.Text)
			return 0
		}
		var v any
		if err := json.Unmarshal(res.Result, &v); err != nil {
			return fail("tool", err)
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fail("tool", err)
		}
		return 0
	})
}
