package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sqlfs/sqlfs/sidecar/api"
)

func init() {
	register("token", "make a random bearer token file for serve --token-file", tokenCmd)
}

const tokenUsage = `usage: sqlfs-exec token FILE

Writes a new random bearer token (32 bytes from the system's random source)
to FILE, created with mode 0600; an existing FILE is left alone. With FILE
'-' the token goes to stdout. Then:

  sqlfs-exec serve --store ws.db --listen 127.0.0.1:7070 --token-file FILE
  curl -H "Authorization: Bearer $(cat FILE)" http://127.0.0.1:7070/v1/...
`

func tokenCmd(_ context.Context, args []string) int {
	fset := flag.NewFlagSet("token", flag.ContinueOnError)
	fset.Usage = func() { fmt.Fprint(os.Stderr, tokenUsage) }
	if code, ok := parseFlags(fset, args); !ok {
		return code
	}
	if fset.NArg() != 1 {
		fset.Usage()
		return 2
	}
	tok := api.NewToken() + "\n"
	if file := fset.Arg(0); file != "-" {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fail("token", err)
		}
		_, err = f.WriteString(tok)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(file)
			return fail("token", err)
		}
		return 0
	}
	if _, err := os.Stdout.WriteString(tok); err != nil {
		return fail("token", err)
	}
	return 0
}
