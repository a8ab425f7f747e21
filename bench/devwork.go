package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sqlfs/sqlfs/bench/harness"
)

// gitEnv makes real git independent of the host's configuration: no global or
// system config, fixed identities, no automatic gc or maintenance in the timings.
var gitEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
	"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost",
	"GIT_CONFIG_COUNT=3",
	"GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
	"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false",
	"GIT_CONFIG_KEY_2=init.defaultBranch", "GIT_CONFIG_VALUE_2=main",
}

// gitPhases run real git on a generated tree of tree.Files files: init and add
// -A, commit, a warm status, and a local clone (which hard-links the objects).
func gitPhases(ctx context.Context, t *harness.Target, tarPath string, tree treeInfo, rec recorder) error {
	repo := filepath.Join(t.Root, "repo")
	clone := filepath.Join(t.Root, "clone")
	git := func(dir string, want int, args ...string) error {
		return runTool(command(ctx, dir, gitEnv, "git", args...), want)
	}
	status := func() error { return git(repo, 0, "status", "--porcelain") }
	phases := []phase{
		{name: "git add -A", ops: tree.Files, settle: true,
			before: func() error {
				if err := os.Mkdir(repo, 0o755); err != nil {
					return err
				}
				return tool(ctx, 0, "tar", "-xf", tarPath, "-C", repo)
			},
			run: func() error {
				if err := git(repo, 0, "init", "-q"); err != nil {
					return err
				}
				return git(repo, 0, "add", "-A")
			}},
		{name: "git commit", ops: tree.Files, run: func() error { return git(repo, 0, "commit", "-q", "-m", "tree") }},
		{name: "git status warm", ops: tree.Files, before: status, run: status},
		{name: "git clone", ops: tree.Files,
			run:   func() error { return git(t.Root, 0, "clone", "-q", repo, clone) },
			after: func() error { return git(clone, 0, "status", "--porcelain") }},
		{name: "rm -rf repo", ops: 2 * tree.Files,
			run: func() error { return tool(ctx, 0, "rm", "-rf", repo, clone) }},
	}
	return runPhases(ctx, t, phases, rec)
}

// writeCProject writes a C program of files sources (one function each, all
// declared in one header) with a Makefile, and returns what the program prints.
func writeCProject(dir string, files int) (string, error) {
	var hdr, calls strings.Builder
	hdr.WriteString("#ifndef LIB_H\n#define LIB_H\n")
	var sum int64
	for k := range files {
		fmt.Fprintf(&hdr, "long f%d(long x);\n", k)
		fmt.Fprintf(&calls, "\ts += f%d(1);\n", k)
		// f_k(1) = 1*k + k%7 + the loop's 0+1+...+9.
		sum += int64(k + k%7 + 45)
	}
	hdr.WriteString("#endif\n")
	put := func(name, body string) error {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(body), 0o644)
	}
	if err := put("include/lib.h", hdr.String()); err != nil {
		return "", err
	}
	for k := range files {
		src := fmt.Sprintf(`#include "lib.h"

static long step%[1]d(long x, int i)
{
	switch (i %% 4) {
	case 0: return x + i;
	case 1: return x ^ (i << 1) ^ (i << 1);
	case 2: return x + (i - i);
	default: return x;
	}
}

long f%[1]d(long x)
{
	long acc = x * %[1]d + %[2]d;
	for (int i = 0; i < 10; i++)
		acc = step%[1]d(acc, i) + (i %% 4 == 0 ? 0 : i);
	return acc;
}
`, k, k%7)
		if err := put(fmt.Sprintf("src/f%04d.c", k), src); err != nil {
			return "", err
		}
	}
	main := "#include <stdio.h>\n#include \"lib.h\"\n\nint main(void)\n{\n\tlong s = 0;\n" + calls.String() + "\tprintf(\"%ld\\n\", s);\n\treturn 0;\n}\n"
	if err := put("main.c", main); err != nil {
		return "", err
	}
	mk := `CFLAGS = -O1 -pipe -Iinclude
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c)) main.o
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c include/lib.h
	$(CC) $(CFLAGS) -c -o $@ $<
`
	return strconv.FormatInt(sum, 10), put("Makefile", mk)
}

