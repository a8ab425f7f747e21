package builtin

import (
	"context"
	"io"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// Expectations were produced by running the same commands with GNU tools.
func TestTextJq(t *testing.T) {
	tree := map[string]string{
		"a.json":     "{\"a\": 1, \"b\": [1, 2, {\"c\": \"x\"}], \"d\": null, \"e\": 1.5, \"f\": \"héllo\"}\n",
		"arr.json":   "[{\"n\": \"x\", \"v\": 2}, {\"n\": \"y\", \"v\": 1}]\n",
		"bad.json":   "{\"a\": \n",
		"empty.json": "",
		"lines.txt":  "one\ntwo\n",
		"s.json":     "1 2 3\n",
	}
	runTextCases(t, []textCase{
		{name: "identity", args: []string{"jq", ".", "a.json"}, files: tree, want: "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2,\n    {\n      \"c\": \"x\"\n    }\n  ],\n  \"d\": null,\n  \"e\": 1.5,\n  \"f\": \"héllo\"\n}\n"},
		{name: "compact", args: []string{"jq", "-c", ".", "a.json"}, files: tree, want: "{\"a\":1,\"b\":[1,2,{\"c\":\"x\"}],\"d\":null,\"e\":1.5,\"f\":\"héllo\"}\n"},
		{name: "field", args: []string{"jq", ".b[2].c", "a.json"}, files: tree, want: "\"x\"\n"},
		{name: "raw", args: []string{"jq", "-r", ".f", "a.json"}, files: tree, want: "héllo\n"},
		{name: "stream", args: []string{"jq", ". * 2", "s.json"}, files: tree, want: "2\n4\n6\n"},
		{name: "slurp", args: []string{"jq", "-s", "add", "s.json"}, files: tree, want: "6\n"},
		{name: "null input", args: []string{"jq", "-n", "[1,2] | length"}, files: tree, want: "2\n"},
		{name: "arg", args: []string{"jq", "-n", "--arg", "x", "hi", "$x"}, files: tree, want: "\"hi\"\n"},
		{name: "argjson", args: []string{"jq", "-n", "--argjson", "x", "{\"k\":[1]}", "$x.k[0]"}, files: tree, want: "1\n"},
		{name: "map select", args: []string{"jq", "-c", "map(select(.v > 1))", "arr.json"}, files: tree, want: "[{\"n\":\"x\",\"v\":2}]\n"},
		{name: "sort_by", args: []string{"jq", "-c", "sort_by(.v) | map(.n)", "arr.json"}, files: tree, want: "[\"y\",\"x\"]\n"},
		{name: "keys", args: []string{"jq", "-c", "keys", "a.json"}, files: tree, want: "[\"a\",\"b\",\"d\",\"e\",\"f\"]\n"},
		{name: "stdin", args: []string{"jq", ".x"}, files: tree, stdin: "{\"x\": true}", want: "true\n"},
		{name: "exit false", args: []string{"jq", "-e", ".d", "a.json"}, files: tree, want: "null\n", status: 1},
		{name: "exit true", args: []string{"jq", "-e", ".a", "a.json"}, files: tree, want: "1\n"},
		{name: "exit none", args: []string{"jq", "-e", "empty", "a.json"}, files: tree, status: 4},
		{name: "error", args: []string{"jq", ".a.b", "a.json"}, files: tree, status: 5},
		{name: "compile error", args: []string{"jq", "..[", "a.json"}, files: tree, status: 3},
		{name: "missing file", args: []string{"jq", ".", "nope.json"}, files: tree, status: 2},
		{name: "raw input", args: []string{"jq", "-R", ".", "lines.txt"}, files: tree, want: "\"one\"\n\"two\"\n"},
		{name: "raw slurp", args: []string{"jq", "-Rs", ".", "lines.txt"}, files: tree, want: "\"one\\ntwo\\n\"\n"},
		{name: "join", args: []string{"jq", "-j", ".[]", "s.json"}, files: tree, status: 5},
		{name: "tab", args: []string{"jq", "--tab", ".b", "a.json"}, files: tree, want: "[\n\t1,\n\t2,\n\t{\n\t\t\"c\": \"x\"\n\t}\n]\n"},
		{name: "indent", args: []string{"jq", "--indent", "1", ".b", "a.json"}, files: tree, want: "[\n 1,\n 2,\n {\n  \"c\": \"x\"\n }\n]\n"},
		{name: "to_entries", args: []string{"jq", "-c", "to_entries[0]", "a.json"}, files: tree, want: "{\"key\":\"a\",\"value\":1}\n"},
		{name: "interp string", args: []string{"jq", "-r", "\"\\(.a)-\\(.e)\"", "a.json"}, files: tree, want: "1-1.5\n"},
		{name: "float", args: []string{"jq", "-n", "0.1 + 0.2"}, files: tree, want: "0.30000000000000004\n"},
		{name: "int division", args: []string{"jq", "-n", "7 / 2"}, files: tree, want: "3.5\n"},
		{name: "big", args: []string{"jq", "-n", "1e1000"}, files: tree, want: "1.7976931348623157e+308\n"},
		{name: "multiple files", args: []string{"jq", "-c", ".", "s.json", "arr.json"}, files: tree, want: "1\n2\n3\n[{\"n\":\"x\",\"v\":2},{\"n\":\"y\",\"v\":1}]\n"},
		{name: "length utf8", args: []string{"jq", ".f | length", "a.json"}, files: tree, want: "5\n"},
		{name: "ascii", args: []string{"jq", "-a", ".f", "a.json"}, files: tree, want: "\"h\\u00e9llo\"\n"},
		{name: "inputs", args: []string{"jq", "-n", "[inputs] | add", "s.json"}, files: tree, want: "6\n"},
		{name: "input", args: []string{"jq", "-c", "[., input]", "s.json"}, files: tree, want: "[1,2]\n", status: 5},
		{name: "empty file", args: []string{"jq", ".", "empty.json"}, files: tree},
		{name: "alternative", args: []string{"jq", ".missing // \"dflt\"", "a.json"}, files: tree, want: "\"dflt\"\n"},
		{name: "reduce", args: []string{"jq", "reduce .[] as $x (0; . + $x)"}, files: tree, stdin: "[1,2,3]", want: "6\n"},
		{name: "ARGS", args: []string{"jq", "-n", "-c", "--arg", "a", "1", "$ARGS.named"}, files: tree, want: "{\"a\":\"1\"}\n"},
		{name: "tostring", args: []string{"jq", "-r", ".b | tostring", "a.json"}, files: tree, want: "[1,2,{\"c\":\"x\"}]\n"},
		{name: "halt_error", args: []string{"jq", "-n", "\"bye\\n\" | halt_error(3)"}, files: tree, status: 3},
		{name: "group_by", args: []string{"jq", "-c", "group_by(.v > 1) | map(length)", "arr.json"}, files: tree, want: "[1,1]\n"},
		{name: "select missing", args: []string{"jq", ".[] | select(.n == \"y\") | .v", "arr.json"}, files: tree, want: "1\n"},
		{name: "has", args: []string{"jq", "has(\"a\")", "a.json"}, files: tree, want: "true\n"},
		{name: "split join", args: []string{"jq", "-r", ".f | split(\"l\") | join(\"L\")", "a.json"}, files: tree, want: "héLLo\n"},
		{name: "test regex", args: []string{"jq", ".f | test(\"^h.l\")", "a.json"}, files: tree, want: "true\n"},
		{name: "slurp raw files", args: []string{"jq", "-s", "-c", ".", "s.json", "s.json"}, files: tree, want: "[1,2,3,1,2,3]\n"},
		{name: "number formats", args: []string{"jq", "-c", "."}, files: tree, stdin: "[1000000, 1e17, 0.00001, -0, 12345678901234567890, 1.5e300, 0.1, 2.5e-3, 1e-7]", want: "[1000000,1e+17,1e-05,-0,12345678901234567000,1.5e+300,0.1,0.0025,1e-07]\n"},
		{name: "negative filter", args: []string{"jq", "-1"}, files: tree, stdin: "null", want: "-1\n"},
	})
}

// Every way a jq filter or its input can build a value larger than the
// exec's budget ends with the budget's error, before it is allocated.
func TestJqStaysInBudget(t *testing.T) {
	const budget = 4 << 20
	endless := func(prefix, unit string) io.Reader {
		return io.MultiReader(strings.NewReader(prefix), &repeatReader{unit: []byte(unit)})
	}
	cases := []struct {
		name  string
		stdin io.Reader
		args  []string
	}{
		{"setpath far index", nil, []string{"jq", "-n", `setpath(["a", 1e9]; 1)`}},
		{"assign far index", nil, []string{"jq", "-n", `.[1e9] = 1`}},
		{"fromstream far index", nil, []string{"jq", "-n", `fromstream([[1e8], 1], [[1e8]])`}},
		{"update-multiply", nil, []string{"jq", "-n", `{"x": "ab"} | .x *= 1e9`}},
		{"collect range", nil, []string{"jq", "-n", `[range(1e9)] | length`}},
		{"string repetition", nil, []string{"jq", "-n", `"x" * 1e9 | length`}},
		{"collect repeat", nil, []string{"jq", "-n", `[repeat(1)] | length`}},
		{"string doubling", nil, []string{"jq", "-n", `"x" | until(length > 1e12; . + .) | length`}},
		{"tojson of shared parts", nil, []string{"jq", "-n", `def f: [., .]; reduce range(40) as $i (0; f) | tojson | length`}},
		{"inputs of an endless stream", endless("", "1 "), []string{"jq", "-n", `[inputs] | length`}},
		{"slurp of an endless stream", endless("", "1 "), []string{"jq", "-s", `length`}},
		{"one endless value", endless("[", "1,"), []string{"jq", `length`}},
		{"one endless string", endless(`"`, "x"), []string{"jq", `length`}},
		{"one endless raw line", endless("", "x"), []string{"jq", "-R", `length`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdin := c.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, stderr, status, _ := runWithMem(t, budget, stdin, c.args...)
			runtime.ReadMemStats(&after)
			if status == 0 || !strings.Contains(stderr, errTestBudget.Error()) {
				t.Errorf("status %d, stderr %q: want a failure naming the limit", status, stderr)
			}
			// Garbage included: the arrays a collection outgrew, the
			// values decoded and dropped.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*budget {
				t.Errorf("allocated %d MiB with a budget of %d MiB", alloc>>20, budget>>20)
			}
		})
	}
}

