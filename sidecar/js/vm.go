package js

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dop251/goja"
	_ "github.com/dop251/goja_nodejs/buffer" // the buffer module
	"github.com/dop251/goja_nodejs/require"
	"github.com/dop251/goja_nodejs/url"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// vm is one JavaScript program run: a fresh goja runtime, its event loop
// and its view of the shell's filesystem. Nothing outlives it.
type vm struct {
	rt     *goja.Runtime
	native *goja.Object // the Go functions the library files use
	ctx    context.Context
	env    *builtin.Env
	svc    services
	prog   Program
	cwd    string
	argv   []string

	stdout, stderr io.Writer

	// The event loop: macrotasks run in order, timers by due time; goja
	// runs the promise jobs (microtasks) after each call from Go returns.
	tasks    []func() error
	timers   timerHeap
	timerSeq int64
	live     map[int64]*timer

	invoker    goja.Callable
	rejections map[*goja.Promise]struct{} // rejected with no handler yet
	exitCode   int
	files      fdTable
	start      time.Time // hrtime's origin: the program's start, as a process's

	modulePrograms []*goja.Program // compiled modules loadSource handed to goja_nodejs
}

// exitRequest is the interrupt value process.exit uses to unwind the
// runtime from wherever it was called.
type exitRequest struct{ code int }

type timer struct {
	id       int64
	when     time.Time
	interval time.Duration
	repeat   bool
	ref      bool
	fn       goja.Value
	args     []goja.Value
	index    int
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].id < h[j].id
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any)   { t := x.(*timer); t.index = len(*h); *h = append(*h, t) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// newVM makes a runtime over env's file system and streams; run gives
// it its program, and env's directory, environment and input are read
// from then on (a worker prepares the next job's runtime before the job).
func newVM(env *builtin.Env) *vm {
	v := &vm{
		rt:         goja.New(),
		env:        env,
		stdout:     env.Stdout,
		stderr:     env.Stderr,
		live:       map[int64]*timer{},
		rejections: map[*goja.Promise]struct{}{},
	}
	v.rt.SetFieldNameMapper(goja.UncapFieldNameMapper())
	v.rt.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		if op == goja.PromiseRejectionReject {
			v.rejections[p] = struct{}{}
		} else {
			delete(v.rejections, p)
		}
	})
	return v
}

// setup installs the globals and the module registry.
func (v *vm) setup() error {
	reg := require.NewRegistry(
		require.WithLoader(v.loadSource),
		require.WithPathResolver(v.resolvePath),
	)
	for name, load := range v.nativeModules() {
		reg.RegisterNativeModule(name, load)
		reg.RegisterNativeModule("node:"+name, load)
	}
	req := reg.Enable(v.rt)
	// require as Node reports a missing module. A Go function, so that
	// require still finds its caller's directory one frame up.
	if err := v.rt.Set("require", func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).String()
		mod, err := req.Require(id)
		if err == nil {
			return mod
		}
		if errors.Is(err, require.InvalidModuleError) || errors.Is(err, require.NoSuchBuiltInModuleError) {
			e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(fmt.Sprintf("Cannot find module '%s'", id)))
			_ = e.Set("code", "MODULE_NOT_FOUND")
			panic(e)
		}
		if ex, ok := err.(*goja.Exception); ok {
			panic(ex.Value())
		}
		panic(v.rt.NewGoError(err))
	}); err != nil {
		return err
	}
	// Every module's require is this one (goja_nodejs hands modules the
	// global), so resolve is everywhere.
	if err := v.rt.Get("require").ToObject(v.rt).Set("resolve", v.requireResolve); err != nil {
		return err
	}
	if err := v.rt.GlobalObject().DefineDataProperty("__sqlfsModule", v.rt.ToValue(v.runModule), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}

	v.native = v.rt.NewObject()
	for name, fn := range v.natives() {
		if err := v.native.Set(name, fn); err != nil {
			return err
		}
	}
	module := v.rt.NewObject()
	_ = module.Set("exports", v.rt.NewObject())
	if err := v.runLib("globals", module); err != nil {
		return fmt.Errorf("js globals: %w", err)
	}
	return nil
}

