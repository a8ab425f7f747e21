package fuse_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
)

// copy_file_range inside the mount is served by the server in one request,
// no WRITE, and gives the bytes a read-and-write copy would: at any
// offsets, over and past the end of the destination, stopping at the
// source's end, with and without the writeback cache (whose dirty pages of
// the source the kernel writes back first), and durably after an fsync.
func TestCopyFileRangeInServer(t *testing.T) {
	if fuse.LibFUSE != 0 {
		t.Skipf("libfuse %d's path API has no copy_file_range", fuse.LibFUSE)
	}
	const size = 3<<20 + 12345 // several chunks and a short tail
	src := make([]byte, size)
	rand.NewChaCha8([32]byte{7}).Read(src)
	old := bytes.Repeat([]byte("old."), 1<<18) // 1 MiB
	cases := []struct {
		name          string
		offIn, offOut int64
		length        int
		dst           []byte // the destination's content before
		want          int    // bytes copied
	}{
		{"whole file into an empty one", 0, 0, size, nil, size},
		{"unaligned, inside the destination", 4097, 12345, 500000, old, 500000},
		{"past the destination's end", 100, int64(len(old)) - 10, 2 << 20, old, 2 << 20},
		{"leaving a hole before it", 0, 5 << 20, 70000, old, 70000},
		{"stops at the source's end", size - 1000, 0, 1 << 20, nil, 1000},
		{"from past the source's end", size + 1, 0, 4096, old, 0},
	}
	for _, writeback := range []bool{false, true} {
		w := fusetest.Mount(t, sfs.Options{}, fuse.Options{WritebackCache: writeback})
		for _, tc := range cases {
			name := tc.name
			if writeback {
				name += ", writeback cache"
			}
			t.Run(name, func(t *testing.T) {
				srcPath, dstPath := w.Path("src"), w.Path("dst")
				must(t, os.WriteFile(srcPath, src, 0o644))
				must(t, os.WriteFile(dstPath, tc.dst, 0o644))
				want := append([]byte(nil), tc.dst...)
				if end := int(tc.offOut) + tc.want; end > len(want) {
					want = append(want, make([]byte, end-len(want))...)
				}
				if tc.want > 0 {
					copy(want[tc.offOut:], src[tc.offIn:tc.offIn+int64(tc.want)])
				}
				in, err := os.Open(srcPath)
				must(t, err)
				defer in.Close()
				out, err := os.OpenFile(dstPath, os.O_WRONLY, 0)
				must(t, err)
				defer out.Close()
				var n int
				got := requestsDuring(t, func() {
					offIn, offOut := tc.offIn, tc.offOut
					n, err = unix.CopyFileRange(int(in.Fd()), &offIn, int(out.Fd()), &offOut, tc.length, 0)
				})
				must(t, err)
				if n != tc.want {
					t.Fatalf("copied %d bytes, want %d", n, tc.want)
				}
				if tc.want > 0 && (got["copy_file_range"] != 1 || got["write"] != 0 || got["read"] != 0) {
					t.Fatalf("requests during the copy %v, want one copy_file_range and no read or write", got)
				}
				must(t, out.Sync())
				if b, err := os.ReadFile(dstPath); err != nil || !bytes.Equal(b, want) {
					t.Fatalf("destination after the copy: %d bytes (%v), want %d, equal %v", len(b), err, len(want), bytes.Equal(b, want))
				}
			})
		}
		// What was synced is in the store: a fresh mount reads it from there.
		want, err := os.ReadFile(w.Path("dst"))
		must(t, err)
		w.Close()
		w.Remount()
		if b, err := os.ReadFile(w.Path("dst")); err != nil || !bytes.Equal(b, want) {
			t.Fatalf("after a remount: %d bytes (%v), want %d", len(b), err, len(want))
		}
	}
}
