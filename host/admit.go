package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// ErrOverloaded: the host's request queue, or a workspace's share of it,
// is full (Admission).
var ErrOverloaded = errors.New("host overloaded")

// Defaults of serve --workspaces' --max-queued,
// --max-queued-per-workspace and --max-request-hold.
const (
	DefaultMaxQueued             = 4096
	DefaultMaxQueuedPerWorkspace = 64
	// DefaultMaxHold: a tool request or a short exec ends well within
	// it (a few milliseconds, also under load), and turns all held by
	// long execs come round again within a second.
	DefaultMaxHold = time.Second
)

// DefaultMaxRequests is --max-requests' default: 16 per CPU, enough to
// keep the CPUs busy while requests wait for their durable commits'
// fsyncs, few enough that a turn comes round within milliseconds.
func DefaultMaxRequests() int { return 16 * runtime.GOMAXPROCS(0) }

// AdmissionOptions bound the requests a host serves at once.
type AdmissionOptions struct {
	// MaxRequests is how many workspace requests are served at once,
	// host-wide; 0: no bound (nor a queue).
	MaxRequests int
	// MaxQueued is how many wait for a turn, host-wide; one more is
	// refused with ErrOverloaded.
	MaxQueued int
	// MaxQueuedPerWorkspace is how many of one workspace wait; one more
	// is refused with ErrOverloaded, so a workspace flooding the host
	// fills its own share of the queue, not everyone's.
	MaxQueuedPerWorkspace int
	// MaxHold is how long a request keeps its turn: one that runs
	// longer (an exec of a build, an export) goes on outside the bound,
	// so a few long requests cannot hold every turn. 0: DefaultMaxHold.
	MaxHold time.Duration
}

// Admission gives workspace requests their turns: at most MaxRequests are
// served at once, the others wait, taken round robin over the workspaces
// waiting and first come first served within each. With a thousand
// clients on two CPUs, letting every request run at once served them in
// whatever order the Go scheduler, the locks and the kernel's fsync
// queue happened to pick: some clients waited tens of seconds while
// others looped. Waiting here, each waits for about as many turns as
// there are requests ahead of it.
type Admission struct {
	o AdmissionOptions

	mu     sync.Mutex
	free   int // turns free
	queued int // requests waiting, all workspaces
	// ring is the workspaces with requests waiting, in the order they
	// get their next turn; waiting[id] is id's requests in arrival order.
	ring    []string
	waiting map[string][]*waiter
	// hold is a moving average of how long a turn is held (seconds),
	// for the Retry-After of a refusal.
	hold float64
}

type waiter struct {
	ready   chan struct{} // closed when granted
	granted bool          // under Admission.mu
}

// NewAdmission returns an Admission for o, nil when o sets no bound.
func NewAdmission(o AdmissionOptions) *Admission {
	if o.MaxRequests <= 0 {
		return nil
	}
	if o.MaxHold <= 0 {
		o.MaxHold = DefaultMaxHold
	}
	return &Admission{o: o, free: o.MaxRequests, waiting: map[string][]*waiter{}}
}

// OverloadedError is ErrOverloaded with when to retry.
type OverloadedError struct {
	Msg   string
	Retry time.Duration
}

func (e *OverloadedError) Error() string { return e.Msg }
func (e *OverloadedError) Unwrap() error { return ErrOverloaded }

