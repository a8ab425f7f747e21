package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar"
)

// The benchmarks run each workload twice side by side: "shell" is the
// backend on a store, "bash" is /bin/bash with coreutils on a native
// temporary directory holding the same files. Their ns/op ratio is the
// figure to read.

// benchTree writes files (relative name → content) both to the backend's
// workspace and to a native directory, which it returns.
func benchTree(b *testing.B, be *Backend, files map[string]string) string {
	b.Helper()
	native := b.TempDir()
	for name, content := range files {
		p := filepath.Join(native, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		v := &view{m: be.m}
		ws := sidecar.WorkspaceDir + "/" + name
		if err := v.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
			b.Fatal(err)
		}
		f, err := v.OpenFile(ws, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(f, content); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	return native
}

func benchPair(b *testing.B, be *Backend, native, command string) {
	b.Run("shell", func(b *testing.B) {
		for b.Loop() {
			res, err := be.Exec(context.Background(), sidecar.Request{Command: command, Stdout: io.Discard, Stderr: io.Discard})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%q: %+v %v", command, res, err)
			}
		}
	})
	b.Run("bash", func(b *testing.B) {
		if _, err := exec.LookPath("bash"); err != nil {
			b.Skip("no bash")
		}
		for b.Loop() {
			cmd := exec.Command("bash", "-c", command)
			cmd.Dir = native
			cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%q: %v\n%s", command, err, out)
			}
		}
	})
}

// sourceLike is a file that looks like code: 100 lines, ~4 KiB.
func sourceLike(i int) string {
	var sb strings.Builder
	for l := 0; l < 100; l++ {
		fmt.Fprintf(&sb, "func f%d_%d(x int) int { return x * %d } // line %d\n", i, l, l, l)
	}
	if i%100 == 0 {
		sb.WriteString("// needle here\n")
	}
	return sb.String()
}

func BenchmarkEcho(b *testing.B) {
	be, _ := newTestBackend(b, Options{})
	benchPair(b, be, b.TempDir(), "echo hi")
}

func BenchmarkGrepR(b *testing.B) {
	be, _ := newTestBackend(b, Options{})
	files := map[string]string{}
	for i := 0; i < 1000; i++ {
		files[fmt.Sprintf("src/pkg%02d/file%04d.go", i%20, i)] = sourceLike(i)
	}
	native := benchTree(b, be, files)
	benchPair(b, be, native, "grep -r needle . > /dev/null")
}

func BenchmarkFindWc(b *testing.B) {
	be, _ := newTestBackend(b, Options{})
	files := map[string]string{}
	for i := 0; i < 1000; i++ {
		files[fmt.Sprintf("d%02d/e%02d/f%04d.txt", i%10, i%37, i)] = "x\n"
	}
	native := benchTree(b, be, files)
	benchPair(b, be, native, "find . | wc -l > /dev/null")
}

func BenchmarkSedInPlace(b *testing.B) {
	be, _ := newTestBackend(b, Options{})
	files := map[string]string{}
	for i := 0; i < 100; i++ {
		files[fmt.Sprintf("f%03d.txt", i)] = sourceLike(i)
	}
	native := benchTree(b, be, files)
	// Swapping back and forth keeps every run's work the same.
	benchPair(b, be, native, "sed -i -E 's/return x/return  x/g; s/return  x/return x/g' *.txt")
}
