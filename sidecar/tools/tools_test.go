package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// fakeBackend runs a tiny command language so the exec surface can be
// tested without a shell: "echo TEXT", "fail N", "sleep", "touch PATH",
// "cat" (stdin to stdout), "pwd".
type fakeBackend struct{ fsys FS }

func (fakeBackend) Name() string { return "fake" }
func (fakeBackend) Close() error { return nil }
func (b fakeBackend) Exec(ctx context.Context, req sidecar.Request) (sidecar.Result, error) {
	start := time.Now()
	verb, arg, _ := strings.Cut(req.Command, " ")
	res := sidecar.Result{}
	out := req.Stdout
	if out == nil {
		out = io.Discard
	}
	switch verb {
	case "echo":
		fmt.Fprintln(out, arg)
	case "fail":
		fmt.Fprintln(req.Stderr, "failing")
		fmt.Sscan(arg, &res.ExitCode)
	case "sleep":
		t := req.Timeout
		if t == 0 {
			t = time.Minute
		}
		select {
		case <-ctx.Done():
			res.ExitCode = 130
		case <-time.After(t):
			res.ExitCode, res.TimedOut = 124, true
		}
	case "touch":
		if err := b.fsys.WriteFile("/"+arg, nil, 0o644); err != nil {
			return res, err
		}
	case "cat":
		if req.Stdin != nil {
			io.Copy(out, req.Stdin)
		}
	case "pwd":
		fmt.Fprintln(out, req.Dir)
	case "spew":
		for i := 0; i < 1000; i++ {
			fmt.Fprintln(out, strings.Repeat("x", 1000))
		}
	default:
		fmt.Fprintf(req.Stderr, "%s: not found\n", verb)
		res.ExitCode = 127
	}
	res.Duration = time.Since(start)
	return res, nil
}

func newTestService(t *testing.T, opts Options) (*Service, FS) {
	t.Helper()
	fsys := newTestFS(t)
	return New(func(string) FS { return fsys }, map[string]sidecar.Backend{"shell": fakeBackend{fsys}}, opts), fsys
}

