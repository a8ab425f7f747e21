// Command sqlfs-exec runs commands against a workspace and serves the agent
// API. Each subcommand lives in its own file and registers itself here.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand. run gets the arguments after the subcommand
// name and returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) int
}

var commands = map[string]command{}

// register is called from each subcommand file's init.
func register(name, summary string, run func(ctx context.Context, args []string) int) {
	commands[name] = command{summary: summary, run: run}
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: sqlfs-exec COMMAND [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'sqlfs-exec COMMAND --help' for a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		usage()
		return
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "sqlfs-exec: unknown command %q\n", name)
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.run(ctx, os.Args[2:])
	stop()
	os.Exit(code)
}

// parseFlags parses args with fs and maps -h/--help to exit code 0 and other
// flag errors to 2, the shell convention for usage errors.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}
