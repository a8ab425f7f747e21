package js

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func TestPrograms(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	for _, tc := range []struct {
		name, code, stdout string
		exit               int
		stderr             string
	}{
		{"print", `console.log(1)`, "1\n", 0, ""},
		{"event loop order", `setTimeout(() => console.log('timer'), 1); setImmediate(() => console.log('immediate'));
			Promise.resolve().then(() => console.log('micro')); process.nextTick(() => console.log('tick')); console.log('sync')`,
			"sync\ntick\nmicro\nimmediate\ntimer\n", 0, ""},
		{"interval cleared", `let n = 0; const t = setInterval(() => { if (++n === 3) { clearInterval(t); console.log(n); } }, 1)`, "3\n", 0, ""},
		{"unref timer does not hold", `setTimeout(() => console.log('never'), 10000).unref(); console.log('done')`, "done\n", 0, ""},
		{"pending promise ends", `new Promise(() => {}); console.log('x')`, "x\n", 0, ""},
		{"uncaught error", `function f() { throw new Error('boom'); } f()`, "", 1, "Error: boom\n    at f ("},
		{"uncaught in timer", `setTimeout(() => { throw new TypeError('late'); }, 1)`, "", 1, "TypeError: late"},
		{"unhandled rejection", `Promise.reject(new Error('rej'))`, "", 1, "Error: rej"},
		{"exit code", `process.exitCode = 3; console.log('a')`, "a\n", 3, ""},
		{"exit runs exit handlers", `process.on('exit', (c) => console.log('bye', c)); process.exit(4); console.log('no')`, "bye 4\n", 4, ""},
		{"syntax error", `let = ;`, "", 1, "SyntaxError"},
		{"typescript", `const n: number = 2; interface P { x: number } const p: P = { x: n }; console.log(p)`, "{ x: 2 }\n", 0, ""},
		{"esm import", `import { join } from 'node:path'; export const x = 1; console.log(join('a', 'b'))`, "a/b\n", 0, ""},
		{"top-level await", `import { setTimeout as sleep } from 'node:timers/promises'; await sleep(1); console.log(await Promise.resolve(5))`, "5\n", 0, ""},
		{"fetch refused", `fetch('http://example.com/').catch((e) => console.log(e.message, '|', e.cause.code))`, "fetch failed: network access is disabled for this exec; allow it with allow_network (sqlfs-exec run --allow-network) | ERR_SQLFS_NO_NETWORK\n", 0, ""},
		{"child_process", `const cp = require('child_process'); require('fs').writeFileSync('f', 'x\ny\n'); console.log(cp.execSync('wc -l < f', { encoding: 'utf8' }).trim());
			try { cp.execSync('exit 3', { stdio: 'pipe' }) } catch (e) { console.log(e.status) }`, "2\n3\n", 0, ""},
		{"fs error fields", `try { require('fs').readFileSync('missing.txt') } catch (e) { console.log(e.code, e.errno, e.syscall, e.path, e.message) }`,
			"ENOENT -2 open missing.txt ENOENT: no such file or directory, open 'missing.txt'\n", 0, ""},
		{"promises error fields", `require('fs/promises').rmdir('nodir').catch((e) => console.log(e.code, e.syscall))`, "ENOENT rmdir\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, b, sidecar.Request{Command: tc.code})
			if out.stdout != tc.stdout || out.ExitCode != tc.exit || !strings.Contains(out.stderr, tc.stderr) {
				t.Errorf("got exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q",
					out.ExitCode, out.stdout, out.stderr, tc.exit, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{MaxHeapBytes: 64 << 20})
	for _, tc := range []struct {
		name   string
		code   string
		limits sidecar.Limits
		check  func(out execOut) bool
	}{
		{"infinite loop", `for (;;) {}`, sidecar.Limits{Timeout: 200 * time.Millisecond},
			func(out execOut) bool { return out.TimedOut && out.ExitCode == 124 }},
		{"never-settling interval", `new Promise(() => setInterval(() => {}, 5))`, sidecar.Limits{Timeout: 200 * time.Millisecond},
			func(out execOut) bool { return out.TimedOut && out.ExitCode == 124 }},
		{"async loop", `(async () => { for (;;) await null })()`, sidecar.Limits{Timeout: 200 * time.Millisecond},
			func(out execOut) bool { return out.TimedOut && out.ExitCode == 124 }},
		{"output cap", `for (let i = 0; i < 10000; i++) console.log('x'.repeat(99))`, sidecar.Limits{MaxOutputBytes: 1000},
			func(out execOut) bool {
				return out.Truncated && out.ExitCode == 0 && len(out.stdout) < 1200 && strings.Contains(out.stdout, "output truncated")
			}},
		{"heap budget", `const a = []; for (;;) a.push(new Array(1e5).fill(1.5))`, sidecar.Limits{Timeout: testenv.Slack(30 * time.Second)},
			func(out execOut) bool {
				return out.ExitCode == 134 && strings.Contains(out.stderr, "heap out of memory")
			}},
		{"write budget", `require('fs').writeFileSync('big', Buffer.alloc(1 << 20))`, sidecar.Limits{MaxWriteBytes: 1000},
			func(out execOut) bool { return out.ExitCode != 0 && out.LimitHit == "max_write_bytes" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out := run(t, b, sidecar.Request{Command: tc.code, Limits: tc.limits})
			if !tc.check(out) {
				t.Errorf("exit %d, timed out %v, truncated %v, limit %q, stdout %.200q, stderr %.300q",
					out.ExitCode, out.TimedOut, out.Truncated, out.LimitHit, out.stdout, out.stderr)
			}
			// A stopped program ends soon after its deadline, even under -race
			// on a loaded machine.
			if d := time.Since(start); tc.limits.Timeout > 0 && tc.limits.Timeout < time.Second && d > tc.limits.Timeout+testenv.Slack(5*time.Second) {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestFreshRuntimeAndAudit(t *testing.T) {
	b, _, fsys := newTestBackend(t, Options{})
	run(t, b, sidecar.Request{Command: `globalThis.leak = 1; require('fs').writeFileSync('a.txt', 'x')`, Actor: "exec:js-test"})
	if out := run(t, b, sidecar.Request{Command: `console.log(typeof leak)`}); out.stdout != "undefined\n" {
		t.Errorf("second exec sees %q of the first", out.stdout)
	}
	if err := fsys.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs, err := fsys.Store().Audit(context.Background(), sqlstore.AuditFilter{Actor: "exec:js-test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[len(evs)-1].Path != "/a.txt" {
		t.Errorf("audit for exec:js-test: %+v", evs)
	}
}

func TestNodeCommand(t *testing.T) {
	_, sh, _ := newTestBackend(t, Options{})
	out := run(t, sh, sidecar.Request{Command: `echo 'module.exports = (a) => a * 2' > lib.js
echo '{"n": 21}' > data.json
printf 'const d = require("./data.json"); console.log(require("./lib")(d.n), process.argv.slice(2).join(","))' > main.js
node main.js p q; node -p '[1, "a"]'; node -e 'console.log(40 + 2)'; echo 'console.log("stdin")' | node`})
	want := "42 p,q\n[ 1, 'a' ]\n42\nstdin\n"
	if out.stdout != want || out.ExitCode != 0 {
		t.Errorf("stdout %q exit %d stderr %q; want %q", out.stdout, out.ExitCode, out.stderr, want)
	}
}

// TestFetchAllowed: fetch works only when the operator gave the backend an
// egress transport and the exec asks for the network, and reaches only
// what the operator's rules allow.
func TestFetchAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", r.Header.Get("X-In"))
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"method":%q,"body":%q}`, r.Method, body)
	}))
	defer srv.Close()
	prog := `const r = await fetch('` + srv.URL + `', { method: 'post', body: 'hi', headers: { 'X-In': 'v' } });
console.log(r.status, r.ok, r.headers.get('x-echo'), await r.json());
await fetch('http://127.0.0.1:1/').catch((e) => console.log(e.message));`
	allowed := "201 true v { method: 'POST', body: 'hi' }\nfetch failed\n"
	refused := "TypeError: fetch failed: network access is disabled for this exec; allow it with allow_network"
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, tc := range []struct {
		name           string
		rules          []string // the operator's --egress-allow; nil: no transport
		exec           bool     // the request's allow_network
		stdout, stderr string
	}{
		{"operator and exec allow", []string{"127.0.0.1:" + port}, true, allowed, ""},
		{"operator allows, exec does not ask", []string{"127.0.0.1:" + port}, false, "", refused},
		// The exec cannot grant itself what the operator did not.
		{"exec asks, operator allows nothing", nil, true, "", refused},
		// A glob reaches no loopback port: not the test server, not the
		// owner's metrics or link server.
		{"operator allows every public host", []string{"*"}, true, "", "egress to 127.0.0.1:" + port + " refused"},
	} {
		prog := prog
		if strings.Contains(tc.stderr, "egress") {
			prog = `await fetch('` + srv.URL + `').catch((e) => { console.error(e.cause.message); process.exit(1) })`
		}
		t.Run(tc.name, func(t *testing.T) {
			var shOpts shell.Options
			if tc.rules != nil {
				p, err := egress.NewPolicy(tc.rules...)
				if err != nil {
					t.Fatal(err)
				}
				shOpts.HTTP = (&egress.Dialer{Policy: p}).Transport()
			}
			b, _, _ := newTestBackendWith(t, Options{}, shOpts)
			out := run(t, b, sidecar.Request{Command: prog, AllowNetwork: tc.exec})
			if out.stdout != tc.stdout || !strings.Contains(out.stderr, tc.stderr) || (out.ExitCode == 0) != (tc.stderr == "") {
				t.Errorf("stdout %q exit %d stderr %q; want stdout %q, stderr containing %q", out.stdout, out.ExitCode, out.stderr, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestHostIsolation: a program sees the workspace, /tmp and /dev/null and
// nothing of the host, whatever path it tries.
func TestHostIsolation(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	out := run(t, b, sidecar.Request{Command: `const fs = require('fs');
for (const p of ['/etc/passwd', '../../etc/passwd', '/proc/self/environ', '/workspace/../etc/hostname']) {
  try { fs.readFileSync(p); console.log('READ', p) } catch (e) { console.log(e.code) }
}
try { fs.writeFileSync('/etc/x', 'x'); console.log('WROTE') } catch (e) { console.log(e.code) }
try { require('/etc/passwd'); console.log('REQUIRED') } catch (e) { console.log(e.code) }
console.log(require('child_process').execSync('cat /etc/passwd 2>&1; echo $?', { encoding: 'utf8' }).trim().split('\n').pop());
fs.writeFileSync('/tmp/scratch', 'ok'); console.log(fs.readFileSync('/tmp/scratch', 'utf8'), process.env.HOME, process.env.GOPATH)`})
	want := "ENOENT\nENOENT\nENOENT\nENOENT\nENOENT\nMODULE_NOT_FOUND\n1\nok /workspace undefined\n"
	if out.stdout != want {
		t.Errorf("stdout %q, want %q; stderr %q", out.stdout, want, out.stderr)
	}
}

// TestPublishActor: sqlfs:publish hands the exec's own actor (the shell's
// default when the request names none) and the workspace path to the
// publisher.
func TestPublishActor(t *testing.T) {
	type call struct {
		actor, path string
		ttl         time.Duration
	}
	var calls []call
	b, _, _ := newTestBackend(t, Options{Publish: func(_ context.Context, actor, p string, ttl time.Duration) (string, error) {
		calls = append(calls, call{actor, p, ttl})
		return "http://pub" + p, nil
	}})
	for _, tc := range []struct{ actor, want string }{{"exec:pub-test", "exec:pub-test"}, {"", shell.DefaultActor}} {
		calls = nil
		out := run(t, b, sidecar.Request{Command: `console.log(await require('sqlfs:publish').publish('d/r.txt', { ttl: 90 }))`, Actor: tc.actor})
		want := []call{{tc.want, "/d/r.txt", 90 * time.Second}}
		if out.stdout != "http://pub/d/r.txt\n" || !slices.Equal(calls, want) {
			t.Errorf("actor %q: stdout %q stderr %q, publisher got %+v; want %+v", tc.actor, out.stdout, out.stderr, calls, want)
		}
	}
}

// TestSymlinkCorners pins what node on Linux answers (seen with node 20 on
// a native directory) where random fs sequences found the backend
// differing: mkdir -p over or below a dangling symlink, the order of
// rename's checks, following a symlink whose target ends in "/".
func TestSymlinkCorners(t *testing.T) {
	b, _, _ := newTestBackend(t, Options{})
	out := run(t, b, sidecar.Request{Command: `const fs = require('fs');
const t = (s, f) => { try { console.log(s, JSON.stringify(f())) } catch (e) { console.log(s, e.code) } };
fs.symlinkSync('l', 'a');
t('mkdir -p a/', () => fs.mkdirSync('a/', { recursive: true }));
t('mkdir -p a', () => fs.mkdirSync('a', { recursive: true }));
t('mkdir a/', () => fs.mkdirSync('a/'));
fs.symlinkSync('loop', 'loop');
t('mkdir -p loop', () => fs.mkdirSync('loop', { recursive: true }));
fs.writeFileSync('f', '');
t('mkdir -p f', () => fs.mkdirSync('f', { recursive: true }));
t('mkdir -p f/', () => fs.mkdirSync('f/', { recursive: true }));
t('rename a/ into a missing dir', () => fs.renameSync('a/', 'd/e/z'));
t('rename a/', () => fs.renameSync('a/', 'z'));
t('rename from under a file to ""', () => fs.renameSync('f/y', ''));
t('rename x to ""', () => fs.renameSync('x', ''));
fs.mkdirSync('m/n/o', { recursive: true }); fs.writeFileSync('m/n/f', '');
t('rename into an ancestor', () => fs.renameSync('m/n/f', 'm'));
t('rename a missing name into an ancestor', () => fs.renameSync('m/x', 'm'));
t('rename below itself', () => fs.renameSync('m/n', 'm/n/o/p'));
t('rename to .', () => fs.renameSync('m/n/f', '.'));
t('rename m/..', () => fs.renameSync('m/..', 'x'));
t('mkdir -p below a dangling symlink', () => fs.mkdirSync('a/e/z', { recursive: true }));
fs.symlinkSync('q/', 's'); fs.symlinkSync('s', 's2'); fs.symlinkSync('f/', 's3');
t('append s', () => fs.appendFileSync('s', 'z'));
t('append s2', () => fs.appendFileSync('s2', 'z'));
t('open s3 w', () => fs.openSync('s3', 'w'));
t('read s3', () => fs.readFileSync('s3', 'utf8'));
t('stat s3', () => fs.statSync('s3').size);
t('truncate s3', () => fs.truncateSync('s3', 1));
t('readlink s3', () => fs.readlinkSync('s3'));
console.log(fs.readdirSync('.').join(','), fs.readFileSync('f', 'utf8').length);`})
	want := `mkdir -p a/ ENOENT
mkdir -p a ENOENT
mkdir a/ EEXIST
mkdir -p loop ELOOP
mkdir -p f EEXIST
mkdir -p f/ ENOTDIR
rename a/ into a missing dir ENOENT
rename a/ ENOTDIR
rename from under a file to "" ENOTDIR
rename x to "" ENOENT
rename into an ancestor ENOTEMPTY
rename a missing name into an ancestor ENOENT
rename below itself EINVAL
rename to . EBUSY
rename m/.. EBUSY
mkdir -p below a dangling symlink ENOENT
append s EISDIR
append s2 EISDIR
open s3 w EISDIR
read s3 ENOTDIR
stat s3 ENOTDIR
truncate s3 ENOTDIR
readlink s3 "f/"
a,f,loop,m,s,s2,s3 0
`
	if out.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr %q", out.stdout, want, out.stderr)
	}
}
