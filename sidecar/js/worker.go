package js

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/sidecar/js/wire"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// Workers run each program in its own worker process: this binary
// re-executed with SQLFS_JS_WORKER set (the constructor in
// sandbox_linux.go confines it before Go starts, and this package's init
// serves the job), so a program's memory, CPU and crashes are the
// worker's. The worker has no file system, no network, no way to start
// processes; its fs calls, child_process, git, publish and fetch are
// performed by the owner over a pair of pipes (package wire) against the exec's
// own view, so policy, quota, write budget and audit apply as in-process.
// A worker runs one program and is killed (SIGKILL) when it ends, when the
// exec's context ends, or past its memory; a few are kept started ahead,
// which is what keeps an exec near a millisecond.
type Workers struct {
	exe  string
	idle int
	log  *slog.Logger

	mu       sync.Mutex
	ready    []*worker // started, never used
	warm     []*worker // served an exec of their scope; oldest first
	starting int
	parking  map[any]int   // workers of a scope on their way to warm
	parked   chan struct{} // closed (and renewed) as each parking ends
	parkWait time.Duration // defaultParkWait; tests raise it
	netns    atomic.Bool   // spawning with CLONE_NEWNET works here

	// onStart, when set (tests), is told the pid of each job's worker;
	// onCall of each call a worker makes.
	onStart func(pid int)
	onCall  func(wire.Op)

	// cacheHits and cacheMisses count the compiled-program cache's
	// answers in the workers' jobs.
	cacheHits, cacheMisses atomic.Int64
}

// worker is one started worker process.
type worker struct {
	cmd    *exec.Cmd
	conn   *wire.Conn
	pipes  [3]*os.File // the owner's ends of the channel
	stderr *tailWriter
	done   chan struct{} // closed once the process is reaped
	abi    int           // the Landlock ABI it confined itself with
	jobs   int           // execs it was given
	scope  any           // whose execs it serves once warm
	expire *time.Timer   // ends it once warm too long
}

// DefaultWorkers is the process's worker pool, started on first use.
var DefaultWorkers = sync.OnceValue(func() *Workers { return NewWorkers(2, nil) })

// NewWorkers returns a pool that keeps idle workers started ahead of the
// execs that will take them; log (nil: slog.Default) hears of workers
// that cannot be confined or started.
func NewWorkers(idle int, log *slog.Logger) *Workers {
	if log == nil {
		log = slog.Default()
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "/proc/self/exe"
	}
	w := &Workers{exe: exe, idle: idle, log: log, parking: map[any]int{}, parked: make(chan struct{}), parkWait: defaultParkWait}
	w.netns.Store(true)
	return w
}

// Run implements Runner.
func (w *Workers) Run(ctx context.Context, env *builtin.Env, p Program) int {
	limit := p.MaxHeapBytes
	if limit <= 0 {
		limit = DefaultMaxHeapBytes
	}
	wk, err := w.get(ctx, p.scope)
	for err == nil {
		if err = wk.limit(ctx, limit); err == nil || wk.jobs == 0 {
			break
		}
		// A warm worker whose limits cannot be set again: take a fresh one.
		wk.kill()
		wk, err = w.get(ctx, nil)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 124
		}
		if wk != nil {
			wk.kill()
			fmt.Fprintf(env.Stderr, "node: cannot limit the JavaScript worker: %v\n", err)
			return 126
		}
		fmt.Fprintf(env.Stderr, "node: cannot start a JavaScript worker: %v\n", err)
		return 126
	}
	kept := false
	defer func() {
		if !kept {
			wk.kill()
		}
	}()
	if w.onStart != nil {
		w.onStart(wk.cmd.Process.Pid)
	}
	wk.jobs++
	job := workerJob{
		File: p.File, Code: p.Code, Print: p.Print, Argv: p.Argv, Dir: env.Dir,
		AllowNetwork: p.Fetch != nil, MaxHeapBytes: limit, Stdin: env.Stdin != nil,
	}
	if env.Environ != nil {
		job.Environ = env.Environ()
	}
	data, err := json.Marshal(job)
	if err != nil {
		return 126
	}
	if err := wk.conn.Send(&wire.Msg{Op: wire.OpJob, Data: data}); err != nil {
		fmt.Fprintf(env.Stderr, "node: the JavaScript worker is gone: %v\n", err)
		return 126
	}
	s := &server{ctx: ctx, env: env, svc: &localServices{env: env, p: p}, conn: wk.conn, files: map[int64]builtin.File{}, onCall: w.onCall}
	result := make(chan int, 1)
	go func() { result <- s.serve() }()
	overMemory := make(chan struct{})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go wk.watchRSS(limit, overMemory, stopWatch)
	select {
	case code := <-result:
		if code >= 0 {
			w.cacheHits.Add(s.exit.T[0])
			w.cacheMisses.Add(s.exit.T[1])
			if p.scope != nil && ctx.Err() == nil && wk.jobs < maxJobsPerWorker {
				kept = true
				w.mu.Lock()
				w.parking[p.scope]++
				w.mu.Unlock()
				go w.park(wk, p.scope)
			}
			return code
		}
		// The connection broke: the worker died. Say why once it is reaped.
		wk.kill()
		<-wk.done
		select {
		case <-overMemory:
			return memoryExit(env, limit)
		default:
		}
		return wk.deathReport(env, limit)
	case <-overMemory:
		wk.kill()
		s.stop(result)
		return memoryExit(env, limit)
	case <-ctx.Done():
		wk.kill()
		s.stop(result)
		return 124 // the shell reports the timeout or cancellation
	}
}