// buildPhases build the C project at src with make -j2 on the target, check the
// program's output, then run make again with nothing to do (a stat of every
// source and object).
func buildPhases(ctx context.Context, t *harness.Target, src string, files int, want string, rec recorder) error {
	dir := filepath.Join(t.Root, "cproject")
	check := func() error {
		out, err := exec.CommandContext(ctx, filepath.Join(dir, "prog")).Output()
		if err != nil {
			return fmt.Errorf("the built program: %w", err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			return fmt.Errorf("the built program printed %q, want %q", got, want)
		}
		return nil
	}
	phases := []phase{
		{name: "make -j2", ops: files + 1, settle: true,
			before: func() error { return tool(ctx, 0, "cp", "-r", src, dir) },
			run:    func() error { return runTool(command(ctx, dir, nil, "make", "-s", "-j2"), 0) },
			after:  check},
		{name: "make -j2 again", ops: files + 1,
			run: func() error { return runTool(command(ctx, dir, nil, "make", "-j2", "-q"), 0) }},
	}
	return runPhases(ctx, t, phases, rec)
}

// npmProject is a real project with a checked-in lockfile, installed by npm ci from
// a warm cache. The cache is filled, and the installed tree counted, once per run.
type npmProject struct {
	dir   string // holds package.json and package-lock.json
	cache string // npm's cache directory
	files int    // regular files npm ci installs
}

func (p *npmProject) env() []string {
	return []string{"npm_config_cache=" + p.cache, "npm_config_update_notifier=false",
		"npm_config_fund=false", "npm_config_audit=false", "npm_config_loglevel=error"}
}

// install copies the project into dir and runs npm ci there from the cache.
func (p *npmProject) install(ctx context.Context, dir string) error {
	return runTool(command(ctx, dir, p.env(), "npm", "ci", "--prefer-offline", "--ignore-scripts"), -1)
}

func (p *npmProject) copyTo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(p.dir, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// prepareNPM fills the cache (from the registry the first time) by one install
// into scratch, and counts the files it installs.
func prepareNPM(ctx context.Context, project, cache, scratch string) (*npmProject, error) {
	p := &npmProject{dir: project, cache: cache}
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, fmt.Errorf("-npm needs npm: %w", err)
	}
	slog.Info("filling the npm cache", "project", project, "cache", cache)
	if err := p.copyTo(scratch); err != nil {
		return nil, err
	}
	if err := p.install(ctx, scratch); err != nil {
		return nil, err
	}
	n, err := countFiles(filepath.Join(scratch, "node_modules"))
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("npm ci installed no files")
	}
	p.files = n
	return p, os.RemoveAll(scratch)
}

func countFiles(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	return n, err
}

// npmPhases run npm ci of the project on the target, check the installed tree,
// and remove node_modules with rm -rf.
func npmPhases(ctx context.Context, t *harness.Target, p *npmProject, rec recorder) error {
	dir := filepath.Join(t.Root, "npm")
	nm := filepath.Join(dir, "node_modules")
	phases := []phase{
		{name: "npm ci", ops: p.files,
			before: func() error { return p.copyTo(dir) },
			run:    func() error { return p.install(ctx, dir) },
			after: func() error {
				n, err := countFiles(nm)
				if err == nil && n != p.files {
					err = fmt.Errorf("npm ci installed %d files, want %d", n, p.files)
				}
				return err
			}},
		{name: "rm -rf node_modules", ops: p.files,
			run: func() error { return tool(ctx, 0, "rm", "-rf", nm) }},
	}
	return runPhases(ctx, t, phases, rec)
}
