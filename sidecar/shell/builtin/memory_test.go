package builtin

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

var errTestBudget = errors.New("test budget exceeded")

// testMem is an exec's budget as the shell backend keeps it: Grow fails
// past limit. peak is the most held at once.
type testMem struct {
	mu               sync.Mutex
	held, peak, most int64
}

func (m *testMem) Grow(n int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held += n
	m.peak = max(m.peak, m.held)
	if m.held > m.most {
		return fmt.Errorf("%w: %d bytes", errTestBudget, m.most)
	}
	return nil
}

func (m *testMem) Shrink(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held -= n
}

func (m *testMem) Limit() int64 { return m.most }

// runWithMem runs args over stdin with a budget of most bytes.
func runWithMem(t *testing.T, most int64, stdin io.Reader, args ...string) (stdout, stderr string, status int, mem *testMem) {
	t.Helper()
	fn, ok := Lookup(args[0])
	if !ok {
		t.Fatalf("%s not registered", args[0])
	}
	mem = &testMem{most: most}
	var out, errb bytes.Buffer
	env := &Env{Stdin: stdin, Stdout: &out, Stderr: &errb, Dir: "/w", FS: newTextFS(map[string]string{"/w/": "/"}),
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil }, Mem: mem}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	status = fn(ctx, env, args)
	return out.String(), errb.String(), status, mem
}

// Commands that stream hold a constant amount whatever their input; the
// input here is 16 times their budget.
func TestStreamingCommandsStayInBudget(t *testing.T) {
	const budget = 256 << 10
	line := strings.Repeat("y", 99)
	const lines = 40_000 // 4 MB
	input := func() io.Reader { return strings.NewReader(strings.Repeat(line+"\n", lines)) }
	encoded := base64.StdEncoding.EncodeToString([]byte(strings.Repeat(line+"\n", lines)))
	cases := []struct {
		args []string
		want string // the last line of the output
	}{
		{[]string{"wc", "-l"}, fmt.Sprint(lines)},
		{[]string{"tail", "-n", "1"}, line},
		{[]string{"tail", "-n", "+40000"}, line},
		{[]string{"tail", "-c", "4"}, "yyy"},
		{[]string{"cut", "-c", "1-3"}, "yyy"},
		{[]string{"rev"}, line},
		{[]string{"nl"}, fmt.Sprintf("%6d\t%s", lines, line)},
		{[]string{"fold", "-w", "50"}, line[:49]},
		{[]string{"uniq", "-c"}, fmt.Sprintf("%7d %s", lines, line)},
		{[]string{"grep", "-c", "y"}, fmt.Sprint(lines)},
		{[]string{"sed", "s/y/z/"}, "z" + line[1:]},
		{[]string{"head", "-n", "40000"}, line},
		{[]string{"base64"}, encoded[len(encoded)/76*76:]},
		{[]string{"paste", "-", "-"}, line + "\t" + line},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, stderr, status, mem := runWithMem(t, budget, input(), c.args...)
			if status != 0 {
				t.Fatalf("status %d, stderr %q", status, stderr)
			}
			got := out[strings.LastIndexByte(strings.TrimSuffix(out, "\n"), '\n')+1:]
			if got != c.want+"\n" {
				t.Errorf("last line %.200q, want %.200q", got, c.want+"\n")
			}
			if mem.peak > budget {
				t.Errorf("peak charge %d over the budget", mem.peak)
			}
		})
	}
}

// Commands that must hold their input stop, naming the limit, when it is
// larger than their budget.
func TestHoldingCommandsStopAtBudget(t *testing.T) {
	const budget = 64 << 10
	input := func() io.Reader { return strings.NewReader(strings.Repeat("line\n", 100_000)) }
	cases := [][]string{
		{"sort"},
		{"tac"},
		{"xargs"},
		{"head", "-n", "-1"},
		{"sed", "H;$!d;x"},
		{"awk", `{ s = s $0 } END { print length(s) }`},
		{"uniq", "-D"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdin := input()
			if args[0] == "uniq" {
				stdin = strings.NewReader(strings.Repeat("same\n", 100_000))
			}
			_, stderr, status, _ := runWithMem(t, budget, stdin, args...)
			if status == 0 {
				t.Fatalf("status 0 over a %d-byte budget", budget)
			}
			if !strings.Contains(stderr, errTestBudget.Error()) && !strings.Contains(stderr, "string too long") {
				t.Errorf("stderr %q does not name the limit", stderr)
			}
		})
	}
}

// A line longer than the read buffer is charged while it is held.
func TestLongLineIsCharged(t *testing.T) {
	in := strings.NewReader(strings.Repeat("x", 1<<20) + "\n")
	_, stderr, status, _ := runWithMem(t, 256<<10, in, "rev")
	if status == 0 || !strings.Contains(stderr, errTestBudget.Error()) {
		t.Fatalf("rev of a 1 MiB line under a 256 KiB budget: status %d, stderr %q", status, stderr)
	}
}