// Admit waits for a turn of workspace id's request and returns the done
// the request calls when it ends; past a queue bound it fails at once
// with an *OverloadedError, and when ctx ends first with ctx's error.
// A nil Admission admits everything.
// A ctx that holds a turn of a already (AdmitRequest) is admitted at once.
func (a *Admission) Admit(ctx context.Context, id string) (done func(), err error) {
	if held, _ := ctx.Value(admittedKey{}).(*Admission); a == nil || held == a {
		return func() {}, nil
	}
	a.mu.Lock()
	if a.free > 0 && a.queued == 0 {
		a.free--
		a.mu.Unlock()
		return a.turn(), nil
	}
	mine := len(a.waiting[id])
	if a.queued >= a.o.MaxQueued || mine >= a.o.MaxQueuedPerWorkspace {
		err := a.refuseLocked(mine)
		a.mu.Unlock()
		metrics.HostOverloadRefusals.Inc()
		return nil, err
	}
	w := &waiter{ready: make(chan struct{})}
	if mine == 0 {
		a.ring = append(a.ring, id)
	}
	a.waiting[id] = append(a.waiting[id], w)
	a.queued++
	metrics.SetHostQueued(a.queued)
	a.mu.Unlock()
	select {
	case <-w.ready:
		return a.turn(), nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	if w.granted {
		a.mu.Unlock()
		a.turn()() // passed on to the next
	} else {
		a.dropLocked(id, w)
		a.mu.Unlock()
	}
	return nil, ctx.Err()
}

// admittedKey marks a request's context as holding a turn of the
// Admission that is its value.
type admittedKey struct{}

// AdmitRequest is Admit of r, a request of workspace id, and returns r
// marked as holding the turn: a handler further in (the host's own,
// behind a fleet's that had to take the workspace's lease first) that
// asks the same Admission for r's turn gets it at once, not a second one.
func (a *Admission) AdmitRequest(r *http.Request, id string) (*http.Request, func(), error) {
	done, err := a.Admit(r.Context(), id)
	if err != nil || a == nil {
		return r, done, err
	}
	return r.WithContext(context.WithValue(r.Context(), admittedKey{}, a)), done, nil
}

// refuseLocked is the refusal of a request past a queue bound, mine of
// its workspace's waiting, with a retry hint: the time the queue ahead
// of it takes to drain at the recent pace, a second at least (HTTP's
// Retry-After counts whole seconds).
func (a *Admission) refuseLocked(mine int) error {
	wait := time.Duration(float64(a.queued) / float64(a.o.MaxRequests) * a.hold * float64(time.Second))
	retry := time.Duration(retrySeconds(wait)) * time.Second
	msg := fmt.Sprintf("%v: %d requests wait for one of the host's %d turns (--max-requests, --max-queued %d)", ErrOverloaded, a.queued, a.o.MaxRequests, a.o.MaxQueued)
	if mine >= a.o.MaxQueuedPerWorkspace {
		msg = fmt.Sprintf("%v: %d requests of this workspace wait already (--max-queued-per-workspace)", ErrOverloaded, mine)
	}
	return &OverloadedError{Msg: msg + fmt.Sprintf("; retry in %v", retry), Retry: retry}
}

// turn is the done of a request granted a turn: it passes the turn on
// when the request ends or after MaxHold, whichever comes first.
func (a *Admission) turn() func() {
	start := time.Now()
	var once sync.Once
	pass := func() { once.Do(func() { a.pass(time.Since(start)) }) }
	t := time.AfterFunc(a.o.MaxHold, pass)
	return func() {
		t.Stop()
		pass()
	}
}

// pass gives a turn held for held to the next request waiting, or frees
// it.
func (a *Admission) pass(held time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// A tenth of the weight to each turn: the pace of the last few dozen.
	a.hold += (held.Seconds() - a.hold) / 10
	if len(a.ring) == 0 {
		a.free++
		return
	}
	id := a.ring[0]
	a.ring = a.ring[1:]
	q := a.waiting[id]
	w := q[0]
	if len(q) == 1 {
		delete(a.waiting, id)
	} else {
		a.waiting[id] = q[1:]
		a.ring = append(a.ring, id) // its next request waits a round
	}
	a.queued--
	metrics.SetHostQueued(a.queued)
	w.granted = true
	close(w.ready)
}

// dropLocked removes w, which gave up waiting, from id's queue.
func (a *Admission) dropLocked(id string, w *waiter) {
	q := a.waiting[id]
	for i, x := range q {
		if x != w {
			continue
		}
		q = append(q[:i:i], q[i+1:]...)
		a.queued--
		metrics.SetHostQueued(a.queued)
		break
	}
	if len(q) > 0 {
		a.waiting[id] = q
		return
	}
	delete(a.waiting, id)
	for i, x := range a.ring {
		if x == id {
			a.ring = append(a.ring[:i:i], a.ring[i+1:]...)
			break
		}
	}
}

// retrySeconds is a Retry-After value for d: whole seconds, rounded up.
func retrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
