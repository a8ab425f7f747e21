package js

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/sqlfs/sqlfs/sidecar"
)

// TestProgramCacheModel runs random compiles against a model of the
// cache (a list, most recent first, dropped from the end past the byte
// bound): the same entries hit, the bound always holds, errors are never
// kept.
func TestProgramCacheModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		const max = 400
		c := newProgramCache(max)
		type entry struct {
			key  string
			cost int64
		}
		var model []entry
		for range 300 {
			file := fmt.Sprintf("/f%d.js", rng.IntN(8))
			src := []byte(strings.Repeat("x", rng.IntN(3)*40))
			fail := rng.IntN(10) == 0
			key := file + ":" + string(src)
			built := false
			_, err := c.compile(file, src, func() (*goja.Program, error) {
				built = true
				if fail {
					return nil, errors.New("bad source")
				}
				return goja.Compile(file, "1", false)
			})
			i := slices.IndexFunc(model, func(e entry) bool { return e.key == key })
			if built != (i < 0) {
				t.Fatalf("seed %d: %s built %v, model has it at %d", seed, key, built, i)
			}
			if i >= 0 {
				e := model[i]
				model = append([]entry{e}, slices.Delete(model, i, i+1)...)
				continue
			}
			if fail {
				if err == nil {
					t.Fatalf("seed %d: the build's error was lost", seed)
				}
				continue
			}
			model = append([]entry{{key, 4 * int64(len(src))}}, model...)
			var size int64
			for j, e := range model {
				if size += e.cost; size > max {
					model = model[:j]
					break
				}
			}
		}
		var size int64
		for _, e := range model {
			size += e.cost
		}
		if c.size != size || c.lru.Len() != len(model) || c.size > max {
			t.Fatalf("seed %d: cache %d entries of %d bytes, model %d of %d (bound %d)", seed, c.lru.Len(), c.size, len(model), size, max)
		}
	}
}

// TestWarmWorkers: execs of one backend share a worker, and with it the
// programs it compiled, but nothing of each other's JavaScript: globals,
// prototypes, module state, timers and process.hrtime start afresh. A
// changed file is compiled again; another backend, an exec that timed
// out or the end of the warm period means another worker.
func TestWarmWorkers(t *testing.T) {
	w := NewWorkers(2, nil) // two backends keep a warm worker each
	var mu sync.Mutex
	var pids []int
	w.onStart = func(p int) { mu.Lock(); pids = append(pids, p); mu.Unlock() }
	lastPid := func() int { mu.Lock(); defer mu.Unlock(); return pids[len(pids)-1] }
	b, _, fsys := newTestBackend(t, Options{Runner: w})
	other, _, otherFS := newTestBackend(t, Options{Runner: w})
	writeModule := func(n int) {
		src := fmt.Sprintf("let n = %d; setInterval(() => {}, 1e6).unref(); module.exports = { bump: () => ++n };\n", n)
		if err := fsys.WriteFile("/m.js", []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeModule(0)
	const prog = `const m = require('./m.js');
console.log(m.bump(), typeof leaked, ({}).polluted, Array.prototype.includes.name, process.hrtime()[0] < 5);
globalThis.leaked = 1; Object.prototype.polluted = 'yes'; Array.prototype.includes = function x() {};`
	const want = "1 undefined undefined includes true\n"
	exec := func(b *Backend, req sidecar.Request) (execOut, int64, int64) {
		t.Helper()
		h0, m0 := w.cacheHits.Load(), w.cacheMisses.Load()
		out := run(t, b, req)
		// The warm worker is parked once it gave its memory back.
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && out.ExitCode == 0 && !w.isWarm(lastPid()); {
			time.Sleep(2 * time.Millisecond)
		}
		return out, w.cacheHits.Load() - h0, w.cacheMisses.Load() - m0
	}
	out, hits, misses := exec(b, sidecar.Request{Command: prog})
	if out.stdout != want || misses != 2 || hits != 0 {
		t.Fatalf("first exec: %q (stderr %q), cache hits %d misses %d", out.stdout, out.stderr, hits, misses)
	}
	first := lastPid()
	for i := range 3 {
		out, hits, misses = exec(b, sidecar.Request{Command: prog})
		if out.stdout != want || hits != 2 || misses != 0 || lastPid() != first {
			t.Fatalf("exec %d: %q (stderr %q), cache hits %d misses %d, worker %d (first %d)", i+2, out.stdout, out.stderr, hits, misses, lastPid(), first)
		}
	}
	writeModule(41)
	out, hits, misses = exec(b, sidecar.Request{Command: prog})
	if out.stdout != "42 undefined undefined includes true\n" || hits != 1 || misses != 1 || lastPid() != first {
		t.Fatalf("changed module: %q (stderr %q), cache hits %d misses %d", out.stdout, out.stderr, hits, misses)
	}
	if err := otherFS.WriteFile("/m.js", []byte("module.exports = { bump: () => 42 };"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, _ = exec(other, sidecar.Request{Command: prog}); out.stdout != "42 undefined undefined includes true\n" || lastPid() == first {
		t.Fatalf("another backend: %q (stderr %q) in worker %d, the first backend's is %d", out.stdout, out.stderr, lastPid(), first)
	}
	if out, _, _ = exec(b, sidecar.Request{Command: `for (;;) {}`, Limits: sidecar.Limits{Timeout: 300 * time.Millisecond}}); out.ExitCode != 124 || lastPid() != first {
		t.Fatalf("busy loop: exit %d in worker %d, want 124 in %d", out.ExitCode, lastPid(), first)
	}
	if out, _, _ = exec(b, sidecar.Request{Command: prog}); out.stdout != "42 undefined undefined includes true\n" || lastPid() == first {
		t.Fatalf("after a timeout: %q in worker %d, the one that timed out was %d", out.stdout, lastPid(), first)
	}
}