// repeatReader yields unit over and over.
type repeatReader struct {
	unit []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.unit[r.off]
		r.off = (r.off + 1) % len(r.unit)
	}
	return len(p), nil
}

// Containers deeper than jq's print depth are stripped as jq does; deeper
// than the walks may go, a filter fails instead of overflowing the stack.
func TestJqDepth(t *testing.T) {
	out, _, status, _ := runWithMem(t, 1<<30, strings.NewReader(""), "jq", "-nc", `reduce range(300) as $i (0; [.])`)
	want := strings.Repeat("[", 257) + "<stripped: exceeds max depth>" + strings.Repeat("]", 257) + "\n"
	if out != want || status != 0 {
		t.Errorf("got %q (status %d), want %q", out, status, want)
	}
	_, stderr, status, _ := runWithMem(t, 1<<30, strings.NewReader(""), "jq", "-n", `reduce range(100000) as $i (0; [.]) | . == .`)
	if status != 5 || !strings.Contains(stderr, "nested deeper than") {
		t.Errorf("status %d, stderr %q: want status 5 and the depth error", status, stderr)
	}
}

// Cancellation stops jq within 100 ms, whatever it is doing.
func TestJqStopsOnCancel(t *testing.T) {
	for _, filter := range []string{`[range(1e9)] | length`, `repeat(1)`, `last(range(1e12))`, `[limit(1e7; repeat("x"))] | tojson | length`,
		`def f: [., .]; reduce range(40) as $i (0; f)`} {
		t.Run(filter, func(t *testing.T) {
			fn, _ := Lookup("jq")
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Dir: "/w", FS: newTextFS(map[string]string{"/w/": "/"}),
				Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan time.Time)
			go func() { fn(ctx, env, []string{"jq", "-n", filter}); done <- time.Now() }()
			time.Sleep(200 * time.Millisecond)
			cancelled := time.Now()
			cancel()
			if d := (<-done).Sub(cancelled); d > testenv.Slack(100*time.Millisecond) {
				t.Errorf("stopped %v after cancellation", d)
			}
		})
	}
}

// A failed write ends jq, as SIGPIPE or jq 1.7's write check would, even
// in the middle of a value that prints for ever.
func TestJqStopsOnWriteError(t *testing.T) {
	for _, c := range []struct {
		err    error
		stderr string
	}{
		{syscall.ENOSPC, "jq: write error: No space left on device\n"},
		{syscall.EPIPE, ""},
	} {
		for _, filter := range []string{`repeat(1)`, `def f: [., .]; reduce range(40) as $i (0; f)`} {
			var errb strings.Builder
			env := &Env{Stdin: strings.NewReader(""), Stdout: failingWriter{c.err}, Stderr: &errb, Dir: "/w", FS: newTextFS(map[string]string{"/w/": "/"}),
				Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
			fn, _ := Lookup("jq")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			status := fn(ctx, env, []string{"jq", "-nc", filter})
			timedOut := ctx.Err()
			cancel()
			if status != 2 || errb.String() != c.stderr || timedOut != nil {
				t.Errorf("%s after %v: status %d, stderr %q (timed out: %v); want 2, %q", filter, c.err, status, errb.String(), timedOut, c.stderr)
			}
		}
	}
}