// natives are the Go functions the prelude builds the globals from.
func (v *vm) natives() map[string]any {
	return map[string]any{
		"write": func(fd int, s goja.Value) {
			w := v.stdout
			if fd == 2 {
				w = v.stderr
			}
			if b, ok := s.Export().([]byte); ok {
				w.Write(b)
				return
			}
			io.WriteString(w, s.String())
		},
		"setTimer":   v.setTimer,
		"clearTimer": v.clearTimer,
		"refTimer": func(id int64, ref bool) {
			if t := v.live[id]; t != nil {
				t.ref = ref
			}
		},
		"queueTask": func(fn goja.Value) {
			v.tasks = append(v.tasks, func() error { return v.invoke(fn) })
		},
		"exit": func(code int) {
			v.exitCode = code
			v.rt.Interrupt(exitRequest{code})
		},
		"setExitCode":  func(code int) { v.exitCode = code },
		"cwd":          func() string { return v.cwd },
		"chdir":        v.chdir,
		"argv":         func() []string { return v.argv },
		"env":          v.environ,
		"hrtime":       func() int64 { return time.Since(v.start).Nanoseconds() },
		"fs":           v.fsObject(),
		"execSync":     v.execSync,
		"fetchAllowed": func() bool { return v.svc.network() },
		"fetch":        v.fetch,
		"publish":      v.publish,
		"checkpoint":   v.checkpoint,
		"git":          v.git,
		"crypto":       v.cryptoNatives(),
		"intl":         v.intlNatives(),
		"unsupported":  v.unsupported,
		"urlBase": func() goja.Value {
			m := v.rt.NewObject()
			_ = m.Set("exports", v.rt.NewObject())
			url.Require(v.rt, m)
			return m.Get("exports")
		},
		"builtinModules": builtinModules,
		"requireFrom":    v.requireFrom,
		"promiseState": func(val goja.Value) map[string]any {
			p, ok := val.Export().(*goja.Promise)
			if !ok {
				return map[string]any{"state": "pending"}
			}
			switch p.State() {
			case goja.PromiseStateFulfilled:
				return map[string]any{"state": "fulfilled", "value": p.Result()}
			case goja.PromiseStateRejected:
				return map[string]any{"state": "rejected", "value": p.Result()}
			}
			return map[string]any{"state": "pending"}
		},
	}
}

func (v *vm) environ() map[string]string {
	out := map[string]string{}
	if v.env.Environ == nil {
		return out
	}
	for _, kv := range v.env.Environ() {
		if k, val, ok := strings.Cut(kv, "="); ok {
			out[k] = val
		}
	}
	return out
}

func (v *vm) setTimer(fn goja.Value, ms float64, repeat bool, args []goja.Value) int64 {
	if ms < 1 || ms != ms {
		ms = 1 // as Node: a delay below 1 ms is 1 ms
	}
	d := time.Duration(ms * float64(time.Millisecond))
	v.timerSeq++
	t := &timer{id: v.timerSeq, when: time.Now().Add(d), interval: d, repeat: repeat, ref: true, fn: fn, args: args}
	v.live[t.id] = t
	heap.Push(&v.timers, t)
	return t.id
}

func (v *vm) clearTimer(id int64) {
	if t := v.live[id]; t != nil {
		delete(v.live, id)
		if t.index >= 0 {
			heap.Remove(&v.timers, t.index)
		}
	}
}

