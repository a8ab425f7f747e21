package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
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

// Random formats and arguments, printed by bash's printf and by Printf,
// must agree byte for byte, exit status included. The generator stays
// within what float64 renders like bash's long double (precisions up to 10)
// and leaves out %a and %(…)T.
func TestPrintfRandomAgainstBash(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("needs /bin/bash as the reference")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	args := []string{"0", "7", "-3", "42", "255", "-1", "010", "0x1f", "65536", "-300",
		"1.5", "-0.25", "3.14159", "1e10", "2.5", "abc", "", "a b", "é", "'A", "12abc", "1,5",
		"inf", "nan", "-inf", `a\tb`, `\101\0101`, "it's", "~x", "#h", "-5", " 9"}
	const cases = 1000
	var script strings.Builder
	var want strings.Builder
	type tc struct {
		format string
		args   []string
	}
	var all []tc
	for range cases {
		var f strings.Builder
		for range 1 + rng.IntN(3) {
			f.WriteString(pick("", "x", "<", "|", `\n`, `\t`, `\\`, `\x41`, `\101`, "%%", " "))
			f.WriteString("%")
			for _, flag := range "-+ #0" {
				if rng.IntN(5) == 0 {
					f.WriteRune(flag)
				}
			}
			f.WriteString(pick("", "", "3", "8", "12", "*"))
			verb := pick("d", "i", "u", "o", "x", "X", "f", "F", "e", "E", "g", "G", "s", "c", "b", "q")
			switch {
			case rng.IntN(3) != 0:
			case strings.Contains("fFeEgG", verb):
				// Not .*: a long double has more digits than a float64.
				f.WriteString(pick(".", ".0", ".2", ".5", ".10"))
			default:
				f.WriteString(pick(".", ".0", ".2", ".5", ".10", ".*"))
			}
			f.WriteString(verb)
		}
		c := tc{format: f.String()}
		for range rng.IntN(5) {
			c.args = append(c.args, pick(args...))
		}
		all = append(all, c)
		quoted := []string{shQuote(c.format)}
		for _, a := range c.args {
			quoted = append(quoted, shQuote(a))
		}
		fmt.Fprintf(&script, "printf %s 2>/dev/null; echo \"$? \x1e\"\n", strings.Join(quoted, " "))
		var out bytes.Buffer
		status := Printf(context.Background(), &out, io.Discard, "", c.format, c.args)
		fmt.Fprintf(&want, "%s%d \x1e\n", out.String(), status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script.String())
	cmd.Env = []string{"LC_ALL=C.UTF-8"}
	bashOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got, ours := strings.Split(string(bashOut), "\x1e\n"), strings.Split(want.String(), "\x1e\n")
	for i := range min(len(got), len(ours), len(all)) {
		if got[i] != ours[i] {
			t.Errorf("printf %q %q:\nbash %q\nours %q", all[i].format, all[i].args, got[i], ours[i])
		}
	}
	if len(got) != len(ours) {
		t.Errorf("bash printed %d cases, we %d", len(got), len(ours))
	}
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
