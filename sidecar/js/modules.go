package js

import (
	"embed"
	"errors"
	iofs "io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/require"
)

//go:embed lib/*.js
var libFS embed.FS

// prelude holds every library file compiled once per process, on first
// use (a worker compiles them before it says it is ready; an owner whose
// programs all run in workers never does); a program run only executes
// them, which is what keeps start-up near a millisecond.
var prelude = sync.OnceValue(func() map[string]*goja.Program {
	out := map[string]*goja.Program{}
	ents, err := libFS.ReadDir("lib")
	if err != nil {
		panic(err)
	}
	for _, e := range ents {
		src, err := libFS.ReadFile("lib/" + e.Name())
		if err != nil {
			panic(err)
		}
		name := strings.TrimSuffix(e.Name(), ".js")
		out[name] = goja.MustCompile("node:"+name, "(function(module,exports,require,native){"+string(src)+"\n})", true)
	}
	return out
})

// libModules maps module names to the library file that implements them.
var libModules = map[string]string{
	"fs": "fs", "path": "path", "path/posix": "path", "util": "util", "events": "events",
	"os": "os", "child_process": "child_process", "assert": "assert", "assert/strict": "assert",
	"timers": "timers", "timers/promises": "timers_promises",
	"crypto": "crypto", "zlib": "zlib", "string_decoder": "string_decoder", "querystring": "querystring",
	"url": "url", "tty": "tty", "perf_hooks": "perf_hooks", "module": "module", "stream": "stream", "readline": "readline",
	"stream/web": "webstreams",
}

// builtinModules lists the modules require finds by name, as
// module.builtinModules does (those this backend lacks included: they
// exist, and say so when loaded).
func builtinModules() []string {
	names := []string{"buffer", "console", "process", "fs/promises", "util/types", "stream/promises", "readline/promises"}
	for name := range libModules {
		names = append(names, name)
	}
	names = append(names, unsupportedModules...)
	sort.Strings(names)
	return names
}

// requireFrom is module.createRequire: a require resolving from file,
// through a function compiled under that file's name (goja_nodejs
// resolves from the calling frame's file).
func (v *vm) requireFrom(file string) goja.Value {
	prg, err := goja.Compile(file, "(function(r){return function require(id){return r(id)}})", false)
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	mk, err := v.rt.RunProgram(prg)
	if err != nil {
		panic(err)
	}
	fn, _ := goja.AssertFunction(mk)
	req, err := fn(goja.Undefined(), v.rt.Get("require"))
	if err != nil {
		panic(err)
	}
	return req
}

// runLib runs a library file with module as its module object.
func (v *vm) runLib(name string, module *goja.Object) error {
	fn, err := v.rt.RunProgram(prelude()[name])
	if err != nil {
		return err
	}
	call, _ := goja.AssertFunction(fn)
	_, err = call(goja.Undefined(), module, module.Get("exports"), v.rt.Get("require"), v.native)
	return err
}

func (v *vm) libLoader(name string) require.ModuleLoader {
	return func(rt *goja.Runtime, module *goja.Object) {
		if err := v.runLib(name, module); err != nil {
			panic(err)
		}
	}
}

// nativeModules are the modules a program can require by name, with or
// without the node: prefix.
func (v *vm) nativeModules() map[string]require.ModuleLoader {
	mods := map[string]require.ModuleLoader{}
	for name, file := range libModules {
		mods[name] = v.libLoader(file)
	}
	reexport := func(from, prop string) require.ModuleLoader {
		return func(rt *goja.Runtime, module *goja.Object) {
			m := require.Require(rt, from).ToObject(rt)
			if prop != "" {
				_ = module.Set("exports", m.Get(prop))
				return
			}
			_ = module.Set("exports", m)
		}
	}
	mods["fs/promises"] = reexport("fs", "promises")
	mods["util/types"] = reexport("util", "types")
	mods["stream/promises"] = reexport("stream", "promises")
	mods["readline/promises"] = reexport("readline", "promises")
	mods["sqlfs:publish"] = v.libLoader("publish")
	mods["sqlfs:git"] = v.libLoader("git")
	mods["sqlfs:checkpoint"] = v.libLoader("checkpoint")
	// The libraries of globals loaded on first use.
	mods["sqlfs:intl"] = v.libLoader("intl")
	mods["sqlfs:abort"] = v.libLoader("abort")
	for _, name := range unsupportedModules {
		mods[name] = func(*goja.Runtime, *goja.Object) { panic(v.unsupported("node:" + name)) }
	}
	mods["buffer"] = func(rt *goja.Runtime, module *goja.Object) {
		buffer.Require(rt, module)
		patch, _ := goja.AssertFunction(rt.Get("__patchBuffer"))
		if _, err := patch(goja.Undefined(), module.Get("exports").ToObject(rt).Get("Buffer")); err != nil {
			panic(err)
		}
	}
	mods["console"] = reexportGlobal("console")
	mods["process"] = reexportGlobal("process")
	return mods
}

