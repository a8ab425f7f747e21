package shell

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// The differential corpus: every case in testdata/corpus/*.txt runs once
// with /bin/bash and coreutils in a native temporary directory and once with
// the shell backend on a store, both starting from corpusFixture; stdout,
// the exit code and the resulting tree (names, types, contents, modes,
// symlink targets) must match.
//
// File format: lines before the first "=== " header are comments. Each case
// starts with "=== NAME" and runs until the next header. A header
// "=== NAME !skip REASON" keeps a case that cannot match documented
// instead of dropping it.

// corpusFixture is the tree both sides start from: content, "/" for a
// directory, "->target" for a symlink.
var corpusFixture = map[string]string{
	"README.md":               "# Demo project\n\nA small project for the corpus.\nTODO: write the docs\nSee docs/guide.txt.\n",
	"src/main.go":             "package main\n\nimport \"fmt\"\n\n// TODO: flags\nfunc main() {\n\tfmt.Println(greet(\"world\"))\n}\n",
	"src/util.go":             "package main\n\nfunc greet(name string) string {\n\treturn \"hello, \" + name\n}\n\nfunc add(a, b int) int { return a + b }\n",
	"src/util_test.go":        "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
	"src/lib/helper.py":       "#!/usr/bin/env python3\n# TODO: type hints\ndef helper(x):\n    return x * 2\n\nprint(helper(21))\n",
	"src/lib/README":          "lib notes\n",
	"docs/guide.txt":          "Getting started\n===============\n\nInstall the tool.\nRun the tool.\n\nAdvanced usage\n--------------\n\nConfigure the tool with a file.\nThe tool reads config.json.\n",
	"docs/notes.md":           "- alpha\n- beta\n- gamma\n",
	"data/users.csv":          "id,name,age,city\n1,alice,30,paris\n2,bob,25,berlin\n3,carol,35,paris\n4,dave,25,rome\n5,eve,41,berlin\n",
	"data/scores.txt":         "bob 25\nalice 30\ncarol 25\ndave 4\nalice 9\n",
	"data/config.json":        "{\n  \"count\": 3,\n  \"deps\": {\n    \"a\": \"^1.0\",\n    \"b\": \"~2.1\"\n  },\n  \"name\": \"demo\",\n  \"tags\": [\"x\", \"y\"],\n  \"version\": \"1.2.3\"\n}\n",
	"data/items.json":         "[{\"id\": 1, \"name\": \"apple\", \"price\": 1.5, \"tags\": [\"fruit\", \"red\"]},\n {\"id\": 2, \"name\": \"bread\", \"price\": 3, \"tags\": [\"bakery\"]},\n {\"id\": 3, \"name\": \"cherry\", \"price\": 0.25, \"tags\": [\"fruit\"]}]\n",
	"data/words.txt":          "pear\napple\nfig\napple\nbanana\nPear\nfig\nfig\nkiwi\n",
	"data/numbers.txt":        "10\n2\n33\n-4\n2\n1.5\n100\n",
	"data/empty.txt":          "",
	"data/noeol.txt":          "first line\nno newline at end",
	"data/spaces in name.txt": "file with spaces\n",
	"data/tabs.tsv":           "name\tqty\tunit\nflour\t500\tg\nmilk\t1\tl\neggs\t6\tpcs\n",
	"logs/app.log":            "2024-01-01 10:00:00 INFO start\n2024-01-01 10:00:05 WARN disk 80%\n2024-01-01 10:01:00 ERROR failed to open file\n2024-01-01 10:02:00 INFO retry\n2024-01-01 10:02:30 ERROR timeout\n2024-01-01 10:03:00 INFO done\n",
	"logs/old.log":            "2023-12-31 23:59:59 INFO bye\n",
	"bin/run.sh":              "#!/bin/sh\necho running\n",
	"link-to-readme":          "->README.md",
	"emptydir":                "/",
	".hidden":                 "secret\n",
}

// corpusModes are the fixture's non-default permissions (files 0644,
// directories 0755 otherwise).
var corpusModes = map[string]fs.FileMode{"bin/run.sh": 0o755, "logs/old.log": 0o600}

// corpusEnv is the environment of both sides (plus PATH natively).
var corpusEnv = map[string]string{"LC_ALL": "C.UTF-8", "TZ": "UTC", "LANG": "C.UTF-8"}

// corpusEpoch is the fixture's first mtime; each path is a minute later
// than the previous in sorted order, so -newer and ls -t are stable.
var corpusEpoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

