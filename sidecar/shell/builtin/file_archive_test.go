package builtin

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"
	"time"
)

// A gzip bomb: one member of 64 MiB of zeros (64 KiB compressed) repeated
// 64 times unpacks to 4 GiB, seconds of work with no further read of its
// small input. zcat stops when its context ends.
func TestZcatBombCancelled(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestSpeed)
	if _, err := zw.Write(make([]byte, 64<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	bomb := bytes.Repeat(member.Bytes(), 64)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	env := &Env{Stdin: bytes.NewReader(bomb), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	start := time.Now()
	status := fileGzip(ctx, env, []string{"zcat"}, true, true)
	took := time.Since(start)
	if status == 0 {
		t.Errorf("zcat of a cancelled bomb: status 0")
	}
	// Far below the whole bomb (4 GiB at ~1 GiB/s), far above a read.
	if took > time.Second {
		t.Errorf("zcat returned %v after it started, its context ended after 50ms", took)
	}
}
