package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/sqlfs/sqlfs/sqlstore"
)

func init() {
	register("check", "verify a store's consistency (fsck): SQLite integrity and sqlfs invariants", checkCmd)
}

// checkCmd exits 0 when the store is consistent, 1 when it has problems
// (listed one per line) and 2 when it cannot be checked.
func checkCmd(ctx context.Context, args []string) int {
	fset := flag.NewFlagSet("check", flag.ContinueOnError)
	store := fset.String("store", "", "workspace store `file`")
	fset.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: sqlfs-exec check --store STORE\n\nChecks SQLite's integrity and sqlfs's own invariants: every inode reachable\nfrom the root, no directory cycles, one name per directory, no dangling\nentries or orphan chunks, nlink and sizes consistent, and every chunk's data\nmatching its CRC-32C. The store must not be in use.\n")
		fset.PrintDefaults()
	}
	if code, ok := parseFlags(fset, args); !ok {
		return code
	}
	if *store == "" || fset.NArg() > 0 {
		fset.Usage()
		return 2
	}
	if _, err := os.Stat(*store); err != nil {
		fmt.Fprintf(os.Stderr, "sqlfs-exec check: %v\n", err)
		return 2
	}
	st, err := sqlstore.Open(ctx, *store, sqlstore.Options{})
	if err != nil {
		var owned *sqlstore.OwnedError
		if errors.As(err, &owned) {
			fmt.Fprintf(os.Stderr, "sqlfs-exec check: %v; stop it to check the store\n", owned)
		} else {
			fmt.Fprintf(os.Stderr, "sqlfs-exec check: %v\n", err)
		}
		return 2
	}
	defer st.Close()
	problems, err := st.Check(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sqlfs-exec check: %v\n", err)
		return 2
	}
	if len(problems) > 0 {
		fmt.Print(sqlstore.FormatProblems(problems))
		fmt.Fprintf(os.Stderr, "%s: %d problems\n", *store, len(problems))
		return 1
	}
	fmt.Printf("%s: ok\n", *store)
	return 0
}
