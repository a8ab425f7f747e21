package fs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// crashChildEnv makes the test binary the child of TestCheckpointCrash.
const crashChildEnv = "SQLFS_CKPT_CRASH_STORE"

// TestCheckpointCrash kills (SIGKILL) a child process that checkpoints,
// restores, forks and deletes checkpoints in a loop, at a different point
// each round, then reopens the store: it must pass Check, and every
// checkpoint it lists must restore to a tree that passes Check too.
func TestCheckpointCrash(t *testing.T) {
	if store := os.Getenv(crashChildEnv); store != "" {
		crashChild(store)
		return
	}
	store := filepath.Join(t.TempDir(), "ws.db")
	for round := range 6 {
		child := exec.Command(os.Args[0], "-test.run", "^TestCheckpointCrash$")
		child.Env = append(os.Environ(), crashChildEnv+"="+store)
		out, err := child.StdoutPipe()
		must(t, err)
		child.Stderr = os.Stderr
		must(t, child.Start())
		// Let it run a few steps, a different number each round, then a
		// moment into the next one.
		lines := bufio.NewScanner(out)
		for range 2 + 3*round {
			if !lines.Scan() {
				t.Fatalf("round %d: the child stopped early: %v", round, lines.Err())
			}
		}
		time.Sleep(time.Duration(round) * 3 * time.Millisecond)
		must(t, child.Process.Signal(syscall.SIGKILL))
		child.Wait()

		f, err := sfs.Open(t.Context(), store, sfs.Options{})
		must(t, err)
		check(t, f)
		cps, err := f.Checkpoints(t.Context())
		must(t, err)
		for _, cp := range cps {
			must(t, f.Restore(t.Context(), strconv.FormatInt(cp.ID, 10)))
			check(t, f)
		}
		must(t, f.Close())
	}
}

// crashChild works on store until killed, printing a line after each step.
func crashChild(store string) {
	ctx := context.Background()
	f, err := sfs.Open(ctx, store, sfs.Options{CommitInterval: time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	fail := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
	}
	data := patterned(300 << 10)
	for i := 0; ; i++ {
		fail(f.MkdirAll(fmt.Sprintf("/d%d", i%5), 0o755))
		fail(f.WriteFile(fmt.Sprintf("/d%d/f%d", i%5, i%7), data[i%1000:], 0o644))
		fail(f.RemoveAll(fmt.Sprintf("/d%d", (i+2)%5)))
		ci, err := f.Checkpoint(ctx, sfs.CheckpointOptions{})
		fail(err)
		fmt.Println("checkpoint", ci.ID)
		if i%3 == 2 {
			fail(f.Restore(ctx, strconv.FormatInt(ci.ID-1, 10)))
			fmt.Println("restore")
		}
		if i%4 == 3 {
			dst := filepath.Join(filepath.Dir(store), fmt.Sprintf("fork%d.db", i))
			fail(f.Fork(ctx, strconv.FormatInt(ci.ID, 10), dst))
			os.Remove(dst)
			fmt.Println("fork")
		}
		if cps, _ := f.Checkpoints(ctx); len(cps) > 3 {
			fail(f.DeleteCheckpoint(ctx, strconv.FormatInt(cps[0].ID, 10)))
			_, err := f.Store().CollectGarbage(ctx)
			fail(err)
			fmt.Println("delete")
		}
	}
}