type corpusCase struct {
	file, name, script, skip string
	line                     int
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var cases []corpusCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur *corpusCase
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if header, ok := strings.CutPrefix(line, "=== "); ok {
				name, skip, _ := strings.Cut(header, " !skip ")
				cases = append(cases, corpusCase{file: filepath.Base(f), name: strings.TrimSpace(name), skip: skip, line: n})
				cur = &cases[len(cases)-1]
				continue
			}
			if cur != nil {
				cur.script += line + "\n"
			}
		}
	}
	return cases
}

func corpusPaths() []string {
	paths := make([]string, 0, len(corpusFixture))
	for p := range corpusFixture {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

func corpusPerm(p string) fs.FileMode {
	if m, ok := corpusModes[p]; ok {
		return m
	}
	if corpusFixture[p] == "/" {
		return 0o755
	}
	return 0o644
}

// corpusTree is where a fixture is built: a native directory or a store.
// Names are relative to the tree's root.
type corpusTree interface {
	mkdirAll(name string) error
	mkdir(name string) error
	symlink(target, name string) error
	writeFile(name, content string) error
	chmod(name string, perm fs.FileMode) error
	chtimes(name string, t time.Time) error
}

type nativeTree string

func (d nativeTree) path(name string) string           { return filepath.Join(string(d), name) }
func (d nativeTree) mkdirAll(name string) error        { return os.MkdirAll(d.path(name), 0o755) }
func (d nativeTree) mkdir(name string) error           { return os.Mkdir(d.path(name), 0o755) }
func (d nativeTree) symlink(target, name string) error { return os.Symlink(target, d.path(name)) }
func (d nativeTree) writeFile(name, content string) error {
	return os.WriteFile(d.path(name), []byte(content), 0o644)
}
func (d nativeTree) chmod(name string, perm fs.FileMode) error { return os.Chmod(d.path(name), perm) }
func (d nativeTree) chtimes(name string, t time.Time) error    { return os.Chtimes(d.path(name), t, t) }

type storeFixture struct{ f *sfs.FS }

func (s storeFixture) mkdirAll(name string) error        { return s.f.MkdirAll("/"+name, 0o755) }
func (s storeFixture) mkdir(name string) error           { return s.f.Mkdir("/"+name, 0o755) }
func (s storeFixture) symlink(target, name string) error { return s.f.Symlink(target, "/"+name) }
func (s storeFixture) writeFile(name, content string) error {
	return s.f.WriteFile("/"+name, []byte(content), 0o644)
}
func (s storeFixture) chmod(name string, perm fs.FileMode) error {
	return s.f.Chmod("/"+name, uint32(perm))
}
func (s storeFixture) chtimes(name string, t time.Time) error { return s.f.Chtimes("/"+name, t, t) }

// buildFixture creates corpusFixture in tree, with its modes and mtimes.
func buildFixture(t *testing.T, tree corpusTree) {
	t.Helper()
	paths := corpusPaths()
	for _, p := range paths {
		if dir := path.Dir(p); dir != "." {
			if err := tree.mkdirAll(dir); err != nil {
				t.Fatal(err)
			}
		}
		c := corpusFixture[p]
		var err error
		switch {
		case c == "/":
			err = tree.mkdir(p)
		case strings.HasPrefix(c, "->"):
			err = tree.symlink(c[2:], p)
		default:
			err = tree.writeFile(p, c)
		}
		if err == nil && !strings.HasPrefix(c, "->") {
			err = tree.chmod(p, corpusPerm(p))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Times last: creating children touches the directories.
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		if strings.HasPrefix(corpusFixture[p], "->") {
			continue
		}
		if err := tree.chtimes(p, corpusEpoch.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"src/lib", "src", "docs", "data", "logs", "bin"} {
		if err := tree.chtimes(d, corpusEpoch); err != nil {
			t.Fatal(err)
		}
	}
}

// corpusEntry renders one tree entry for comparison.
func corpusEntry(p string, mode fs.FileMode, content []byte, target string) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return fmt.Sprintf("%s -> %s\n", p, target)
	case mode.IsDir():
		return fmt.Sprintf("%s/ %04o\n", p, mode.Perm())
	}
	if len(content) > 256 || !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
		// Binary or long: a digest keeps failure reports readable.
		return fmt.Sprintf("%s %04o sha256:%x (%d bytes)\n", p, mode.Perm(), sha256.Sum256(content), len(content))
	}
	return fmt.Sprintf("%s %04o %q\n", p, mode.Perm(), content)
}

func dumpNative(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil || full == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, full)
		info, err := os.Lstat(full)
		if err != nil {
			return err
		}
		var content []byte
		var target string
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err = os.Readlink(full)
		case info.Mode().IsRegular():
			content, err = os.ReadFile(full)
		}
		b.WriteString(corpusEntry(rel, info.Mode(), content, target))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func dumpStore(t *testing.T, fsys *sfs.FS, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name)
		a, err := fsys.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		mode := a.FileMode()
		var content []byte
		var target string
		switch {
		case mode&fs.ModeSymlink != 0:
			target, err = fsys.Readlink(name)
		case mode.IsRegular():
			content, err = fsys.ReadFile(name)
		}
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(corpusEntry(strings.TrimPrefix(name, "/"), mode, content, target))
		if mode.IsDir() {
			b.WriteString(dumpStore(t, fsys, name))
		}
	}
	return b.String()
}