func put(t *testing.T, fsys FS, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := fsys.MkdirAll(name[:strings.LastIndex(name, "/")+1], 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(content, "->") {
			if err := fsys.Symlink(strings.TrimPrefix(content, "->"), name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if strings.HasSuffix(name, "/") {
			continue
		}
		if err := fsys.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func code(err error) Code {
	var te *Error
	if errors.As(err, &te) {
		return te.Code
	}
	if err != nil {
		return "untyped:" + Code(err.Error())
	}
	return ""
}

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{"", "/", false},
		{".", "/", false},
		{"a/b", "/a/b", false},
		{"./a//b/", "/a/b", false},
		{"a/../b", "/b", false},
		{"/workspace", "/", false},
		{"/workspace/a/b", "/a/b", false},
		{"/workspace/../etc", "", true},
		{"/workspacex/a", "", true},
		{"/etc/passwd", "", true},
		{"..", "", true},
		{"a/../../b", "", true},
		{"a\x00b", "", true},
	} {
		got, err := Clean(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("Clean(%q) = %q, %v; want %q, err %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrEscape) {
			t.Errorf("Clean(%q) error %v does not wrap ErrEscape", tc.in, err)
		}
	}
}

func TestResolveSymlinks(t *testing.T) {
	fsys := newTestFS(t)
	put(t, fsys, map[string]string{
		"/d/f":          "x",
		"/d/rel":        "->f",
		"/d/up":         "->../d/f",
		"/abs":          "->/workspace/d/f",
		"/absroot":      "->/workspace",
		"/out":          "->/etc/passwd",
		"/climb":        "->../etc",
		"/d/deepclimb":  "->../../x",
		"/loop":         "->loop",
		"/dirlink":      "->d",
		"/d/missinglnk": "->nothere",
		"/e/x":          "e/x",
		"/e/l":          "->../d", // e/l/.. is /, not /e
	})
	for _, tc := range []struct {
		in     string
		follow bool
		want   string
		code   Code
	}{
		{"d/rel", true, "/d/f", ""},
		{"d/rel", false, "/d/rel", ""},
		{"d/up", true, "/d/f", ""},
		{"abs", true, "/d/f", ""},
		{"absroot/d/f", true, "/d/f", ""},
		{"dirlink/rel", true, "/d/f", ""},
		{"dirlink/new/file", true, "/d/new/file", ""},
		{"d/missinglnk", true, "/d/nothere", ""},
		{"out", true, "", CodeEscape},
		{"out", false, "/out", ""}, // deleting the link itself is fine
		{"climb/x", false, "", CodeEscape},
		{"d/deepclimb", true, "", CodeEscape},
		{"loop", true, "", CodeInvalid},
		{"e/l/../e/x", true, "/e/x", ""},
		{"/workspace/e/l/../d/f", true, "/d/f", ""},
		{"e/l/../../x", true, "", CodeEscape},
		{"d/f/../f", true, "", CodeNotDir},
	} {
		got, err := resolve(fsys, tc.in, tc.follow)
		if c := code(classify(err)); c != tc.code || got != tc.want {
			t.Errorf("resolve(%q, %v) = %q, %v (%s); want %q, %q", tc.in, tc.follow, got, err, c, tc.want, tc.code)
		}
	}
}

func TestRead(t *testing.T) {
	s, fsys := newTestService(t, Options{MaxReadLines: 3, MaxLineBytes: 10})
	put(t, fsys, map[string]string{
		"/five":   "1\n2\n3\n4\n5\n",
		"/nonl":   "a\nb",
		"/long":   strings.Repeat("é", 20) + "\n",
		"/bin":    "\x89PNG\r\n\x1a\n\x00\x00",
		"/latin1": "caf\xe9\n",
		"/empty":  "",
		"/dir/":   "",
		"/esc":    "->/etc/passwd",
	})
	for _, tc := range []struct {
		name string
		in   ReadInput
		want string // Text() of the result
		code Code
	}{
		{"first page", ReadInput{Path: "five"}, "     1\t1\n     2\t2\n     3\t3\n[showing lines 1-3 of five; more follows: read again with offset=4]\n", ""},
		{"last page", ReadInput{Path: "/workspace/five", Offset: 4}, "     4\t4\n     5\t5\n", ""},
		{"limit", ReadInput{Path: "five", Offset: 2, Limit: 1}, "     2\t2\n[showing lines 2-2 of five; more follows: read again with offset=3]\n", ""},
		{"past end", ReadInput{Path: "five", Offset: 9}, "[five: no lines at offset 9; the file has 10 bytes]\n", ""},
		{"no final newline", ReadInput{Path: "nonl"}, "     1\ta\n     2\tb\n", ""},
		{"long line cut on a rune", ReadInput{Path: "long"}, "     1\tééééé… [line cut: 40 bytes]\n", ""},
		{"empty", ReadInput{Path: "empty"}, "[empty: no lines at offset 1; the file has 0 bytes]\n", ""},
		{"binary", ReadInput{Path: "bin"}, "", CodeBinary},
		{"invalid utf8", ReadInput{Path: "latin1"}, "", CodeBinary},
		{"directory", ReadInput{Path: "dir"}, "", CodeIsDir},
		{"missing", ReadInput{Path: "nope"}, "", CodeNotFound},
		{"escape", ReadInput{Path: "../x"}, "", CodeEscape},
		{"host path", ReadInput{Path: "/etc/passwd"}, "", CodeEscape},
		{"symlink out", ReadInput{Path: "esc"}, "", CodeEscape},
		{"negative", ReadInput{Path: "five", Offset: -1}, "", CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.Read(t.Context(), tc.in)
			if c := code(err); c != tc.code {
				t.Fatalf("code %q (%v), want %q", c, err, tc.code)
			}
			if err == nil && out.Text() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", out.Text(), tc.want)
			}
		})
	}
	_, err := s.Read(t.Context(), ReadInput{Path: "bin"})
	if !strings.Contains(err.Error(), "image/png, 10 bytes") {
		t.Errorf("binary error %q does not name type and size", err)
	}
}

func TestLsFind(t *testing.T) {
	s, fsys := newTestService(t, Options{})
	put(t, fsys, map[string]string{
		"/a.go":                 "package a",
		"/b.txt":                "b",
		"/src/c.go":             "package c",
		"/src/sub/d.go":         "package d",
		"/node_modules/x/e.go":  "package e",
		"/link":                 "->src",
		"/src/sub/deeper/f.txt": "f",
	})
	ls, err := s.Ls(t.Context(), LsInput{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ls.Total != 5 || len(ls.Entries) != 2 || ls.Entries[0].Name != "a.go" || ls.NextOffset != 2 {
		t.Fatalf("ls page 1: %+v", ls)
	}
	ls, err = s.Ls(t.Context(), LsInput{Offset: 2, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ls.Entries {
		names = append(names, e.Name+":"+e.Type)
	}
	if got := strings.Join(names, " "); got != "link:symlink node_modules:dir src:dir" || ls.NextOffset != 0 {
		t.Fatalf("ls page 2: %s next %d", got, ls.NextOffset)
	}
	if ls.Entries[0].Target != "src" {
		t.Errorf("symlink target %q", ls.Entries[0].Target)
	}
	if _, err := s.Ls(t.Context(), LsInput{Path: "a.go"}); code(err) != CodeNotDir {
		t.Errorf("ls of a file: %v", err)
	}

	for _, tc := range []struct {
		in    FindInput
		want  string
		total int
		next  int
	}{
		{FindInput{Pattern: "*.go"}, "a.go node_modules/x/e.go src/c.go src/sub/d.go", 4, 0},
		{FindInput{Pattern: "*.go", Exclude: []string{"node_modules"}}, "a.go src/c.go src/sub/d.go", 3, 0},
		{FindInput{Pattern: "src/**/*.go"}, "src/c.go src/sub/d.go", 2, 0},
		{FindInput{Path: "src", Pattern: "*.go"}, "src/c.go src/sub/d.go", 2, 0},
		{FindInput{Path: "src", Type: "dir"}, "src/sub src/sub/deeper", 2, 0},
		{FindInput{Pattern: "*.go", Limit: 1, Offset: 1}, "node_modules/x/e.go", 4, 2},
		{FindInput{Type: "symlink"}, "link", 1, 0},
	} {
		out, err := s.Find(t.Context(), tc.in)
		if err != nil {
			t.Fatalf("%+v: %v", tc.in, err)
		}
		if got := strings.Join(out.Paths, " "); got != tc.want || out.Total != tc.total || out.NextOffset != tc.next {
			t.Errorf("find %+v = %q total %d next %d; want %q %d %d", tc.in, got, out.Total, out.NextOffset, tc.want, tc.total, tc.next)
		}
	}
	for _, in := range []FindInput{{Pattern: "[a"}, {Type: "socket"}, {Path: "../.."}, {Limit: -1}} {
		if _, err := s.Find(t.Context(), in); err == nil {
			t.Errorf("find %+v: no error", in)
		}
	}
	small := New(func(string) FS { return fsys }, nil, Options{MaxWalk: 3})
	out, err := small.Find(t.Context(), FindInput{})
	if err != nil || !out.Incomplete {
		t.Errorf("walk limit: %+v %v", out, err)
	}
}

func TestGrep(t *testing.T) {
	s, fsys := newTestService(t, Options{MaxGrepFile: 100})
	put(t, fsys, map[string]string{
		"/a.txt":     "one\ntwo\nthree\nfour\nfive\nsix\n",
		"/b.go":      "func Two() {}\nTWO := 2\n",
		"/bin":       "two\x00",
		"/big":       strings.Repeat("two\n", 50),
		"/sub/c.txt": "a.b\naxb\n",
	})
	for _, tc := range []struct {
		name string
		in   GrepInput
		want string
		code Code
	}{
		{"regex", GrepInput{Pattern: "t[wh]"}, "a.txt:2:two\na.txt:3:three\n[skipped big: 200 bytes, over the 100-byte grep limit]\n", ""},
		{"ignore case", GrepInput{Pattern: "two", IgnoreCase: true, Include: []string{"*.go"}}, "b.go:1:func Two() {}\nb.go:2:TWO := 2\n", ""},
		{"fixed", GrepInput{Pattern: "a.b", Fixed: true, Path: "sub"}, "sub/c.txt:1:a.b\n", ""},
		{"not fixed", GrepInput{Pattern: "a.b", Path: "sub/c.txt"}, "sub/c.txt:1:a.b\nsub/c.txt:2:axb\n", ""},
		{"context", GrepInput{Pattern: "^(two|four)$", Path: "a.txt", Context: 1},
			"a.txt-1-one\na.txt:2:two\na.txt-3-three\n--\na.txt:4:four\na.txt-5-five\n", ""},
		{"page", GrepInput{Pattern: "e", Path: "a.txt", Limit: 1, Offset: 1},
			"a.txt:3:three\n[more matches follow: grep again with offset=2]\n", ""},
		{"last page", GrepInput{Pattern: "e", Path: "a.txt", Limit: 2, Offset: 1}, "a.txt:3:three\na.txt:5:five\n", ""},
		{"exclude", GrepInput{Pattern: "two", IgnoreCase: true, Exclude: []string{"*.go", "big"}}, "a.txt:2:two\n", ""},
		{"bad regex", GrepInput{Pattern: "("}, "", CodeInvalid},
		{"no pattern", GrepInput{}, "", CodeInvalid},
		{"context too big", GrepInput{Pattern: "x", Context: 11}, "", CodeInvalid},
		{"escape", GrepInput{Pattern: "x", Path: "/etc"}, "", CodeEscape},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.Grep(t.Context(), tc.in)
			if c := code(err); c != tc.code {
				t.Fatalf("code %q (%v), want %q", c, err, tc.code)
			}
			if err == nil && out.Text() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.Text(), tc.want)
			}
		})
	}
}

func TestWriteEditDelete(t *testing.T) {
	s, fsys := newTestService(t, Options{MaxWriteBytes: 64})
	ctx := t.Context()
	w, err := s.Write(ctx, WriteInput{Path: "/workspace/new/dir/f.txt", Content: "alpha\nbeta\nalpha\n"})
	if err != nil || !w.Created || w.Bytes != 17 || w.Path != "new/dir/f.txt" {
		t.Fatalf("write: %+v %v", w, err)
	}
	if w, err = s.Write(ctx, WriteInput{Path: "new/dir/f.txt", Content: "alpha\nbeta\nalpha\n"}); err != nil || w.Created {
		t.Fatalf("overwrite: %+v %v", w, err)
	}
	for _, tc := range []struct {
		name string
		in   WriteInput
		code Code
	}{
		{"too large", WriteInput{Path: "big", Content: strings.Repeat("x", 65)}, CodeTooLarge},
		{"directory", WriteInput{Path: "new"}, CodeIsDir},
		{"root", WriteInput{Path: "/workspace"}, CodeIsDir},
		{"escape", WriteInput{Path: "../evil"}, CodeEscape},
		{"under a file", WriteInput{Path: "new/dir/f.txt/x"}, CodeNotDir},
	} {
		if _, err := s.Write(ctx, tc.in); code(err) != tc.code {
			t.Errorf("write %s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := fsys.Stat("/big"); err == nil {
		t.Error("refused write left a file")
	}

	const f = "new/dir/f.txt"
	for _, tc := range []struct {
		name  string
		edits []Replacement
		code  Code
	}{
		{"ambiguous", []Replacement{{OldText: "alpha", NewText: "A"}}, CodeAmbiguous},
		{"no match", []Replacement{{OldText: "gamma", NewText: "G"}}, CodeNoMatch},
		{"second fails", []Replacement{{OldText: "beta", NewText: "B"}, {OldText: "beta", NewText: "C"}}, CodeNoMatch},
		{"empty old", []Replacement{{OldText: "", NewText: "x"}}, CodeInvalid},
		{"same", []Replacement{{OldText: "beta", NewText: "beta"}}, CodeInvalid},
		{"grows too large", []Replacement{{OldText: "alpha", NewText: strings.Repeat("y", 40), ReplaceAll: true}}, CodeTooLarge},
		{"none", nil, CodeInvalid},
	} {
		if _, err := s.Edit(ctx, EditInput{Path: f, Edits: tc.edits}); code(err) != tc.code {
			t.Errorf("edit %s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if b, _ := fsys.ReadFile("/" + f); string(b) != "alpha\nbeta\nalpha\n" {
		t.Fatalf("failed edits changed the file: %q", b)
	}
	e, err := s.Edit(ctx, EditInput{Path: f, Edits: []Replacement{
		{OldText: "beta", NewText: "BETA"},
		{OldText: "alpha", NewText: "a", ReplaceAll: true},
	}})
	if err != nil || e.Replacements != 3 {
		t.Fatalf("edit: %+v %v", e, err)
	}
	if b, _ := fsys.ReadFile("/" + f); string(b) != "a\nBETA\na\n" {
		t.Fatalf("edited content %q", b)
	}
	for _, l := range []string{"--- a/new/dir/f.txt", "+++ b/new/dir/f.txt", "-beta", "+BETA", "-alpha", "+a"} {
		if !strings.Contains(e.Diff, l+"\n") {
			t.Errorf("diff lacks %q:\n%s", l, e.Diff)
		}
	}

	put(t, fsys, map[string]string{"/outlink": "->/etc/passwd"})
	for _, tc := range []struct {
		name string
		in   DeleteInput
		code Code
	}{
		{"non-empty dir", DeleteInput{Path: "new"}, CodeNotEmpty},
		{"root", DeleteInput{Path: ".", Recursive: true}, CodeInvalid},
		{"missing", DeleteInput{Path: "nope"}, CodeNotFound},
		{"escape", DeleteInput{Path: "/etc/passwd"}, CodeEscape},
		{"link pointing out", DeleteInput{Path: "outlink"}, ""},
		{"file", DeleteInput{Path: f}, ""},
		{"recursive", DeleteInput{Path: "new", Recursive: true}, ""},
	} {
		if _, err := s.Delete(ctx, tc.in); code(err) != tc.code {
			t.Errorf("delete %s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if ents, _ := fsys.ReadDir("/"); len(ents) != 0 {
		t.Errorf("left after deletes: %v", ents)
	}
}

func TestExec(t *testing.T) {
	var asked []sqlstore.AuditFilter
	s, _ := newTestService(t, Options{ExecOutputBytes: 5000, Audit: func(_ context.Context, f sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error) {
		asked = append(asked, f)
		return []sqlstore.AuditEvent{
			{Seq: 1, Op: "create", Path: "/b", Result: "ok"},
			{Seq: 2, Op: "rename", Path: "/b", Path2: "/a", Result: "ok"},
			{Seq: 3, Op: "unlink", Path: "/ro", Result: "EROFS"},
		}, nil
	}})
	ctx := t.Context()
	out, err := s.ExecTool(ctx, ExecInput{Command: "echo hi"})
	if err != nil || out.Stdout != "hi\n" || out.ExitCode != 0 {
		t.Fatalf("echo: %+v %v", out, err)
	}
	if strings.Join(out.Changed, " ") != "a b" || asked[0].Actor != Actor(out.ID) {
		t.Errorf("changed %q for %+v", out.Changed, asked)
	}
	out, err = s.ExecTool(ctx, ExecInput{Command: "fail 3"})
	if err != nil || out.ExitCode != 3 || out.Stderr != "failing\n" {
		t.Fatalf("fail: %+v %v", out, err)
	}
	out, err = s.ExecTool(ctx, ExecInput{Command: "cat", Stdin: "in"})
	if err != nil || out.Stdout != "in" {
		t.Fatalf("stdin: %+v %v", out, err)
	}
	out, err = s.ExecTool(ctx, ExecInput{Command: "spew"})
	if err != nil || len(out.Stdout) != 5000 || !out.Truncated {
		t.Fatalf("cap: %d bytes truncated %v %v", len(out.Stdout), out.Truncated, err)
	}
	out, err = s.ExecTool(ctx, ExecInput{Command: "sleep", TimeoutSeconds: 0.01})
	if err != nil || !out.TimedOut || out.Killed {
		t.Fatalf("timeout: %+v %v", out, err)
	}
	if _, err := s.Write(ctx, WriteInput{Path: "sub/f", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	out, err = s.ExecTool(ctx, ExecInput{Command: "pwd", Cwd: "sub"})
	if err != nil || out.Stdout != "/workspace/sub\n" {
		t.Fatalf("cwd: %+v %v", out, err)
	}
	for _, tc := range []struct {
		in   ExecInput
		code Code
	}{
		{ExecInput{}, CodeInvalid},
		{ExecInput{Command: "echo", Backend: "vm"}, CodeBackend},
		{ExecInput{Command: "echo", Cwd: "../.."}, CodeEscape},
		{ExecInput{Command: "echo", Cwd: "nope"}, CodeNotFound},
		{ExecInput{Command: "echo", Cwd: "sub/f"}, CodeNotDir},
		{ExecInput{Command: "echo", TimeoutSeconds: -1}, CodeInvalid},
	} {
		if _, err := s.ExecTool(ctx, tc.in); code(err) != tc.code {
			t.Errorf("exec %+v: %v, want %s", tc.in, err, tc.code)
		}
	}
	_, err = s.ExecTool(ctx, ExecInput{Command: "echo", Backend: "vm"})
	if !errors.Is(err, sidecar.ErrUnknownBackend) || !strings.Contains(err.Error(), "available: shell") {
		t.Errorf("unknown backend error %v", err)
	}
}

func TestExecKillAndList(t *testing.T) {
	s, _ := newTestService(t, Options{KeepFinished: 2})
	ids := make(chan string, 1)
	done := make(chan ExecResult, 1)
	go func() {
		res, _ := s.Exec(context.Background(), ExecInput{Command: "sleep"}, nil, nil, func(id string) { ids <- id })
		done <- res
	}()
	id := <-ids
	info, err := s.ExecInfo(id)
	if err != nil || !info.Running || info.Command != "sleep" || info.Backend != "shell" {
		t.Fatalf("running info %+v %v", info, err)
	}
	if _, err := s.Kill(id); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.Killed || res.ExitCode != 130 {
		t.Fatalf("killed result %+v", res)
	}
	info, err = s.ExecInfo(id)
	if err != nil || info.Running || info.Result == nil || !info.Result.Killed {
		t.Fatalf("finished info %+v %v", info, err)
	}
	for range 3 {
		if _, err := s.ExecTool(t.Context(), ExecInput{Command: "echo"}); err != nil {
			t.Fatal(err)
		}
	}
	if l := s.Execs(); len(l) != 2 {
		t.Errorf("kept %d finished execs, want 2", len(l))
	}
	if _, err := s.ExecInfo(id); code(err) != CodeNoExec {
		t.Errorf("evicted exec: %v", err)
	}
	if _, err := s.Kill("nope"); code(err) != CodeNoExec {
		t.Errorf("kill unknown: %v", err)
	}
}

// TestPolicy checks that the core's policy reaches the model as clear tool
// errors and that hidden paths stay invisible to every tool.
func TestPolicy(t *testing.T) {
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	setup, err := sfs.Open(t.Context(), store, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, coreFS{setup}, map[string]string{"/ro/f": "f", "/secret/k": "token", "/open.txt": "token"})
	if err := setup.Close(); err != nil {
		t.Fatal(err)
	}
	core, err := sfs.Open(t.Context(), store, sfs.Options{Policy: sfs.Policy{ReadOnly: []string{"ro/**"}, Hidden: []string{"secret/**", "*.pem"}, QuotaBytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	s := NewForCore(core, nil, Options{})
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() error
		code Code
	}{
		{"write read-only", func() error { _, err := s.Write(ctx, WriteInput{Path: "ro/x", Content: "c"}); return err }, CodeDenied},
		{"delete read-only", func() error { _, err := s.Delete(ctx, DeleteInput{Path: "ro", Recursive: true}); return err }, CodeDenied},
		{"write hidden", func() error { _, err := s.Write(ctx, WriteInput{Path: "key.pem", Content: "c"}); return err }, CodeNotFound},
		{"read hidden", func() error { _, err := s.Read(ctx, ReadInput{Path: "secret/k"}); return err }, CodeNotFound},
		{"over quota", func() error {
			_, err := s.Write(ctx, WriteInput{Path: "big", Content: strings.Repeat("x", 200)})
			return err
		}, CodeNoSpace},
	} {
		if err := tc.call(); code(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	ls, err := s.Ls(ctx, LsInput{})
	if err != nil || ls.Total != 2 {
		t.Errorf("ls sees %+v %v", ls, err)
	}
	g, err := s.Grep(ctx, GrepInput{Pattern: "token"})
	if err != nil || len(g.Matches) != 1 || g.Matches[0].Path != "open.txt" {
		t.Errorf("grep: %+v %v", g, err)
	}
}

// TestExecRefusesBadEnv: an env key execve cannot carry (with '=', empty,
// with NUL) or a value with NUL is refused before the command starts, as
// invalid_argument naming the key; "A=B": "x" became A=B=x, that is A set
// to "B=x", and a NUL cut the variable short.
func TestExecRefusesBadEnv(t *testing.T) {
	s, _ := newTestService(t, Options{})
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // in the message
	}{
		{"equals in key", map[string]string{"A=B": "x"}, `"A=B"`},
		{"empty key", map[string]string{"": "x"}, "empty"},
		{"NUL in key", map[string]string{"A\x00B": "x"}, `"A\x00B"`},
		{"NUL in value", map[string]string{"A": "x\x00y"}, `"A"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := false
			_, err := s.Exec(t.Context(), ExecInput{Command: "echo hi", Env: tc.env}, io.Discard, io.Discard, func(string) { started = true })
			if code(err) != CodeInvalid || !strings.Contains(fmt.Sprint(err), tc.want) || started {
				t.Errorf("env %q: err %v (started %v), want %s naming %s", tc.env, err, started, CodeInvalid, tc.want)
			}
		})
	}
	if out, err := s.ExecTool(t.Context(), ExecInput{Command: "echo hi", Env: map[string]string{"A_1": "x=y", "é": ""}}); err != nil || out.ExitCode != 0 {
		t.Errorf("good env: %+v %v", out, err)
	}
}

// TestNameTooLong: a path with a component over NAME_MAX is the caller's
// mistake, name_too_long naming the 255-byte limit (ENAMETOOLONG), not
// too_large, which says content or a file is over a size limit.
func TestNameTooLong(t *testing.T) {
	s, _ := newTestService(t, Options{})
	ctx := t.Context()
	long := strings.Repeat("n", 256)
	if _, err := s.Write(ctx, WriteInput{Path: "d/f", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"write", func() error { _, err := s.Write(ctx, WriteInput{Path: "d/" + long, Content: "x"}); return err }},
		{"write under", func() error { _, err := s.Write(ctx, WriteInput{Path: long + "/f", Content: "x"}); return err }},
		{"read", func() error { _, err := s.Read(ctx, ReadInput{Path: "d/" + long}); return err }},
		{"edit", func() error {
			_, err := s.Edit(ctx, EditInput{Path: long, Edits: []Replacement{{OldText: "a", NewText: "b"}}})
			return err
		}},
		{"delete", func() error { _, err := s.Delete(ctx, DeleteInput{Path: "d/" + long}); return err }},
		{"ls", func() error { _, err := s.Ls(ctx, LsInput{Path: long}); return err }},
		{"exec cwd", func() error { _, err := s.ExecTool(ctx, ExecInput{Command: "pwd", Cwd: long}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if code(err) != CodeNameTooLong || !strings.Contains(fmt.Sprint(err), "255-byte") || !strings.Contains(fmt.Sprint(err), "256 bytes") {
				t.Errorf("%v (%s), want %s naming the 255-byte limit", err, code(err), CodeNameTooLong)
			}
		})
	}
}