func reexportGlobal(name string) require.ModuleLoader {
	return func(rt *goja.Runtime, module *goja.Object) {
		_ = module.Set("exports", rt.Get(name))
	}
}

// loadSource reads a module file for require: workspace files, with
// TypeScript and ES modules transformed.
func (v *vm) loadSource(name string) ([]byte, error) {
	if path.Ext(name) == ".node" {
		panic(v.unsupported("the native addon " + name + " (a .node file)"))
	}
	data, _, err := readWhole(v.env.FS, name)
	if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) {
		return nil, require.ModuleFileDoesNotExistError
	}
	if err != nil {
		return nil, err
	}
	if path.Ext(name) == ".json" {
		return data, nil
	}
	prg, err := programs.compile(name, data, func() (*goja.Program, error) { return compileModule(name, data) })
	if err != nil {
		return nil, err
	}
	// goja_nodejs compiles what this returns into the module function: a
	// call to the cached program's, with the same arguments.
	v.modulePrograms = append(v.modulePrograms, prg)
	return []byte("return __sqlfsModule(" + strconv.Itoa(len(v.modulePrograms)-1) + ").apply(this, arguments)"), nil
}

// runModule runs the compiled program loadSource handed over as id and
// returns its module function.
func (v *vm) runModule(id int) goja.Value {
	if id < 0 || id >= len(v.modulePrograms) || v.modulePrograms[id] == nil {
		panic(v.rt.NewTypeError("no such module program"))
	}
	prg := v.modulePrograms[id]
	v.modulePrograms[id] = nil
	fn, err := v.rt.RunProgram(prg)
	if err != nil {
		panic(err)
	}
	return fn
}

// compileModule compiles a module file as a CommonJS module function:
// as it is when goja can, else lowered by esbuild (ES modules,
// TypeScript, syntax goja lacks). goja refuses an import or export
// statement in a function body where it meets the first one, at the top
// of most modules; a big CommonJS file is not parsed twice over.
func compileModule(file string, data []byte) (*goja.Program, error) {
	src := string(data)
	if ext := path.Ext(file); ext == ".js" || ext == ".cjs" {
		if prg, err := goja.Compile(file, wrapModule(src), false); err == nil {
			return prg, nil
		}
	}
	out, err := lower(file, stripShebang(src), loaderOf(file))
	if err != nil {
		return nil, err
	}
	return goja.Compile(file, wrapModule(out), false)
}

// execSync runs a command line in the shell that runs this program, with
// its filesystem and limits, and returns its status and output.
func (v *vm) execSync(cmd, dir, input string, env map[string]string) map[string]any {
	r := runRequest{Cmd: cmd, Dir: v.cwd, Input: input, Env: env}
	if dir != "" {
		r.Dir = v.resolve("spawn", dir)
	}
	res := v.svc.run(v.ctx, r)
	return map[string]any{
		"status": res.Status,
		"stdout": buffer.WrapBytes(v.rt, res.Stdout),
		"stderr": buffer.WrapBytes(v.rt, res.Stderr),
	}
}

// git runs the shell's git built-in with args in dir (the program's working
// directory when empty), on the program's filesystem view and limits.
func (v *vm) git(args []string, dir string) map[string]any {
	d := v.cwd
	if dir != "" {
		d = v.workDir(dir)
	}
	res := v.svc.git(v.ctx, args, d)
	return map[string]any{"status": res.Status, "stdout": string(res.Stdout), "stderr": string(res.Stderr)}
}

func (v *vm) publish(p string, ttl float64) string {
	url, err := v.svc.publish(v.ctx, p, time.Duration(ttl*float64(time.Second)))
	if _, ok := err.(errNotPublishable); ok {
		panic(v.rt.NewTypeError(err.Error()))
	}
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	return url
}
