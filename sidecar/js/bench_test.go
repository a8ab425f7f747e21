package js

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// The benchmarks run each program end to end in the js backend and as a
// node process on a native directory (native), side by side: compare the
// ns/op as ratios. store runs in a worker process (the default) taken from
// a warm pool, as an exec arriving at an idle owner is; store-backtoback
// runs them with no pause, so each waits for a worker to start (the
// sustained rate); store-inprocess runs on the caller's heap.

const smallFilesProgram = `const fs = require('fs');
const d = fs.mkdtempSync('run-');
for (let i = 0; i < 1000; i++) fs.writeFileSync(d + '/f' + i + '.json', JSON.stringify({ i, name: 'file ' + i, tags: ['a', 'b'] }));
let sum = 0;
for (let i = 0; i < 1000; i++) sum += JSON.parse(fs.readFileSync(d + '/f' + i + '.json', 'utf8')).i;
if (sum !== 499500) throw new Error('sum ' + sum);`

func BenchmarkConsoleLog(b *testing.B) { benchProgram(b, `console.log(1)`) }
func BenchmarkSmallFiles(b *testing.B) { benchProgram(b, smallFilesProgram) }

func benchProgram(b *testing.B, code string) {
	workers := NewWorkers(2, nil)
	for _, r := range []struct {
		name   string
		runner Runner
		warm   bool // wait, untimed, until the pool has its idle workers again
	}{{"store", workers, true}, {"store-backtoback", workers, false}, {"store-inprocess", InProcess, false}} {
		b.Run(r.name, func(b *testing.B) {
			be, _, _ := newTestBackend(b, Options{Runner: r.runner})
			for i := 0; i < b.N; i++ {
				if r.warm {
					b.StopTimer()
					workers.waitIdle()
					b.StartTimer()
				}
				res, err := be.Exec(context.Background(), sidecar.Request{Command: code, Stdout: io.Discard})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("exit %d: %v", res.ExitCode, err)
				}
			}
		})
	}
	b.Run("native", func(b *testing.B) {
		node, err := exec.LookPath("node")
		fusetest.Require(b, "nodejs", err)
		dir := b.TempDir()
		for b.Loop() {
			cmd := exec.Command(node, "-e", code)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("node: %v\n%s", err, out)
			}
		}
	})
}

// BenchmarkRequireTypeScript loads TypeScript's compiler (8.6 MiB of
// JavaScript) in each exec: cold in a new worker pool (nothing compiled
// yet), warm in a worker that served the backend's previous exec (its
// compiled programs cached), and with node on a native directory.
func BenchmarkRequireTypeScript(b *testing.B) {
	const code = `const ts = require('typescript'); if (!ts.transpileModule) throw new Error('no ts')`
	_, _, fsys, dir := newPackagesBackend(b, Options{})
	// A backend over the packages' store whose node runs in w.
	backendWith := func(w Runner) *Backend {
		sh := shell.New(fsys, shell.Options{Commands: map[string]builtin.Func{"node": Command(Options{Runner: w})}})
		b.Cleanup(func() { sh.Close() })
		return New(sh)
	}
	exec := func(b *testing.B, be *Backend) {
		res, err := be.Exec(context.Background(), sidecar.Request{Command: code, Stdout: io.Discard})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("exit %d: %v", res.ExitCode, err)
		}
	}
	b.Run("store-cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			w := NewWorkers(1, nil)
			w.waitIdle()
			cold := backendWith(w)
			b.StartTimer()
			exec(b, cold)
		}
	})
	b.Run("store-warm", func(b *testing.B) {
		w := NewWorkers(1, nil)
		warm := backendWith(w)
		exec(b, warm)
		for b.Loop() {
			b.StopTimer()
			w.waitWarm()
			b.StartTimer()
			exec(b, warm)
		}
	})
	b.Run("native", func(b *testing.B) {
		root := b.TempDir()
		linkPackages(b, dir, root)
		run := filepath.Join(root, "run")
		if err := os.Mkdir(run, 0o755); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if out, err := nodeIn(b, run, "-e", code).CombinedOutput(); err != nil {
				b.Fatalf("node: %v\n%s", err, out)
			}
		}
	})
}

// BenchmarkFSCall is one fs call (statSync) of a program, in a worker and
// in-process: the difference is a round trip to the owner. Each exec makes
// fsCalls of them; ns/call is per call, the exec's start included.
func BenchmarkFSCall(b *testing.B) {
	const fsCalls = 5000
	code := `const fs = require('fs'); fs.writeFileSync('f', 'x');
for (let i = 0; i < ` + strconv.Itoa(fsCalls) + `; i++) fs.statSync('f');`
	workers := NewWorkers(1, nil)
	for _, r := range []struct {
		name   string
		runner Runner
	}{{"store", workers}, {"store-inprocess", InProcess}} {
		b.Run(r.name, func(b *testing.B) {
			be, _, _ := newTestBackend(b, Options{Runner: r.runner})
			for b.Loop() {
				res, err := be.Exec(context.Background(), sidecar.Request{Command: code, Stdout: io.Discard})
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("exit %d: %v", res.ExitCode, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*fsCalls), "ns/call")
		})
	}
}
