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
	"github.com/sqlfs/sqlfs/sidecar"
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
	return r.stop(sidecar.LimitMaxProcs, "process limit of %d concurrent subshells, pipeline stages and background jobs exceeded", limit)
}

// watchStop measures how promptly a run stops: once it is cancelled by
// anything but the end of its Exec (a deadline, a limit, the caller), it
// waits for the last of the run's goroutines to end and records the time
// since the deadline or stop in metrics.ShellStopSeconds. Exec may return
// before that (StopGrace), so only the goroutine count tells that all the
// work has stopped.
func (b *Backend) watchStop(r *run) {
	<-r.ctx.Done()
	if errors.Is(context.Cause(r.ctx), errFinished) {
		return
	}
	from := r.stopTime()
	var census time.Time
	for {
		// A goroutine profile costs in proportion to all goroutines (a
		// fork bomb leaves a thousand to unwind, and profiling them took
		// a fifth of the CPU the unwinding used): take one when the
		// process is back near the goroutines it had when the run began,
		// else only every stopCensusEvery, for other execs may hold them.
		if runtime.NumGoroutine() <= r.startGoroutines+stopNearStart || time.Since(census) >= stopCensusEvery {
			census = time.Now()
			if countByLabel()[r.id] == 0 {
				break
			}
		}
		if waited := time.Since(from); waited > stopWatchMax {
			b.log.Warn("shell command still running after it was stopped", "waited", waited.Round(time.Second))
			break
		}
		time.Sleep(time.Millisecond)
	}
	metrics.ShellStopSeconds.Observe(time.Since(from).Seconds())
}

const (
	// stopWatchMax is how long watchStop waits for a stopped run's
	// goroutines.
	stopWatchMax = time.Minute
	// stopNearStart is how many goroutines more than when the run began
	// count as near: the run's interpreter and watchStop, the copier of
	// its stdin, a client's connection.
	stopNearStart = 8
	// stopCensusEvery is how often watchStop takes a goroutine profile
	// while the process has more goroutines than that.
	stopCensusEvery = 50 * time.Millisecond
)

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
