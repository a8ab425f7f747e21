package js

import (
	"bytes"
	"embed"
	"errors"
	iofs "io/fs"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
	"github.com/dop251/goja_nodejs/require"

	"github.com/sqlfs/sqlfs/sidecar/git"
	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

//go:embed lib/*.js
var libFS embed.FS

// prelude holds every library file compiled once per process; a program
// run only executes them, which is what keeps start-up near a millisecond.
var prelude = func() map[string]*goja.Program {
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
}()

// libModules maps module names to the library file that implements them.
var libModules = map[string]string{
	"fs": "fs", "path": "path", "path/posix": "path", "util": "util", "events": "events",
	"os": "os", "child_process": "child_process", "assert": "assert", "assert/strict": "assert",
	"timers": "timers", "timers/promises": "timers_promises",
}

// runLib runs a library file with module as its module object.
func (v *vm) runLib(name string, module *goja.Object) error {
	fn, err := v.rt.RunProgram(prelude[name])
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
	mods["sqlfs:publish"] = v.libLoader("publish")
	mods["sqlfs:git"] = v.libLoader("git")
	mods["sqlfs:checkpoint"] = v.libLoader("checkpoint")
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
	if fi, err := v.env.FS.Stat(name); err != nil || fi.IsDir() {
		if err == nil || errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, require.ModuleFileDoesNotExistError
		}
		return nil, err
	}
	data, err := readAll(v.env.FS, name)
	if err != nil {
		return nil, err
	}
	switch path.Ext(name) {
	case ".json", ".js", ".cjs":
		if path.Ext(name) == ".json" || (!esmSyntax.Match(data) && !bytes.Contains(data, []byte("await"))) {
			return data, nil
		}
	}
	out, err := transform(name, stripShebang(string(data)))
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// execSync runs a command line in the shell that runs this program, with
// its filesystem and limits, and returns its status and output.
func (v *vm) execSync(cmd, dir, input string, env map[string]string) map[string]any {
	var stdout, stderr bytes.Buffer
	e := *v.env
	e.Stdout, e.Stderr = &stdout, &stderr
	e.Stdin = strings.NewReader(input)
	e.Dir = v.cwd
	if dir != "" {
		e.Dir = v.resolve("spawn", dir)
	}
	if env != nil {
		e.Environ = func() []string {
			out := make([]string, 0, len(env))
			for k, val := range env {
				out = append(out, k+"="+val)
			}
			return out
		}
		e.Getenv = func(name string) string { return env[name] }
	}
	status := 127
	if e.Run != nil {
		status = e.Run(v.ctx, &e, []string{"sh", "-c", cmd})
	} else {
		stderr.WriteString("child_process: no shell to run commands in\n")
	}
	return map[string]any{
		"status": status,
		"stdout": buffer.WrapBytes(v.rt, stdout.Bytes()),
		"stderr": buffer.WrapBytes(v.rt, stderr.Bytes()),
	}
}

// git runs the shell's git built-in with args in dir (the program's working
// directory when empty), on the program's filesystem view and limits.
func (v *vm) git(args []string, dir string) map[string]any {
	var stdout, stderr bytes.Buffer
	e := *v.env
	e.Stdout, e.Stderr = &stdout, &stderr
	e.Stdin = strings.NewReader("")
	e.Dir = v.cwd
	if dir != "" {
		e.Dir = v.workDir(dir)
	}
	status := git.Main(v.ctx, &e, append([]string{"git"}, args...))
	return map[string]any{"status": status, "stdout": stdout.String(), "stderr": stderr.String()}
}

func (v *vm) publish(p string, ttl float64) string {
	ws, ok := strings.CutPrefix(p, "/workspace")
	if !ok || (ws != "" && ws[0] != '/') {
		panic(v.rt.NewTypeError("sqlfs:publish: only paths in /workspace can be published: " + p))
	}
	if v.cfg.publish == nil {
		panic(v.rt.NewGoError(errors.New("sqlfs:publish: publishing is not configured for this exec (serve has no --public-addr)")))
	}
	url, err := v.cfg.publish(v.ctx, v.cfg.actor, "/"+strings.TrimPrefix(ws, "/"), time.Duration(ttl*float64(time.Second)))
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	return url
}

var _ builtin.Func = Node
