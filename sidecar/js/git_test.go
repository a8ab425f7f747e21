package js

import (
	"context"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// gitEnv fixes identities and dates, so both runs make the same commits.
var gitEnv = map[string]string{
	"GIT_AUTHOR_NAME": "A U Thor", "GIT_AUTHOR_EMAIL": "author@example.com", "GIT_AUTHOR_DATE": "1700000000 +0000",
	"GIT_COMMITTER_NAME": "C O Mitter", "GIT_COMMITTER_EMAIL": "committer@example.com", "GIT_COMMITTER_DATE": "1700000000 +0000",
}

// TestGitModule: sqlfs:git prints what the shell's git built-in prints for
// the same steps on a fresh store, and its changes are audited under the
// exec's actor.
func TestGitModule(t *testing.T) {
	steps := []struct{ shell, js string }{
		{`git init -q r`, `out(await git.init('r', { args: ['-q'] }))`},
		{`cd r && git add a.txt b.txt`, `out(await git.add(['a.txt', 'b.txt'], { cwd: 'r' }))`},
		{`cd r && git commit -m first`, `out(await git.commit('first', { cwd: 'r' }))`},
		{`cd r && git status`, `out(await git.status({ cwd: 'r' }))`},
		{`echo more >> r/a.txt; cd r && git status --short`, `fs.appendFileSync('r/a.txt', 'more\n'); out(await git.status({ cwd: 'r', args: ['--short'] }))`},
		{`cd r && git diff`, `out(await git.diff({ cwd: 'r' }))`},
		{`cd r && git add . && git commit -q -m second`, `out(await git.add('.', { cwd: 'r' }) + await git.commit('second', { cwd: 'r', args: ['-q'] }))`},
		{`cd r && git log --stat`, `process.chdir('r'); out(await git.log({ args: ['--stat'] }))`},
		{`git clone -q r c && cd c && git log --oneline`, `process.chdir('..'); out(await git.clone('r', 'c', { args: ['-q'] }) + await git.log({ cwd: 'c', args: ['--oneline'] }))`},
		{`cd c && git diff HEAD~1 --stat`, `out(await git.run(['diff', 'HEAD~1', '--stat'], { cwd: 'c' }))`},
	}
	setup := `mkdir -p r && printf 'one\n' > r/a.txt && printf 'two\n' > r/b.txt`

	_, sh, _ := newTestBackend(t, Options{})
	var script strings.Builder
	script.WriteString(setup + "\n")
	for _, s := range steps {
		script.WriteString("(" + s.shell + ")\necho '--'\n")
	}
	want := run(t, sh, sidecar.Request{Command: script.String(), Env: gitEnv})
	if want.ExitCode != 0 {
		t.Fatalf("shell git: exit %d, stderr %q", want.ExitCode, want.stderr)
	}

	b, jsShell, fsys := newTestBackend(t, Options{})
	if out := run(t, jsShell, sidecar.Request{Command: setup}); out.ExitCode != 0 {
		t.Fatalf("setup: %q", out.stderr)
	}
	var prog strings.Builder
	prog.WriteString("const git = require('sqlfs:git'), fs = require('fs'), out = (s) => process.stdout.write(s + '--\\n');\n")
	for _, s := range steps {
		prog.WriteString(s.js + ";\n")
	}
	got := run(t, b, sidecar.Request{Command: prog.String(), Env: gitEnv, Actor: "exec:js-git"})
	if got.stdout != want.stdout || got.ExitCode != 0 {
		t.Errorf("js: exit %d stderr %q\nstdout:\n%s\nshell git printed:\n%s", got.ExitCode, got.stderr, got.stdout, want.stdout)
	}

	if err := fsys.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs, err := fsys.Store().Audit(context.Background(), sqlstore.AuditFilter{Actor: "exec:js-git"})
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[string]bool{}
	for _, e := range evs {
		wrote[e.Path] = true
	}
	for _, p := range []string{"/r/.git/HEAD", "/r/.git/index", "/c/.git/HEAD", "/c/a.txt"} {
		if !wrote[p] {
			t.Errorf("no audit event of exec:js-git for %s: %v", p, wrote)
		}
	}
}

// TestGitModuleErrors: a failing git command rejects with its status and
// stderr, and a command the built-in does not support changes nothing.
func TestGitModuleErrors(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	out := run(t, b, sidecar.Request{Command: `const git = require('sqlfs:git'), fs = require('fs');
for (const f of [() => git.status(), () => git.clone('nope', 'x'), () => git.run(['rebase', 'main']), () => git.log({ cwd: 'missing' })]) {
  await f().then((s) => console.log('resolved', s), (e) => console.log(e.code, e.status, JSON.stringify(e.message)));
}
console.log(fs.readdirSync('.').length);`, Env: gitEnv})
	want := `ERR_SQLFS_GIT 128 "fatal: not a git repository (or any of the parent directories): .git"
ERR_SQLFS_GIT 128 "fatal: repository 'nope' does not exist"
ERR_SQLFS_GIT 1 "git: 'rebase' is not supported by the shell backend's git (use the container backend)"
ENOENT undefined "ENOENT: no such file or directory, chdir 'missing'"
0
`
	if out.stdout != want || out.ExitCode != 0 {
		t.Errorf("stdout:\n%s\nwant:\n%s\nexit %d stderr %q", out.stdout, want, out.ExitCode, out.stderr)
	}
}
