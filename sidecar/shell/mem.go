package shell

import (
	"bytes"
	"io"
	"log/slog"
	"runtime"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
)

// Memory is bounded in three layers. Commands that must hold data charge it
// (builtin.Memory) against their exec's MaxMemoryBytes and the backend's
// MaxMemoryBytes shared by all execs. What the interpreter itself holds is
// measured where it can be seen: the output a command substitution
// collects, on every write, and the variables, between commands. Last, a
// watchdog on the Go heap stops the exec holding the most (else the
// newest) when the heap passes the backend's budget over its idle size,
// for growth no accounting sees (string doubling without a command).

// growMem charges n bytes to the run and the backend, stopping the run
// when either is past its budget.
func (r *run) growMem(n int64) error {
	held := r.held.Add(n)
	total := r.b.mem.held.Add(n)
	if held > r.limits.MaxMemoryBytes {
		return r.stop(sidecar.LimitMaxMemoryBytes, "memory limit of %d bytes exceeded", r.limits.MaxMemoryBytes)
	}
	if total > r.b.mem.max {
		return r.stop(sidecar.LimitMaxMemoryBytes, "the shell backend's memory budget of %d bytes, shared by all running commands, is exhausted", r.b.mem.max)
	}
	return nil
}

func (r *run) shrinkMem(n int64) {
	r.held.Add(-n)
	r.b.mem.held.Add(-n)
}

// checkHeld stops the run when what it holds plus extra (data seen but
// not charged: a substitution's output, the variables) is past its budget.
func (r *run) checkHeld(extra int64) error {
	if r.held.Load()+extra > r.limits.MaxMemoryBytes {
		return r.stop(sidecar.LimitMaxMemoryBytes, "memory limit of %d bytes exceeded", r.limits.MaxMemoryBytes)
	}
	return nil
}

// cmdMem is one command's account: everything it still holds is released
// when it returns.
type cmdMem struct {
	r    *run
	held atomic.Int64
}

func (m *cmdMem) Grow(n int64) error {
	m.held.Add(n)
	return m.r.growMem(n)
}

func (m *cmdMem) Shrink(n int64) {
	m.held.Add(-n)
	m.r.shrinkMem(n)
}

func (m *cmdMem) Limit() int64 { return m.r.limits.MaxMemoryBytes }

func (m *cmdMem) release() { m.r.shrinkMem(m.held.Swap(0)) }

// substWriter bounds the buffer a command substitution collects into.
type substWriter struct {
	r      *run
	sb     *strings.Builder
	fields *int64 // separators written so far
}

// fieldCost is what the interpreter holds per field when it splits a
// substitution's output (`a=($(seq 1 30000000))`) besides the text: string
// headers and its own bookkeeping.
const fieldCost = 32

func (w substWriter) Write(p []byte) (int, error) {
	*w.fields += int64(bytes.Count(p, []byte{'\n'}) + bytes.Count(p, []byte{' '}))
	err := w.r.ctx.Err()
	if err == nil {
		err = w.r.checkHeld(int64(w.sb.Len()+len(p)) + fieldCost**w.fields)
	}
	if err != nil {
		// The substitution's value no longer matters: drop it, so
		// expanding it on the way out costs nothing.
		w.sb.Reset()
		return 0, err
	}
	return w.sb.Write(p)
}

// boundSubst wraps out when it is the buffer of a command substitution
// (the interpreter collects $(…) in a strings.Builder).
func (r *run) boundSubst(out io.Writer) io.Writer {
	if sb, ok := out.(*strings.Builder); ok {
		return substWriter{r: r, sb: sb, fields: new(int64)}
	}
	return out
}

// varSize is what a variable's value holds, strings plus headers.
func varSize(v expand.Variable) int64 {
	const header = 16
	switch v.Kind {
	case expand.Indexed:
		n := int64(0)
		for _, s := range v.List {
			n += header + int64(len(s))
		}
		return n
	case expand.Associative:
		n := int64(0)
		for k, s := range v.Map {
			n += 2*header + int64(len(k)+len(s))
		}
		return n
	}
	return int64(len(v.Str))
}

// varCheckEvery spaces the variable checks of a run: commands take
// microseconds, and in a millisecond a variable grows by a few MiB at most.
const varCheckEvery = time.Millisecond

// checkVars measures the shell's variables and the substitution output
// being collected against the run's budget. Measuring costs time in
// proportion to the variables, so the next check waits ten times as long
// as this one took (at least varCheckEvery): at most a tenth of the run's
// time goes to it.
func (r *run) checkVars(hc interp.HandlerContext) error {
	now := time.Now()
	if now.UnixNano() < r.nextVarCheck.Load() {
		return nil
	}
	var n int64
	for _, v := range hc.Env.Each {
		n += varSize(v)
	}
	sb, inSubst := hc.Stdout.(*strings.Builder)
	if inSubst {
		n += int64(sb.Len())
	}
	r.nextVarCheck.Store(now.Add(max(10*time.Since(now), varCheckEvery)).UnixNano())
	r.varBytes.Store(n)
	err := r.checkHeld(n)
	if err != nil && inSubst {
		sb.Reset()
	}
	return err
}