// tail keeps a window over its input: its answers must be those of the
// whole input, whatever the chunking.
func TestTailWindow(t *testing.T) {
	inputs := []string{"", "a", "a\n", "a\nb", "a\nb\n", "a\n\nb\n\n", strings.Repeat("line\n", 50_000) + "end", strings.Repeat("0123456789", 20_000)}
	cases := []struct {
		args []string
		want func(in string) string
	}{
		{[]string{"-n", "2"}, func(in string) string { return lastLines(in, 2) }},
		{[]string{"-n", "0"}, func(string) string { return "" }},
		{[]string{"-c", "7"}, func(in string) string { return in[max(0, len(in)-7):] }},
		{[]string{"-n", "+2"}, func(in string) string {
			if i := strings.IndexByte(in, '\n'); i >= 0 {
				return in[i+1:]
			}
			return ""
		}},
		{[]string{"-c", "+3"}, func(in string) string { return in[min(len(in), 2):] }},
	}
	for _, c := range cases {
		for i, in := range inputs {
			t.Run(fmt.Sprintf("%s/%d", strings.Join(c.args, " "), i), func(t *testing.T) {
				out, _, status, _ := runWithMem(t, 1<<30, iotest.HalfReader(strings.NewReader(in)), append([]string{"tail"}, c.args...)...)
				if want := c.want(in); status != 0 || out != want {
					t.Errorf("status %d, got %.60q (%d bytes), want %.60q (%d bytes)", status, out, len(out), want, len(want))
				}
			})
		}
	}
}

// lastLines is the last n lines of s, a last line without newline counted.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

// wc counts chunk by chunk: characters split between reads count once.
func TestWcCountsAcrossChunks(t *testing.T) {
	in := strings.Repeat("héllo wörld\t€\n", 1000) + "\xff tail"
	whole, _, _, _ := runWithMem(t, 1<<30, strings.NewReader(in), "wc", "-l", "-w", "-m", "-c", "-L")
	bytewise, _, _, _ := runWithMem(t, 1<<30, iotest.OneByteReader(strings.NewReader(in)), "wc", "-l", "-w", "-m", "-c", "-L")
	if whole != bytewise {
		t.Errorf("one byte at a time %q, whole %q", bytewise, whole)
	}
	if want := fmt.Sprintf("%7d %7d %7d %7d %7d\n", 1000, 3002, 14*1000+6, len(in), 17); whole != want {
		t.Errorf("wc = %q, want %q", whole, want)
	}
}

// sed's endless loops end with the exec: a branch loop at cancellation,
// a growing one at its budget.
func TestSedLoopsStop(t *testing.T) {
	fn, _ := Lookup("sed")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	env := &Env{Stdin: strings.NewReader("x\n"), Stdout: io.Discard, Stderr: io.Discard, Dir: "/w", FS: newTextFS(nil)}
	start := time.Now()
	fn(ctx, env, []string{"sed", ":a;ba"})
	if d := time.Since(start); d > testenv.Slack(2*time.Second) {
		t.Errorf("sed ':a;ba' ran %v past a 100ms deadline", d)
	}
	_, stderr, status, _ := runWithMem(t, 1<<20, strings.NewReader("x\n"), "sed", ":a;s/.*/&&/;ba")
	if status == 0 || !strings.Contains(stderr, errTestBudget.Error()) {
		t.Errorf("sed doubling its pattern space: status %d, stderr %q", status, stderr)
	}
}

// od reads block by block: repeats collapse to "*" whatever the length.
func TestOdStreams(t *testing.T) {
	in := strings.NewReader(strings.Repeat("y", 4<<20) + "z")
	out, stderr, status, _ := runWithMem(t, 256<<10, in, "od", "-c")
	want := "0000000   y   y   y   y   y   y   y   y   y   y   y   y   y   y   y   y\n*\n20000000   z\n20000001\n"
	if status != 0 || out != want {
		t.Errorf("status %d, stderr %q, out %q, want %q", status, stderr, out, want)
	}
}

// Sizes taken from arguments allocate nothing the budget does not allow:
// a repeat count or a line width of 10^9 must neither build a GiB buffer
// (which the heap watchdog sees only once it is there) nor change output.
func TestArgumentSizesAreBounded(t *testing.T) {
	const budget = 1 << 20
	cases := []struct {
		args   []string
		stdout string // "" : must fail naming the limit
	}{
		{[]string{"tr", "a", "[b*200000000]"}, "b\n"},
		{[]string{"tr", "ab", "[x*200000000]y"}, "x\n"},
		{[]string{"tr", "[a*3]a", "xyzw"}, "w\n"},
		{[]string{"tr", "[a*200000000]", "x"}, ""},
		{[]string{"od", "-w200000000"}, ""},
		{[]string{"jq", "-n", `"x" * 200000000 | length`}, ""},
		{[]string{"jq", "-n", `200000000 * "x" | length`}, ""},
		{[]string{"jq", "-n", `"x" * 100000000000000000000 | length`}, ""},
		{[]string{"jq", "-n", `[] | .[20000000] = 1 | length`}, ""},
		{[]string{"jq", "-nc", `[1,2,3] | .[1] = 5 | .[-1] |= 7 | [.[0], .[1+1], .["a"]?, path(.[2])]`}, "[1,7,[2]]\n"},
		// What jq's * does otherwise, in its order of evaluation.
		{[]string{"jq", "-nc", `"ab" * 3, ("x" * 0), 2 * 3.5, ((1,2) * (3,4)), ({"a":{"b":1}} * {"a":{"c":2}}), [.[]? * 2], (try ({} * 1) catch .)`},
			"\"ababab\"\n\"\"\n7\n3\n6\n4\n8\n{\"a\":{\"b\":1,\"c\":2}}\n[]\n\"cannot multiply: object ({}) and number (1)\"\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			stdout, stderr, status, _ := runWithMem(t, budget, strings.NewReader("a\n"), c.args...)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("allocated %d MiB for a %d-byte input", alloc>>20, 2)
			}
			if c.stdout == "" {
				if status == 0 || !strings.Contains(stderr, errTestBudget.Error()) {
					t.Errorf("status %d, stderr %q: want a failure naming the limit", status, stderr)
				}
			} else if stdout != c.stdout || status != 0 {
				t.Errorf("stdout %q, status %d, stderr %q; want %q, 0", stdout, status, stderr, c.stdout)
			}
		})
	}
}