// corpusTempDir is a fresh directory for one side of a case. On tmpfs
// when the machine has one: the store fsyncs its commits, and on a disk
// that alone made the corpus ten times slower without testing anything.
func corpusTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "sqlfs-corpus-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

type corpusResult struct {
	stdout, stderr, tree string
	code                 int
}

func runCorpusBash(t *testing.T, script string) corpusResult {
	t.Helper()
	dir := corpusTempDir(t)
	work := filepath.Join(dir, "w")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	buildFixture(t, nativeTree(work))
	scriptPath := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", scriptPath)
	cmd.Dir = work
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work}
	for k, v := range corpusEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// A process group, so a timeout kills what the script started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("bash: %v", err)
	}
	return corpusResult{out.String(), errb.String(), dumpNative(t, work), code}
}

func runCorpusBackend(t *testing.T, script string) corpusResult {
	t.Helper()
	fsys, err := sfs.Open(context.Background(), filepath.Join(corpusTempDir(t), "ws.db"), sfs.Options{NoAudit: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := New(fsys, Options{})
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
		if err := fsys.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	buildFixture(t, storeFixture{fsys})
	var out, errb bytes.Buffer
	res, err := b.Exec(context.Background(), sidecar.Request{Command: script, Dir: sidecar.WorkspaceDir,
		Env: corpusEnv, Stdout: &out, Stderr: &errb, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	return corpusResult{out.String(), errb.String(), dumpStore(t, fsys, "/"), res.ExitCode}
}

func TestCorpus(t *testing.T) {
	_, err := os.Stat("/bin/bash")
	testenv.Require(t, "the corpus needs /bin/bash as the reference (Debian package bash)", err)
	byFile := map[string][]corpusCase{}
	var order []string
	for _, c := range loadCorpus(t) {
		if _, ok := byFile[c.file]; !ok {
			order = append(order, c.file)
		}
		byFile[c.file] = append(byFile[c.file], c)
	}
	for _, file := range order {
		t.Run(strings.TrimSuffix(file, ".txt"), func(t *testing.T) {
			t.Parallel()
			for _, c := range byFile[file] {
				t.Run(c.name, func(t *testing.T) {
					if c.skip != "" {
						t.Skipf("%s:%d: %s", c.file, c.line, c.skip)
					}
					want := runCorpusBash(t, c.script)
					if want.code == 127 && strings.Contains(want.stderr, "command not found") {
						testenv.Require(t, fmt.Sprintf("%s:%d: the reference lacks a command (Makefile DEB_PKGS)", c.file, c.line),
							errors.New(strings.TrimSpace(want.stderr)))
					}
					got := runCorpusBackend(t, c.script)
					var problems []string
					if got.stdout != want.stdout {
						problems = append(problems, "stdout differs:\n"+udiff.Unified("bash", "shell", want.stdout, got.stdout))
					}
					if got.code != want.code {
						problems = append(problems, fmt.Sprintf("exit code: bash %d, shell %d", want.code, got.code))
					}
					if got.tree != want.tree {
						problems = append(problems, "tree differs:\n"+udiff.Unified("bash", "shell", want.tree, got.tree))
					}
					if len(problems) > 0 {
						t.Errorf("%s:%d:\n%s\n%s\nbash stderr: %s\nshell stderr: %s", c.file, c.line, c.script,
							strings.Join(problems, "\n"), want.stderr, got.stderr)
					}
				})
			}
		})
	}
}
