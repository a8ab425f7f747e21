package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/sqlfs/sqlfs/bench/harness"
)

// bigChunk is the size of one write or read of the large-file phases, as dd bs=1M.
const bigChunk = 1 << 20

// bigFilePhases are the large-file scenarios of Cloudflare's fs-bench: write a file
// of mib MiB and fsync it, copy it with cp (coreutils, which tries copy_file_range
// first), overwrite it in place and fsync, read it cold and warm. Every write phase
// ends in an fsync: the bytes must be durable before the clock stops.
func bigFilePhases(ctx context.Context, t *harness.Target, mib int, rec recorder) error {
	dir := filepath.Join(t.Root, "big")
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "copy")
	// Random bytes, so that no file system gets to compress or dedupe them,
	// and other bytes for the overwrite: sqlfs skips the store write of a
	// chunk whose bytes did not change.
	buf, other := make([]byte, bigChunk), make([]byte, bigChunk)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(buf)
	rng.Read(other)
	ops := mib
	phases := []phase{
		{name: fmt.Sprintf("write %dM +fsync", mib), ops: ops,
			before: func() error { return os.Mkdir(dir, 0o755) },
			run:    func() error { return writeBig(src, os.O_CREATE|os.O_TRUNC, buf, mib) }},
		{name: fmt.Sprintf("cp %dM +fsync", mib), ops: ops,
			run: func() error {
				if err := tool(ctx, 0, "cp", src, dst); err != nil {
					return err
				}
				return fsyncPath(dst)
			},
			after: func() error { return os.Remove(dst) }},
		{name: fmt.Sprintf("overwrite %dM +fsync", mib), ops: ops,
			run: func() error { return writeBig(src, 0, other, mib) }},
		{name: fmt.Sprintf("read %dM cold", mib), ops: ops,
			before: func() error { return t.Cold(ctx) },
			run:    func() error { return readBig(src, mib) }},
		{name: fmt.Sprintf("read %dM warm", mib), ops: ops,
			run:   func() error { return readBig(src, mib) },
			after: func() error { return os.RemoveAll(dir) }},
	}
	return runPhases(ctx, t, phases, rec)
}

// writeBig writes mib MiB of buf to p, opened with flag added to O_WRONLY, and
// fsyncs it.
func writeBig(p string, flag int, buf []byte, mib int) error {
	f, err := os.OpenFile(p, os.O_WRONLY|flag, 0o644)
	if err != nil {
		return err
	}
	for range mib {
		if _, err := f.Write(buf); err != nil {
			f.Close()
			return err
		}
	}
	return errors.Join(f.Sync(), f.Close())
}

// readBig reads p to its end, bigChunk at a time, and checks its size.
func readBig(p string, mib int) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, make([]byte, bigChunk))
	if err != nil {
		return err
	}
	if n != int64(mib)*bigChunk {
		return fmt.Errorf("read %d bytes of %s, want %d", n, p, int64(mib)*bigChunk)
	}
	return nil
}

func fsyncPath(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
