package js

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// nodeVersion is the Node.js release whose behaviour the modules follow.
const nodeVersion = "v20.20.2"

// DefaultMaxHeapBytes is the heap one program may use.
const DefaultMaxHeapBytes = 512 << 20

// Command is the shell's `node` command (for shell.Options.Commands),
// running programs as opts say; what differs per exec (the network, the
// actor) comes from the shell's builtin.Env.
func Command(opts Options) builtin.Func {
	if opts.Runner == nil {
		opts.Runner = DefaultWorkers()
	}
	if opts.MaxHeapBytes <= 0 {
		opts.MaxHeapBytes = DefaultMaxHeapBytes
	}
	return func(ctx context.Context, env *builtin.Env, args []string) int {
		return node(ctx, env, args, &opts)
	}
}

const nodeUsage = "usage: node [-e CODE | -p EXPR | FILE] [ARG...]"

// node runs `node FILE [ARG...]`, `node -e CODE`, `node -p EXPR`, or a
// script on standard input.
func node(ctx context.Context, env *builtin.Env, args []string, opts *Options) int {
	var (
		code, file string
		print      bool
		haveCode   bool
	)
	rest := args[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "-" {
		switch flag := rest[0]; flag {
		case "-e", "--eval", "-p", "--print":
			if len(rest) < 2 {
				env.Errorf("node", "%s requires an argument", flag)
				return 9
			}
			code, haveCode, print = rest[1], true, flag == "-p" || flag == "--print"
			rest = rest[2:]
		case "--version", "-v":
			fmt.Fprintln(env.Stdout, nodeVersion)
			return 0
		case "--":
			rest = rest[1:]
			goto done
		default:
			env.Errorf("node", "bad option: %s\n%s", flag, nodeUsage)
			return 9
		}
	}
done:
	argv := []string{"/usr/bin/node"}
	switch {
	case haveCode:
		file = path.Join(env.Dir, "[eval]")
	case len(rest) > 0 && rest[0] != "-":
		file = env.Abs(rest[0])
		argv = append(argv, file)
		// The module is the file a symlink names (node_modules/.bin/*), as
		// Node loads it: its relative requires start there.
		if real, err := realpath(env.FS, file); err == nil {
			file = real
		}
		rest = rest[1:]
		data, err := readAll(env.FS, file)
		if err != nil {
			fmt.Fprintf(env.Stderr, "Error: Cannot find module '%s'\n    code: 'MODULE_NOT_FOUND'\n\nNode.js %s\n", file, nodeVersion)
			return 1
		}
		code = stripShebang(string(data))
	default:
		data, err := io.ReadAll(env.Stdin)
		if err != nil {
			env.Errorf("node", "stdin: %v", err)
			return 1
		}
		code, file = string(data), path.Join(env.Dir, "[stdin]")
	}
	argv = append(argv, rest...)
	var fetch *http.Client
	if env.HTTP != nil {
		fetch = &http.Client{Transport: env.HTTP}
	}
	return opts.Runner.Run(ctx, env, Program{
		File: file, Code: code, Print: print, Argv: argv,
		Fetch: fetch, MaxHeapBytes: opts.MaxHeapBytes, Publish: opts.Publish, Checkpoint: opts.Checkpoint, Actor: env.Actor,
		scope: opts, // one Command's execs (a workspace's) may share a worker
	})
}

func readAll(fsys builtin.FS, name string) ([]byte, error) {
	data, _, err := readWhole(fsys, name)
	return data, err
}

func stripShebang(s string) string {
	if strings.HasPrefix(s, "#!") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			return "//" + s[2:]
		}
		return ""
	}
	return s
}

// runProgram runs one program in a fresh runtime to its end and returns
// its exit status.
func runProgram(ctx context.Context, env *builtin.Env, svc services, p Program) int {
	v := newVM(env)
	return v.run(ctx, svc, p, v.setup())
}

// run runs p in v, whose setup returned setupErr, to its end and returns
// its exit status. What of the job the globals show (argv, env, the
// clocks' origin) is bound here, so that v may be set up before the job.
func (v *vm) run(ctx context.Context, svc services, p Program, setupErr error) int {
	// What a program starts in Go (a zlib stream's goroutine) ends with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	v.ctx, v.svc, v.prog, v.argv, v.cwd, v.start = ctx, svc, p, p.Argv, v.env.Dir, time.Now()
	stop := v.watch(ctx, p.MaxHeapBytes)
	defer stop()
	file, code := p.File, p.Code
	if setupErr != nil {
		return v.finish(setupErr)
	}
	if start, ok := goja.AssertFunction(v.rt.Get("__start")); ok {
		if _, err := start(goja.Undefined()); err != nil {
			return v.finish(err)
		}
	}
	if p.Print {
		code = "__printResult(eval(" + jsString(code) + "))"
	}
	main, err := programs.compile(file, []byte(code), func() (*goja.Program, error) {
		src, err := transform(file, code)
		if err != nil {
			return nil, transformError{err}
		}
		return goja.Compile(file, wrapModule(src), false)
	})
	if te, ok := errors.AsType[transformError](err); ok {
		fmt.Fprintf(v.stderr, "%s\n\nNode.js %s\n", te.error, nodeVersion)
		return 1
	}
	if err != nil {
		return v.finish(err)
	}
	fn, err := v.rt.RunProgram(main)
	if err != nil {
		return v.finish(err)
	}
	runMain, _ := goja.AssertFunction(v.rt.Get("__runMain"))
	if _, err := runMain(goja.Undefined(), fn, v.rt.ToValue(file)); err != nil {
		return v.finish(err)
	}
	return v.finish(v.loop())
}

// finish runs the program's exit handlers and returns its status.
func (v *vm) finish(err error) int {
	if err == nil {
		if emit, ok := goja.AssertFunction(v.rt.Get("__emitExit")); ok {
			if _, err = emit(goja.Undefined()); err == nil {
				return v.exitCode
			}
		} else {
			return v.exitCode
		}
	}
	if ctxErr := v.ctx.Err(); ctxErr != nil {
		// The shell reports the timeout or cancellation itself.
		return 124
	}
	if ie, ok := errors.AsType[*goja.InterruptedError](err); ok {
		if e, ok := ie.Value().(*errHeapBudget); ok {
			fmt.Fprintf(v.stderr, "FATAL ERROR: %v\n", e)
			return 134
		}
	}
	return v.report(err)
}

// transformError is esbuild's message on a program it cannot transform,
// printed as it is.
type transformError struct{ error }

// wrapModule makes a CommonJS module function of src.
func wrapModule(src string) string {
	return "(function(exports,require,module,__filename,__dirname){" + src + "\n})"
}

func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// errHeapBudget interrupts a program whose heap grew past its budget.
type errHeapBudget struct{ limit int64 }

func (e *errHeapBudget) Error() string {
	return fmt.Sprintf("JavaScript heap out of memory: the exec's memory budget of %d MiB is spent", e.limit>>20)
}

// watch interrupts the runtime when ctx ends (the exec's timeout or
// cancellation) or when the Go heap grew by more than maxHeap since the
// program started. The heap is the process's, so the figure is coarse; it
// catches a runaway program long before it hurts the owner.
func (v *vm) watch(ctx context.Context, maxHeap int64) func() {
	done := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heapNow := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := heapNow()
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				v.rt.Interrupt(ctx.Err())
				return
			case <-tick.C:
				if maxHeap > 0 && heapNow()-base > maxHeap {
					v.rt.Interrupt(&errHeapBudget{limit: maxHeap})
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