// loop runs macrotasks and timers until nothing keeps the program alive,
// the program exits or the context ends.
func (v *vm) loop() error {
	for {
		if err := v.checkRejections(); err != nil {
			return err
		}
		if err := v.ctx.Err(); err != nil {
			return err
		}
		if len(v.tasks) > 0 {
			t := v.tasks[0]
			v.tasks = v.tasks[1:]
			if err := t(); err != nil {
				return err
			}
			continue
		}
		if !v.anyRef() {
			return nil
		}
		t := v.timers[0]
		if d := time.Until(t.when); d > 0 {
			wait := time.NewTimer(d)
			select {
			case <-wait.C:
			case <-v.ctx.Done():
				wait.Stop()
				return v.ctx.Err()
			}
		}
		heap.Pop(&v.timers)
		if t.repeat {
			t.when = time.Now().Add(t.interval)
			heap.Push(&v.timers, t)
		} else {
			delete(v.live, t.id)
		}
		if err := v.invoke(t.fn, t.args...); err != nil {
			return err
		}
	}
}

// invoke calls a callback from the event loop through the prelude's
// __invoke, so process.nextTick callbacks run before the promise jobs.
func (v *vm) invoke(fn goja.Value, args ...goja.Value) error {
	if v.invoker == nil {
		v.invoker, _ = goja.AssertFunction(v.rt.Get("__invoke"))
	}
	_, err := v.invoker(goja.Undefined(), append([]goja.Value{fn}, args...)...)
	return err
}

func (v *vm) anyRef() bool {
	for _, t := range v.timers {
		if t.ref {
			return true
		}
	}
	return false
}

// errUnhandledRejection wraps the reason of a promise rejected with no
// handler once the microtasks ran: Node ends the program with it.
type errUnhandledRejection struct{ reason goja.Value }

func (e *errUnhandledRejection) Error() string { return "unhandled rejection: " + e.reason.String() }

func (v *vm) checkRejections() error {
	for p := range v.rejections {
		return &errUnhandledRejection{reason: p.Result()}
	}
	return nil
}

// report prints how the program failed, as Node would, and returns the
// exit status.
func (v *vm) report(err error) int {
	if ie, ok := errors.AsType[*goja.InterruptedError](err); ok {
		if e, ok := ie.Value().(exitRequest); ok {
			return e.code
		}
		if e, ok := ie.Value().(error); ok {
			err = e
		}
	}
	switch e := err.(type) {
	case *goja.Exception:
		fmt.Fprintf(v.stderr, "%s\n\nNode.js %s\n", uncaughtText(v.rt, e.Value(), e.String()), nodeVersion)
		return 1
	case *errUnhandledRejection:
		fmt.Fprintf(v.stderr, "%s\n\nNode.js %s\n", uncaughtText(v.rt, e.reason, ""), nodeVersion)
		return 1
	case *goja.CompilerSyntaxError:
		fmt.Fprintf(v.stderr, "%v\n\nSyntaxError: %s\n\nNode.js %s\n", e.File.Position(e.Offset), e.Message, nodeVersion)
		return 1
	}
	fmt.Fprintf(v.stderr, "node: %v\n", err)
	return 1
}

// cleanStack drops the frames of Go natives and of the library files
// from a stack, leaving the program's own, in Node's four-space style.
func cleanStack(stack string) string {
	lines := strings.Split(strings.TrimRight(stack, "\n"), "\n")
	out := lines[:0]
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "at ") && (strings.HasSuffix(t, "(native)") || strings.Contains(t, "node:globals")) {
			continue
		}
		if strings.HasPrefix(l, "\tat ") {
			l = "    " + l[1:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// uncaughtText is what Node prints for a thrown value: an error's stack,
// else "Uncaught VALUE".
func uncaughtText(rt *goja.Runtime, val goja.Value, fallback string) string {
	if o, ok := val.(*goja.Object); ok {
		if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) {
			return cleanStack(s.String())
		}
	}
	if val == nil {
		return fallback
	}
	if inspect, ok := goja.AssertFunction(rt.Get("__inspect")); ok {
		if s, err := inspect(goja.Undefined(), val); err == nil {
			return "Uncaught " + s.String()
		}
	}
	return "Uncaught " + val.String()
}
