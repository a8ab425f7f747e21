package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/bench/harness"
)

// fileTree is a set of same-sized files spread over a few directories. Paths are
// built up front so the timed loops are syscalls and little else.
type fileTree struct {
	root    string
	dirs    []string
	files   []string // dir-major: the files of dirs[0] first
	renamed []string // files[i] renamed within its directory
	missing []string // names that never exist, one per file, in the same directories
	data    []byte
}

func newFileTree(root string, files, dirs, size int) *fileTree {
	dirs = max(1, min(dirs, files))
	ft := &fileTree{root: root, data: make([]byte, size)}
	for i := range ft.data {
		ft.data[i] = byte('a' + i%26)
	}
	for d := range dirs {
		ft.dirs = append(ft.dirs, filepath.Join(root, fmt.Sprintf("d%03d", d)))
	}
	for i := range files {
		dir := ft.dirs[i*dirs/files]
		ft.files = append(ft.files, filepath.Join(dir, fmt.Sprintf("f%06d", i)))
		ft.renamed = append(ft.renamed, filepath.Join(dir, fmt.Sprintf("r%06d", i)))
		ft.missing = append(ft.missing, filepath.Join(dir, fmt.Sprintf("m%06d", i)))
	}
	return ft
}

// every runs f for each element, checking for cancellation now and then.
func every(ctx context.Context, xs []string, f func(i int, x string) error) error {
	for i, x := range xs {
		if i%512 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := f(i, x); err != nil {
			return err
		}
	}
	return nil
}

// create makes the directories and writes every file, with fsync before close if asked.
func (ft *fileTree) create(ctx context.Context, fsync bool) error {
	for _, d := range append([]string{ft.root}, ft.dirs...) {
		if err := unix.Mkdir(d, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("mkdir %s: %w", d, err)
		}
	}
	return ft.write(ctx, unix.O_CREAT|unix.O_EXCL, fsync)
}

// write opens every file with flag (and O_WRONLY) and writes its data at
// offset 0, with fsync before close if asked.
func (ft *fileTree) write(ctx context.Context, flag int, fsync bool) error {
	return every(ctx, ft.files, func(_ int, p string) error {
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC|flag, 0o644)
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		n, err := unix.Write(fd, ft.data)
		if err == nil && n != len(ft.data) {
			err = fmt.Errorf("short write %d of %d", n, len(ft.data))
		}
		if err == nil && fsync {
			err = unix.Fsync(fd)
		}
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		return nil
	})
}

// stat lstats every path; want is nil when they must exist, or the errno they must fail with.
func stat(ctx context.Context, paths []string, want error) error {
	var st unix.Stat_t
	return every(ctx, paths, func(_ int, p string) error {
		err := unix.Lstat(p, &st)
		if want == nil && err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if want != nil && !errors.Is(err, want) {
			return fmt.Errorf("stat %s: got %v, want %v", p, err, want)
		}
		return nil
	})
}

// readdir lists every directory with getdents, and with stat also lstats each entry
// relative to the open directory, the way `ls -l` does.
func (ft *fileTree) readdir(ctx context.Context, withStat bool) error {
	buf := make([]byte, 64<<10)
	names := make([]string, 0, len(ft.files)/len(ft.dirs)+1)
	total := 0
	var st unix.Stat_t
	for _, d := range ft.dirs {
		if err := ctx.Err(); err != nil {
			return err
		}
		fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", d, err)
		}
		names = names[:0]
		for {
			n, err := unix.Getdents(fd, buf)
			if err != nil {
				unix.Close(fd)
				return fmt.Errorf("getdents %s: %w", d, err)
			}
			if n == 0 {
				break
			}
			_, _, names = unix.ParseDirent(buf[:n], -1, names)
		}
		if withStat {
			for _, name := range names {
				if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					unix.Close(fd)
					return fmt.Errorf("stat %s/%s: %w", d, name, err)
				}
			}
		}
		unix.Close(fd)
		total += len(names)
	}
	if total != len(ft.files) {
		return fmt.Errorf("readdir of %s: %d entries, want %d", ft.root, total, len(ft.files))
	}
	return nil
}

// readAll opens, reads to EOF and closes every file, checking its content.
func (ft *fileTree) readAll(ctx context.Context) error {
	buf := make([]byte, len(ft.data)+4096)
	return every(ctx, ft.files, func(_ int, p string) error {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		defer unix.Close(fd)
		got := 0
		for {
			n, err := unix.Read(fd, buf[got:])
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			if n == 0 || got+n == len(buf) {
				got += n
				break
			}
			got += n
		}
		if string(buf[:got]) != string(ft.data) {
			return fmt.Errorf("read %s: %d bytes, not the %d written", p, got, len(ft.data))
		}
		return nil
	})
}

func (ft *fileTree) renameAll(ctx context.Context) error {
	return every(ctx, ft.files, func(i int, p string) error {
		if err := unix.Rename(p, ft.renamed[i]); err != nil {
			return fmt.Errorf("rename %s: %w", p, err)
		}
		return nil
	})
}

