package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// textEndless is an input that never ends, like "yes".
type textEndless struct{ line []byte }

func (e textEndless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], e.line)
	}
	return n, nil
}

// textShortWriter fails after limit bytes, as a pipe whose reader left.
type textShortWriter struct {
	buf   bytes.Buffer
	limit int
}

var errTextClosed = errors.New("closed pipe")

func (w *textShortWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.limit {
		return 0, errTextClosed
	}
	return w.buf.Write(p)
}

func runTextEnv(t *testing.T, stdin io.Reader, stdout io.Writer, environ []string, args ...string) (string, int) {
	t.Helper()
	fn, ok := Lookup(args[0])
	if !ok {
		t.Fatalf("%s not registered", args[0])
	}
	var out, errb bytes.Buffer
	if stdout == nil {
		stdout = &out
	}
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: &errb, Dir: "/w", FS: newTextFS(map[string]string{"/w/": "/"}),
		Getenv: func(name string) string {
			for _, kv := range environ {
				if v, ok := strings.CutPrefix(kv, name+"="); ok {
					return v
				}
			}
			return ""
		},
		Environ: func() []string { return environ }}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- fn(ctx, env, args) }()
	select {
	case status := <-done:
		return out.String(), status
	case <-time.After(10 * time.Second):
		t.Fatalf("%q did not stop", args)
	}
	return "", 0
}

// Commands that need only the start of their input stop reading there, so
// "yes | head" and friends end.
func TestTextEndlessInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"head", "-n", "2"}, "y\ny\n"},
		{[]string{"head", "-c", "3"}, "y\ny"},
		{[]string{"sed", "2q"}, "y\ny\n"},
		{[]string{"sed", "-n", "3{=;q}"}, "3\n"},
		{[]string{"grep", "-m", "2", "-n", "y"}, "1:y\n2:y\n"},
		{[]string{"grep", "-q", "y"}, ""},
		{[]string{"awk", "NR == 2 {print NR; exit}"}, "2\n"},
	}
	for _, c := range cases {
		got, status := runTextEnv(t, textEndless{[]byte("y\n")}, nil, nil, c.args...)
		if got != c.want || status != 0 {
			t.Errorf("%q: got %q (status %d), want %q", c.args, got, status, c.want)
		}
	}
}

// yes stops when its reader goes away.
func TestTextYesStops(t *testing.T) {
	w := &textShortWriter{limit: 10000}
	runTextEnv(t, strings.NewReader(""), w, nil, "yes", "ab")
	if w.buf.Len() == 0 || !strings.HasPrefix(w.buf.String(), "ab\nab\n") {
		t.Fatalf("yes wrote %q", w.buf.String()[:min(20, w.buf.Len())])
	}
}

func TestTextEnviron(t *testing.T) {
	environ := []string{"HOME=/w", "FOO=bar baz", "EMPTY="}
	cases := []struct {
		args   []string
		want   string
		status int
	}{
		{[]string{"printenv"}, "HOME=/w\nFOO=bar baz\nEMPTY=\n", 0},
		{[]string{"printenv", "FOO", "HOME"}, "bar baz\n/w\n", 0},
		{[]string{"printenv", "EMPTY"}, "\n", 0},
		{[]string{"printenv", "NOPE"}, "", 1},
		{[]string{"awk", `BEGIN {print ENVIRON["FOO"]}`}, "bar baz\n", 0},
		{[]string{"jq", "-n", "-r", "env.FOO, $ENV.HOME"}, "bar baz\n/w\n", 0},
		{[]string{"date", "-d", "@0", "+%H %Z"}, "00 UTC\n", 0},
	}
	for _, c := range cases {
		got, status := runTextEnv(t, strings.NewReader(""), nil, environ, c.args...)
		if got != c.want || status != c.status {
			t.Errorf("%q: got %q (status %d), want %q (status %d)", c.args, got, status, c.want, c.status)
		}
	}
	// TZ moves date's zone.
	got, _ := runTextEnv(t, strings.NewReader(""), nil, []string{"TZ=Asia/Tokyo"}, "date", "-d", "@0", "+%H")
	if got != "09\n" {
		t.Errorf("date with TZ=Asia/Tokyo: %q", got)
	}
}

// jq 1.6 (the host's) exits 4 on malformed input, jq 1.7 exits 2; we follow 1.7.
func TestTextJqBadInput(t *testing.T) {
	runTextCases(t, []textCase{
		{name: "bad json", args: []string{"jq", "."}, stdin: "{\"a\": \n", status: 2},
		{name: "bad json after value", args: []string{"jq", "-c", "."}, stdin: "1 {", want: "1\n", status: 2},
	})
}