// A worker serves several execs of one scope (a Backend: one workspace)
// so that what it compiled stays compiled (see programs). Each exec gets
// a fresh runtime, as in a new worker; the worker's limits are set anew.
// An exec that timed out, was cancelled, died or passed its memory ends
// its worker instead, so does the last of maxJobsPerWorker. Workers
// are kept warm up to the pool's idle count, for warmTTL each.
const (
	maxJobsPerWorker = 100
	warmTTL          = 2 * time.Minute
)

// park waits for the worker to say it has given back the memory of its
// job, then keeps it for the next exec of scope, unless it stays too big.
func (w *Workers) park(wk *worker, scope any) {
	slow := time.AfterFunc(5*time.Second, wk.kill)
	m, err := wk.conn.Recv()
	slow.Stop()
	ok := err == nil && m.Op == wire.OpReady && wk.rss() <= warmRSSMax
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parking[scope]--; w.parking[scope] <= 0 {
		delete(w.parking, scope)
	}
	close(w.parked)
	w.parked = make(chan struct{})
	if !ok {
		wk.kill()
		return
	}
	wk.scope = scope
	w.warm = append(w.warm, wk)
	for len(w.warm) > max(w.idle, 1) {
		w.warm[0].kill()
		w.warm = w.warm[1:]
	}
	wk.expire = time.AfterFunc(warmTTL, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if i := slices.Index(w.warm, wk); i >= 0 {
			w.warm = slices.Delete(w.warm, i, i+1)
			wk.kill()
		}
	})
}

// warmRSSMax is the resident size past which a worker is not kept warm:
// an idle worker's (about 115 MiB) and a full program cache, with room.
const warmRSSMax = 192<<20 + ProgramCacheBytes

func memoryExit(env *builtin.Env, limit int64) int {
	fmt.Fprintf(env.Stderr, "FATAL ERROR: JavaScript heap out of memory: the exec's memory limit of %d MiB (--js-memory) is spent; its worker was stopped\n", limit>>20)
	return 134
}

// workerJob is what an owner asks a worker to run.
type workerJob struct {
	File, Code   string
	Print        bool
	Argv         []string
	Dir          string
	Environ      []string
	AllowNetwork bool
	MaxHeapBytes int64
	Stdin        bool
}

// get takes a warm worker of scope, else a started one, else starts one,
// and has another started for the next exec.
func (w *Workers) get(ctx context.Context, scope any) (*worker, error) {
	wk, err := w.getWarm(ctx, scope)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	for len(w.ready) > 0 && wk == nil {
		wk = w.ready[0]
		w.ready = w.ready[1:]
		if wk.dead() { // died idle
			wk = nil
		}
	}
	w.mu.Unlock()
	if wk != nil && wk.jobs > 0 {
		return wk, nil
	}
	w.fill()
	if wk != nil {
		return wk, nil
	}
	type started struct {
		wk  *worker
		err error
	}
	ch := make(chan started, 1)
	go func() {
		wk, err := w.start()
		ch <- started{wk, err}
	}()
	select {
	case s := <-ch:
		return s.wk, s.err
	case <-ctx.Done():
		go func() {
			if s := <-ch; s.wk != nil {
				s.wk.kill()
			}
		}()
		return nil, ctx.Err()
	}
}

