package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// An exec's processes are goroutines: every subshell of a pipeline stage,
// background job or process substitution runs on its own, started by the
// interpreter without a hook. They are told apart by a profiler label that
// each inherits from the goroutine that started it, which in turn got it
// from the exec's interpreter goroutine (procLabel).
const procLabel = "sqlfs_shell_exec"

var execIDs atomic.Uint64

// labelProcs marks the calling goroutine, and every goroutine it starts,
// as the run's.
func (r *run) labelProcs() {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(procLabel, r.id)))
}

// checkProcs stops the run when it has more than MaxProcs goroutines. The
// exact count needs a goroutine profile, which costs in proportion to all
// of the process's goroutines, so it is taken only when the process has
// gained more than MaxProcs goroutines since the exec began, and shared by
// every exec for censusEvery.
func (r *run) checkProcs() error {
	limit := r.limits.MaxProcs
	if runtime.NumGoroutine()-r.startGoroutines <= limit {
		return nil
	}
	if census.of(r.id) <= limit {
		return nil
	}
	return r.stop("max_procs", "process limit of %d concurrent subshells, pipeline stages and background jobs exceeded", limit)
}

// watchStop measures how promptly a run stops: once it is cancelled before
// its interpreter returned (ended), it waits for the last of the run's
// goroutines to end and records the time since the deadline or stop in
// metrics.ShellStopSeconds. Exec may return before that (StopGrace), so
// only the goroutine count tells that all the work has stopped.
func (b *Backend) watchStop(r *run, ended <-chan struct{}) {
	select {
	case <-ended:
		return
	case <-r.ctx.Done():
	}
	if errors.Is(context.Cause(r.ctx), errFinished) {
		return
	}
	from := r.stopTime()
	for countByLabel()[r.id] > 0 {
		waited := time.Since(from)
		if waited > stopWatchMax {
			b.log.Warn("shell command still running after it was stopped", "waited", waited.Round(time.Second))
			break
		}
		// Fine steps while it matters (the 100 ms bound), coarser once
		// the command is late anyway: a goroutine profile is not free.
		time.Sleep(min(max(waited/20, time.Millisecond), 20*time.Millisecond))
	}
	metrics.ShellStopSeconds.Observe(time.Since(from).Seconds())
}

// stopWatchMax is how long watchStop waits for a stopped run's goroutines.
const stopWatchMax = time.Minute

const censusEvery = 20 * time.Millisecond

var census goroutineCensus

// goroutineCensus counts the goroutines of each exec from one goroutine
// profile, renewed at most every censusEvery.
type goroutineCensus struct {
	mu    sync.Mutex
	taken time.Time
	count map[string]int
}

func (c *goroutineCensus) of(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.taken) >= censusEvery {
		c.count = countByLabel()
		c.taken = time.Now()
	}
	return c.count[id]
}

// countByLabel reads the goroutine profile's text form: blocks of
// "N @ pc…" whose "# labels: {…}" line names the exec.
func countByLabel() map[string]int {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return nil
	}
	count := map[string]int{}
	key := strconv.Quote(procLabel) + ":"
	n := 0
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if head, _, ok := strings.Cut(line, " @ "); ok {
			n, _ = strconv.Atoi(head)
			continue
		}
		labels, ok := strings.CutPrefix(line, "# labels: ")
		if !ok {
			continue
		}
		if _, rest, ok := strings.Cut(labels, key); ok {
			if id, err := strconv.Unquote(rest[:strings.IndexAny(rest, ",}")]); err == nil {
				count[id] += n
			}
		}
	}
	return count
}