func unlinkAll(ctx context.Context, paths []string) error {
	return every(ctx, paths, func(_ int, p string) error {
		if err := unix.Unlink(p); err != nil {
			return fmt.Errorf("unlink %s: %w", p, err)
		}
		return nil
	})
}

func mkdirAll(ctx context.Context, paths []string) error {
	return every(ctx, paths, func(_ int, p string) error {
		if err := unix.Mkdir(p, 0o755); err != nil {
			return fmt.Errorf("mkdir %s: %w", p, err)
		}
		return nil
	})
}

func rmdirAll(ctx context.Context, paths []string) error {
	return every(ctx, paths, func(_ int, p string) error {
		if err := unix.Rmdir(p); err != nil {
			return fmt.Errorf("rmdir %s: %w", p, err)
		}
		return nil
	})
}

// phase is one timed step; before and after are untimed set-up and tear-down.
// With settle, what before wrote is written back too before the timing starts.
type phase struct {
	name          string
	ops           int
	before, after func() error
	settle        bool
	run           func() error
}

// recorder receives one timed run of a phase on a target, with the target's counter
// deltas over the run (nil for targets without metrics).
type recorder func(name string, ops int, d time.Duration, counters map[string]float64)

// runPhases runs each phase in order. Earlier work is written back before each one
// so that one phase's write-back does not land in the next one's time.
func runPhases(ctx context.Context, t *harness.Target, phases []phase, rec recorder) error {
	for _, p := range phases {
		if err := t.Settle(); err != nil {
			return err
		}
		if p.before != nil {
			if err := p.before(); err != nil {
				return fmt.Errorf("%s on %s, set-up: %w", p.name, t.Kind, err)
			}
			if p.settle {
				if err := t.Settle(); err != nil {
					return err
				}
			}
		}
		before, err := t.Counters(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := p.run(); err != nil {
			return fmt.Errorf("%s on %s: %w", p.name, t.Kind, err)
		}
		d := time.Since(start)
		after, err := t.Counters(ctx)
		if err != nil {
			return err
		}
		var delta map[string]float64
		if before != nil {
			delta = harness.Delta(before, after)
		}
		rec(p.name, p.ops, d, delta)
		if p.after != nil {
			if err := p.after(); err != nil {
				return fmt.Errorf("%s on %s, tear-down: %w", p.name, t.Kind, err)
			}
		}
	}
	return nil
}

// filePhases are the metadata phases on files files of fileSize bytes over dirs directories.
func filePhases(ctx context.Context, t *harness.Target, files, dirs int, rec recorder) error {
	const fileSize = 4 << 10
	main := newFileTree(filepath.Join(t.Root, "files"), files, dirs, fileSize)
	synced := newFileTree(filepath.Join(t.Root, "fsync"), files, dirs, fileSize)
	var empty []string
	for i := range max(1, files/10) {
		empty = append(empty, filepath.Join(t.Root, "empty", fmt.Sprintf("e%05d", i)))
	}
	n := len(main.files)
	phases := []phase{
		{name: "create", ops: n, run: func() error { return main.create(ctx, false) }},
		{name: "create+fsync", ops: n,
			run:   func() error { return synced.create(ctx, true) },
			after: func() error { return os.RemoveAll(synced.root) }},
		{name: "stat warm", ops: n,
			before: func() error { return stat(ctx, main.files, nil) },
			run:    func() error { return stat(ctx, main.files, nil) }},
		// What a build does: write a file, then stat it (make, a linker).
		{name: "stat after write", ops: n,
			before: func() error { return main.write(ctx, 0, false) },
			run:    func() error { return stat(ctx, main.files, nil) }},
		{name: "stat missing", ops: n, run: func() error { return stat(ctx, main.missing, unix.ENOENT) }},
		{name: "stat missing again", ops: n, run: func() error { return stat(ctx, main.missing, unix.ENOENT) }},
		{name: "readdir", ops: n, run: func() error { return main.readdir(ctx, false) }},
		{name: "readdir+stat", ops: n, run: func() error { return main.readdir(ctx, true) }},
		{name: "read all", ops: n, run: func() error { return main.readAll(ctx) }},
		{name: "stat cold", ops: n,
			before: func() error { return t.Cold(ctx) },
			run:    func() error { return stat(ctx, main.files, nil) }},
		{name: "rename", ops: n, run: func() error { return main.renameAll(ctx) }},
		{name: "unlink", ops: n, run: func() error { return unlinkAll(ctx, main.renamed) }},
		{name: "mkdir", ops: len(empty),
			before: func() error { return os.Mkdir(filepath.Dir(empty[0]), 0o755) },
			run:    func() error { return mkdirAll(ctx, empty) }},
		{name: "rmdir", ops: len(empty) + len(main.dirs),
			run: func() error { return rmdirAll(ctx, slices.Concat(main.dirs, empty)) }},
	}
	return runPhases(ctx, t, phases, rec)
}
