package fs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// metaOp is one metadata operation on the i-th name of a directory, done
// through the core's inode API as a FUSE request does it (audited, as a
// kernel caller) and by a syscall on a native directory: the ratio is what
// the server spends per request against what the disk's filesystem spends
// per call, the kernel's round trip left out.
type metaOp struct {
	name   string
	exists bool // names 0..N-1 exist before the timed loop
	core   func(x sfs.Inodes, dir uint64, i int) error
	native func(dir string, i int) error
}

func fileName(i int) string    { return fmt.Sprintf("f%07d", i) }
func renamedName(i int) string { return fmt.Sprintf("r%07d", i) }

// missing turns the ENOENT a lookup of a missing name must give into success.
func missing(err error) error {
	if err == nil {
		return errors.New("a missing name was found")
	}
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	return err
}

var metaOps = []metaOp{
	{
		name: "create",
		core: func(x sfs.Inodes, dir uint64, i int) error {
			_, err := x.Mknod(dir, fileName(i), syscall.S_IFREG|0o644, 0, "")
			return err
		},
		native: func(dir string, i int) error {
			return unix.Mknod(filepath.Join(dir, fileName(i)), syscall.S_IFREG|0o644, 0)
		},
	},
	{
		name: "lookup-missing",
		core: func(x sfs.Inodes, dir uint64, i int) error {
			_, err := x.Lookup(dir, fileName(i))
			return missing(err)
		},
		native: func(dir string, i int) error {
			var st unix.Stat_t
			return missing(unix.Lstat(filepath.Join(dir, fileName(i)), &st))
		},
	},
	{
		name: "rename", exists: true,
		core: func(x sfs.Inodes, dir uint64, i int) error {
			return x.Rename(dir, fileName(i), dir, renamedName(i), 0)
		},
		native: func(dir string, i int) error {
			return unix.Rename(filepath.Join(dir, fileName(i)), filepath.Join(dir, renamedName(i)))
		},
	},
	{
		name: "unlink", exists: true,
		core: func(x sfs.Inodes, dir uint64, i int) error {
			return x.Remove(dir, fileName(i), false)
		},
		native: func(dir string, i int) error {
			return unix.Unlink(filepath.Join(dir, fileName(i)))
		},
	},
}

// BenchmarkMetaOps runs each metadata operation on the core and natively,
// side by side: compare .../core with .../native. cpu-ns/op is the
// process's CPU time (the commits of the writer goroutine included, and the
// kernel's for native), which a loaded machine inflates less than ns/op.
//
//	go test ./fs -run '^$' -bench MetaOps -benchtime 20000x
func BenchmarkMetaOps(b *testing.B) {
	for _, op := range metaOps {
		b.Run(op.name+"/core", func(b *testing.B) {
			f, err := sfs.Open(context.Background(), filepath.Join(b.TempDir(), "ws.db"), sfs.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			x := f.As(sfs.Caller{Kernel: true, Actor: "fuse:pid=1 comm=bench"}).Inodes()
			d, err := x.Mknod(sqlstore.Root, "d", syscall.S_IFDIR|0o755, 0, "")
			if err != nil {
				b.Fatal(err)
			}
			if op.exists {
				for i := range b.N {
					if _, err := x.Mknod(d.Ino, fileName(i), syscall.S_IFREG|0o644, 0, ""); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := f.Sync(b.Context()); err != nil {
				b.Fatal(err)
			}
			cpu := testenv.CPUTime(b)
			b.ResetTimer()
			for i := range b.N {
				if err := op.core(x, d.Ino, i); err != nil {
					b.Fatal(err)
				}
			}
			// What the changes cost to commit belongs to them.
			if err := f.Sync(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(op.name+"/native", func(b *testing.B) {
			dir := b.TempDir()
			if op.exists {
				for i := range b.N {
					if err := os.WriteFile(filepath.Join(dir, fileName(i)), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			cpu := testenv.CPUTime(b)
			b.ResetTimer()
			for i := range b.N {
				if err := op.native(dir, i); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
