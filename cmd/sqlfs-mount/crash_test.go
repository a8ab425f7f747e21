package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// buildMount builds this command once for the tests that run it as a
// separate process.
var buildMount = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sqlfs-mount-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "sqlfs-mount")
	args := append([]string{"build", "-o", bin}, buildTags()...)
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// mountProc is sqlfs-mount running as a child process.
type mountProc struct {
	cmd *exec.Cmd
	dir string
	log bytes.Buffer
}

func startMount(t *testing.T, store, dir string, args ...string) *mountProc {
	t.Helper()
	bin, err := buildMount()
	if err != nil {
		t.Fatal(err)
	}
	p := &mountProc{dir: dir}
	p.cmd = exec.Command(bin, append(args, store, dir)...)
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(20 * time.Second)
	for !fuse.IsMounted(dir) {
		if time.Now().After(deadline) || p.cmd.ProcessState != nil {
			t.Fatalf("mount did not come up:\n%s", p.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// kill ends the process with SIGKILL and clears the dead mount it leaves.
func (p *mountProc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
	for _, tool := range []string{"fusermount3", "fusermount"} {
		if !fuse.IsMounted(p.dir) {
			return
		}
		exec.Command(tool, "-u", "-z", p.dir).Run()
	}
}

// longEnv asks for the long randomized runs (make test-long).
const longEnv = "SQLFS_TEST_LONG"

// TestCrashKeepsFsyncedFiles kills the mount with SIGKILL at random points
// of a mixed workload, then reopens the store, checks it and verifies every
// file whose fsync returned, byte for byte: 20 rounds, 200 with longEnv set;
// write-through and with the writeback cache (fsync must write the kernel's
// dirty pages back before it is answered).
func TestCrashKeepsFsyncedFiles(t *testing.T) {
	fusetest.Skip(t)
	for _, writeback := range []bool{false, true} {
		t.Run(fmt.Sprintf("writeback=%v", writeback), func(t *testing.T) {
			crashRounds(t, fmt.Sprintf("--writeback-cache=%v", writeback))
		})
	}
}

func crashRounds(t *testing.T, flags ...string) {
	rounds := 20
	switch {
	case testing.Short():
		rounds = 3
	case os.Getenv(longEnv) != "":
		rounds = 200
	}
	base := t.TempDir()
	store := filepath.Join(base, "ws.db")
	dir := filepath.Join(base, "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	durable := map[string][32]byte{} // path below the mount → content hash
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range rounds {
		p := startMount(t, store, dir, append([]string{"--commit-interval", "50ms"}, flags...)...)
		stop := make(chan struct{})
		var mu sync.Mutex
		var wg sync.WaitGroup
		for worker := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				synced := mixedWorkload(dir, fmt.Sprintf("r%d-w%d", round, worker), rand.New(rand.NewPCG(uint64(round), uint64(worker))), stop)
				mu.Lock()
				for k, v := range synced {
					durable[k] = v
				}
				mu.Unlock()
			}()
		}
		time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		p.kill()
		close(stop)
		wg.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		fsys, err := sfs.Open(ctx, store, sfs.Options{})
		cancel()
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		problems, err := fsys.Store().Check(t.Context())
		if err != nil || len(problems) > 0 {
			fsys.Close()
			t.Fatalf("round %d: check: %v %v", round, err, problems)
		}
		for name, sum := range durable {
			data, err := fsys.ReadFile(name)
			if err != nil {
				t.Fatalf("round %d: fsync'ed %s lost: %v", round, name, err)
			}
			if sha256.Sum256(data) != sum {
				t.Fatalf("round %d: fsync'ed %s changed (%d bytes)", round, name, len(data))
			}
		}
		if err := fsys.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(durable) == 0 {
		t.Fatal("no file was fsync'ed: the workload did not run")
	}
	t.Logf("%d rounds, %d fsync'ed files verified", rounds, len(durable))
}

// mixedWorkload creates, appends, renames, truncates and deletes files under
// dir/prefix until stop or until the mount dies. It returns the files whose
// fsync succeeded and that it did not touch again, with their hashes.
func mixedWorkload(dir, prefix string, rng *rand.Rand, stop <-chan struct{}) map[string][32]byte {
	synced := map[string][32]byte{}
	root := filepath.Join(dir, prefix)
	if os.Mkdir(root, 0o755) != nil {
		return synced
	}
	var scratch []string
	for i := 0; ; i++ {
		select {
		case <-stop:
			return synced
		default:
		}
		name := filepath.Join(root, fmt.Sprintf("f%d", i))
		data := make([]byte, rng.IntN(300_000))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		var err error
		switch op := rng.IntN(10); {
		case op < 4: // a file that must survive
			err = writeSynced(name, data)
			if err == nil {
				synced["/"+prefix+"/"+filepath.Base(name)] = sha256.Sum256(data)
			}
		case op < 7: // scratch work that may be lost
			err = os.WriteFile(name, data, 0o644)
			scratch = append(scratch, name)
		case op < 8 && len(scratch) > 0:
			err = os.Truncate(scratch[rng.IntN(len(scratch))], int64(rng.IntN(100_000)))
		case op < 9 && len(scratch) > 0:
			k := rng.IntN(len(scratch))
			err = os.Rename(scratch[k], scratch[k]+".moved")
			scratch[k] += ".moved"
		case len(scratch) > 0:
			k := rng.IntN(len(scratch))
			err = os.Remove(scratch[k])
			scratch = append(scratch[:k], scratch[k+1:]...)
		}
		if errors.Is(err, syscall.ENOTCONN) || errors.Is(err, syscall.ECONNABORTED) {
			return synced
		}
	}
}

func writeSynced(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