// defaultParkWait bounds how long an exec waits for a worker of its scope that
// is on its way to warm (its previous exec just ended: it is setting up
// the next runtime, or giving back a big job's memory) before it takes a
// started one instead. Taking a started one would start another, whose
// start (tens of milliseconds of CPU) the exec would compete with, and
// leave the warm one's compiled programs unused.
const defaultParkWait = 100 * time.Millisecond

// getWarm takes a warm worker of scope, waiting up to w.parkWait for one
// that is parking; nil when there is none.
func (w *Workers) getWarm(ctx context.Context, scope any) (*worker, error) {
	if scope == nil {
		return nil, nil
	}
	var deadline <-chan time.Time
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for i := len(w.warm) - 1; i >= 0; i-- {
			if c := w.warm[i]; c.scope == scope {
				w.warm = slices.Delete(w.warm, i, i+1)
				c.expire.Stop()
				if !c.dead() {
					return c, nil
				}
			}
		}
		if w.parking[scope] == 0 {
			return nil, nil
		}
		if deadline == nil {
			t := time.NewTimer(w.parkWait)
			defer t.Stop()
			deadline = t.C
		}
		parked := w.parked
		w.mu.Unlock()
		select {
		case <-parked:
		case <-deadline:
			w.mu.Lock()
			return nil, nil
		case <-ctx.Done():
			w.mu.Lock()
			return nil, ctx.Err()
		}
		w.mu.Lock()
	}
}

// fill starts workers in the background up to the idle count.
func (w *Workers) fill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.ready)+w.starting < w.idle {
		w.starting++
		go func() {
			wk, err := w.start()
			w.mu.Lock()
			defer w.mu.Unlock()
			w.starting--
			if err != nil {
				w.log.Warn("js: cannot start a worker", "err", err)
				return
			}
			w.ready = append(w.ready, wk)
		}()
	}
}

