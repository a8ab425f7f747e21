package builtin

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// The formats are checked against bash by the corpus (testdata/corpus/
// printf.txt); these are the cases bash itself would not survive.
func TestPrintfWidthCap(t *testing.T) {
	tests := []struct {
		name, format string
		args         []string
	}{
		{"width", "%0100000000d", []string{"0"}},
		{"precision", "%.100000000f", []string{"1"}},
		{"string width", "x%100000000s", []string{"a"}},
		{"star width", "%*d", []string{"-100000000", "1"}},
		{"star precision", "%.*d", []string{"100000000", "1"}},
		{"overflowing width", "%99999999999999999999d", []string{"1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			status := Printf(context.Background(), &out, &errb, "", tc.format, tc.args)
			runtime.ReadMemStats(&after)
			if status != 1 || !strings.Contains(errb.String(), "over the limit of 1048576") {
				t.Errorf("status %d, stderr %q; want 1 and the limit named", status, errb.String())
			}
			if out.Len() > 1 {
				t.Errorf("printed %d bytes past the error", out.Len())
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
				t.Errorf("allocated %d bytes", grew)
			}
		})
	}
}

func TestPrintfStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := make([]string, 1_000_000)
	var out bytes.Buffer
	if status := Printf(ctx, &out, &bytes.Buffer{}, "", "%s\n", args); status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if out.Len() != 0 {
		t.Errorf("printed %d bytes after cancellation", out.Len())
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestPrintfWriteError(t *testing.T) {
	env, errb := &Env{Stdout: failingWriter{syscall.ENOSPC}, Getenv: func(string) string { return "" }}, &bytes.Buffer{}
	env.Stderr = errb
	if status := textPrintf(context.Background(), env, []string{"printf", "%s\n", "x"}); status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if want := "printf: write error: No space left on device\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
}