// watchdog stops execs when the Go heap grows past the budget (see budget)
// over its size when the first of the running execs started (or less, once
// collected).
type watchdog struct {
	m        *Memory
	log      *slog.Logger
	interval time.Duration

	mu       sync.Mutex
	runs     map[*run]time.Time // running execs and when they started
	baseline uint64             // the heap when the first of them started
	stop     chan struct{}      // closes the polling goroutine
}

// Memory is a memory budget running commands share: what they charge
// (builtin.Memory) and the Go heap's growth its watchdog checks. Each
// backend has one of its own unless Options.Memory gives one to share.
type Memory struct {
	max  int64
	held atomic.Int64 // bytes all running commands have charged
	dog  *watchdog
}

// NewMemory returns a budget of maxBytes (1 GiB when 0 or less); log
// hears of the commands its watchdog stops.
func NewMemory(maxBytes int64, log *slog.Logger) *Memory {
	if maxBytes <= 0 {
		maxBytes = 1 << 30
	}
	if log == nil {
		log = slog.Default()
	}
	m := &Memory{max: maxBytes}
	m.dog = &watchdog{m: m, log: log, interval: watchdogInterval, runs: map[*run]time.Time{}}
	return m
}

// heapBytes is the heap's objects now, garbage included.
func heapBytes() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

func readMetric(name string) uint64 {
	s := []rtmetrics.Sample{{Name: name}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}

// baselineHeap is the heap the execs about to run are measured from, given
// the previous baseline. When the heap grew much since, an earlier exec
// left garbage (or data the store cached): it is collected first, since
// counted in the baseline it would let the next exec grow by as much again
// unseen. The collection costs in proportion to the live heap, and only
// follows an exec that allocated a lot.
func baselineHeap(prev uint64) uint64 {
	heap := heapBytes()
	if heap > prev+watchdogFloor {
		runtime.GC()
		heap = heapBytes()
	}
	return heap
}

// add registers r; the first running exec starts the polling goroutine.
func (w *watchdog) add(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.runs) == 0 {
		w.stop = make(chan struct{})
		w.baseline = baselineHeap(w.baseline)
		go w.poll(w.stop, w.baseline)
	}
	w.runs[r] = time.Now()
}

// remove unregisters r; the last one stops the polling goroutine, so an
// idle backend runs nothing.
func (w *watchdog) remove(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.runs, r)
	if len(w.runs) == 0 && w.stop != nil {
		close(w.stop)
		w.stop = nil
	}
}

func (w *watchdog) poll(stop <-chan struct{}, baseline uint64) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	var collecting atomic.Bool
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		budget := uint64(w.budget())
		heap := heapBytes()
		// The baseline, the heap when the first of the running execs
		// started, counts garbage earlier execs left; it drops to what
		// the collector leaves of it.
		baseline = min(baseline, heap)
		if heap <= baseline+budget {
			continue
		}
		// The heap's objects count garbage too, up to as much again as is
		// live before the collector runs (GOGC=100): past the budget, a
		// collection tells what is live, without the watchdog waiting
		// for it (it would stall behind the very allocation it watches);
		// past twice the budget, garbage alone cannot explain it.
		live := readMetric("/gc/heap/live:bytes")
		if heap <= baseline+2*budget && live <= baseline+budget {
			if !collecting.Swap(true) {
				go func() {
					runtime.GC()
					collecting.Store(false)
				}()
			}
			continue
		}
		if victim := w.victim(); victim != nil {
			_ = victim.stop(sidecar.LimitMaxMemoryBytes, "the shell backend's heap grew by %d MiB, past its memory budget of %d MiB; this command held the most and was stopped", (max(heap, live)-baseline)>>20, budget>>20)
			w.log.Warn("shell memory watchdog stopped a command", "heap_bytes", heap, "live_bytes", live, "baseline_bytes", baseline, "budget", budget)
			metrics.ShellWatchdogStops.Inc()
		}
	}
}

// watchdogFloor keeps a small budget from making the heap's ordinary churn
// look like growth.
const watchdogFloor = 64 << 20

// budget is what the heap's live growth over its baseline may reach: the
// backend's budget, or with a single exec running, twice that exec's own
// (the runtime's copies of what it holds, a buffer's old array while it
// grows, are not charged).
func (w *watchdog) budget() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	budget := w.m.max
	if len(w.runs) == 1 {
		for r := range w.runs {
			budget = min(budget, 2*r.limits.MaxMemoryBytes)
		}
	}
	return max(budget, watchdogFloor)
}

// victim is the running exec holding the most by its accounting, the
// newest when none holds anything measurable, skipping execs already
// stopped.
func (w *watchdog) victim() *run {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best *run
	var bestHeld int64
	var bestStart time.Time
	for r, start := range w.runs {
		if r.ctx.Err() != nil {
			continue
		}
		held := r.held.Load() + r.varBytes.Load()
		if best == nil || held > bestHeld || held == bestHeld && start.After(bestStart) {
			best, bestHeld, bestStart = r, held, start
		}
	}
	return best
}