// waitIdle waits until the pool has its idle workers started (benchmarks).
func (w *Workers) waitIdle() {
	w.fill()
	for {
		w.mu.Lock()
		n := len(w.ready)
		w.mu.Unlock()
		if n >= w.idle {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// waitWarm waits until a worker is warm (benchmarks).
func (w *Workers) waitWarm() {
	for {
		w.mu.Lock()
		n := len(w.warm)
		w.mu.Unlock()
		if n > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

var warnOnce sync.Once

// start starts a worker and waits until it is confined and ready.
func (w *Workers) start() (*worker, error) {
	own, theirs, err := wire.Pipes()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range theirs {
			f.Close()
		}
	}()
	env := []string{workerEnv + "=1", "GOTRACEBACK=none"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	wk := &worker{pipes: own, stderr: &tailWriter{max: 4 << 10}, done: make(chan struct{})}
	for {
		cmd := exec.Command(w.exe)
		cmd.Args = []string{"sqlfs-js-worker"}
		cmd.Env = env
		cmd.ExtraFiles = theirs[:]
		cmd.Stderr = wk.stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if w.netns.Load() {
			// A network namespace of its own: only a loopback, down.
			cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
		}
		err := cmd.Start()
		if err != nil && w.netns.Load() && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL)) {
			w.netns.Store(false)
			w.log.Warn("js: workers cannot have a network namespace here; Landlock and seccomp still deny them sockets", "err", err)
			continue
		}
		if err != nil {
			wk.closePipes()
			return nil, err
		}
		wk.cmd = cmd
		break
	}
	go func() {
		_ = wk.cmd.Wait()
		close(wk.done)
	}()
	wk.conn = wire.PipeConn(own, wire.MaxOwnerFrame)
	m, err := wk.conn.Recv()
	if err != nil || m.Op != wire.OpReady {
		wk.kill()
		<-wk.done // its last words are in stderr
		return nil, fmt.Errorf("worker did not start: %v %s", err, strings.TrimSpace(wk.stderr.String()))
	}
	wk.abi = int(m.N)
	if wk.abi == 0 {
		warnOnce.Do(func() {
			w.log.Warn("js: the kernel has no Landlock; workers are confined by seccomp and rlimits only")
		})
	}
	return wk, nil
}

func (wk *worker) dead() bool {
	select {
	case <-wk.done:
		return true
	default:
		return false
	}
}

// kill ends the worker (SIGKILL) and reaps it off the caller's path: the
// kernel runs none of its code once the signal is sent (what is left is
// the threads' teardown, which on a loaded machine waits for CPU), and
// its calls stop being served, so nothing of its program runs after.
func (wk *worker) kill() {
	_ = wk.cmd.Process.Kill()
	go func() {
		<-wk.done
		wk.closePipes()
	}()
}

func (wk *worker) closePipes() {
	for _, f := range wk.pipes {
		f.Close()
	}
}

// limit sets the worker's kernel limits for a job: its data segment (every
// private writable mapping, so the Go heap; where the race detector's
// shadow memory does not forbid it), CPU time a bit past the exec's
// deadline, no core files.
func (wk *worker) limit(ctx context.Context, heap int64) error {
	pid := wk.cmd.Process.Pid
	// The soft limits: the kernel enforces RLIMIT_DATA's, and the worker
	// ends itself at RLIMIT_CPU's SIGXCPU. The hard ones stay where they
	// were, so the next job of a warm worker may get higher soft limits
	// without CAP_SYS_RESOURCE.
	set := func(res int, v uint64) error {
		var old unix.Rlimit
		if err := unix.Prlimit(pid, res, nil, &old); err != nil {
			return err
		}
		return unix.Prlimit(pid, res, &unix.Rlimit{Cur: min(v, old.Max), Max: old.Max}, nil)
	}
	if !raceEnabled {
		if err := set(unix.RLIMIT_DATA, uint64(dataLimit(heap))); err != nil {
			return fmt.Errorf("RLIMIT_DATA: %w", err)
		}
	}
	// CPU time counts from the worker's start: what its earlier jobs
	// used, plus this one's deadline.
	cpu := uint64(unix.RLIM_INFINITY)
	if dl, ok := ctx.Deadline(); ok {
		cpu = uint64(wk.cpuSeconds()) + uint64(time.Until(dl)/time.Second) + 2
	}
	if err := set(unix.RLIMIT_CPU, cpu); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	return unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil)
}

// dataLimit is the RLIMIT_DATA of a worker whose heap may reach heap: the
// heap twice over (the collector's headroom) plus what an idle worker
// maps (about 115 MiB: runtime, compiled library files). RLIMIT_AS would
// not do: the Go runtime reserves 1.5 GiB of address space up front.
func dataLimit(heap int64) int64 { return 2*heap + 256<<20 + ProgramCacheBytes }

// rssLimit is the resident size past which the owner kills a worker: the
// backstop where RLIMIT_DATA cannot be used (race builds) and for growth the
// worker's own heap check cannot interrupt (inside one native call).
func rssLimit(heap int64) int64 {
	if raceEnabled {
		return 3*heap + 512<<20 + ProgramCacheBytes
	}
	return heap + 256<<20 + ProgramCacheBytes
}

// watchRSS closes over once the worker's resident memory passes its
// limit; it returns when the worker is gone or stop is closed.
func (wk *worker) watchRSS(heap int64, over chan<- struct{}, stop <-chan struct{}) {
	limit := rssLimit(heap)
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-wk.done:
			return
		case <-stop:
			return
		case <-t.C:
		}
		rss := wk.rss()
		if rss < 0 {
			return
		}
		if rss > limit {
			close(over)
			return
		}
	}
}

// rss is the worker's resident size, -1 once it is gone.
func (wk *worker) rss() int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(wk.cmd.Process.Pid) + "/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// cpuSeconds is the CPU time the worker used so far, rounded up.
func (wk *worker) cpuSeconds() int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(wk.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return (utime+stime)/100 + 1 // procfs counts in USER_HZ, 100 a second
}

// deathReport says why a worker died before its program ended, once it is
// reaped, and returns the exit status.
func (wk *worker) deathReport(env *builtin.Env, limit int64) int {
	tail := wk.stderr.String()
	if strings.Contains(tail, "out of memory") || strings.Contains(tail, "cannot allocate memory") {
		return memoryExit(env, limit)
	}
	st, _ := wk.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if st.Signaled() && (st.Signal() == syscall.SIGXCPU || st.Signal() == syscall.SIGKILL) {
		fmt.Fprintf(env.Stderr, "FATAL ERROR: the exec's CPU time limit is spent; its worker was stopped\n")
		return 137
	}
	last := strings.TrimSpace(tail)
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	fmt.Fprintf(env.Stderr, "node: the JavaScript worker ended unexpectedly (%v): %s\n", wk.cmd.ProcessState, last)
	return 134
}

// tailWriter keeps the first max bytes of a worker's standard error
// (where the Go runtime says why it died).
type tailWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
