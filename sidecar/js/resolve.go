package js

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/dop251/goja"
)

// Node's package resolution beyond goja_nodejs's (which knows "main"
// only): the "exports" map of a package in node_modules and the
// "imports" map (#names) of the package a module is in, with the
// conditions require, node and default (then import, since ES modules are
// lowered to CommonJS here). goja_nodejs asks the path resolver for
// DIR/node_modules + NAME; the answer is the file the maps name.

// resolvePath joins name to base, the way goja_nodejs's require calls it.
func (v *vm) resolvePath(base, name string) string {
	if !path.IsAbs(name) && path.Base(base) == "node_modules" {
		if strings.HasPrefix(name, "#") {
			if p, ok := v.packageImport(path.Dir(base), name); ok {
				return p
			}
		} else if p, ok := v.packageExport(base, name); ok {
			return p
		}
	}
	return v.abs(base, name)
}

var (
	requireConditions = []string{"require", "node", "default"}
	importConditions  = []string{"import", "node", "default"}
)

// packageExport resolves NAME[/SUBPATH] in the node_modules directory nm
// through the package's exports; ok is false when it has none.
func (v *vm) packageExport(nm, spec string) (string, bool) {
	name, sub := spec, "."
	parts := strings.SplitN(spec, "/", 3)
	switch {
	case strings.HasPrefix(spec, "@") && len(parts) == 3:
		name, sub = parts[0]+"/"+parts[1], "./"+parts[2]
	case !strings.HasPrefix(spec, "@") && len(parts) > 1:
		name, sub = parts[0], "./"+strings.Join(parts[1:], "/")
	}
	dir := path.Join(nm, name)
	exports, ok := v.packageField(dir, "exports")
	if !ok {
		return "", false
	}
	if target, ok := matchExports(exports, sub); ok {
		return path.Join(dir, target), true
	}
	e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(fmt.Sprintf("Package subpath '%s' is not defined by \"exports\" in %s/package.json", sub, dir)))
	_ = e.Set("code", "ERR_PACKAGE_PATH_NOT_EXPORTED")
	panic(e)
}

// packageImport resolves a #name through the imports of the nearest
// package.json at or above dir.
func (v *vm) packageImport(dir, name string) (string, bool) {
	for {
		if _, err := v.env.FS.Stat(path.Join(dir, "package.json")); err == nil {
			imports, ok := v.packageField(dir, "imports")
			if !ok {
				return "", false
			}
			target, ok := matchExports(imports, name)
			if !ok || !strings.HasPrefix(target, "./") {
				return "", false
			}
			return path.Join(dir, target), true
		}
		if dir == "/" {
			return "", false
		}
		dir = path.Dir(dir)
	}
}

// packageField is one field of dir/package.json, keys in their order.
func (v *vm) packageField(dir, field string) (any, bool) {
	data, err := readAll(v.env.FS, path.Join(dir, "package.json"))
	if err != nil {
		return nil, false
	}
	pkg, err := decodeOrdered(json.NewDecoder(bytes.NewReader(data)))
	obj, ok := pkg.(ordered)
	if err != nil || !ok {
		return nil, false
	}
	val, ok := obj.get(field)
	return val, ok && val != nil
}

// ordered is a JSON object with its keys in document order, which decides
// among conditions.
type ordered []struct {
	key string
	val any
}

func (o ordered) get(k string) (any, bool) {
	for _, kv := range o {
		if kv.key == k {
			return kv.val, true
		}
	}
	return nil, false
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var o ordered
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o = append(o, struct {
					key string
					val any
				}{k.(string), val})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			var a []any
			for dec.More() {
				val, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, val)
			}
			_, err := dec.Token()
			return a, err
		}
	}
	if err == io.EOF {
		return nil, err
	}
	return tok, nil
}

// matchExports finds sub ("." or "./x", or "#x" for imports) in an
// exports (or imports) value: exact keys, then the longest "*" pattern.
func matchExports(exports any, sub string) (string, bool) {
	obj, isObj := exports.(ordered)
	if !isObj || len(obj) == 0 || !strings.HasPrefix(obj[0].key, ".") && !strings.HasPrefix(obj[0].key, "#") {
		// Sugar: the value of "." itself.
		obj = ordered{{key: ".", val: exports}}
	}
	if val, ok := obj.get(sub); ok && !strings.Contains(sub, "*") {
		return exportTarget(val, "")
	}
	best, match := -1, ""
	for i, kv := range obj {
		prefix, suffix, ok := strings.Cut(kv.key, "*")
		if !ok || !strings.HasPrefix(sub, prefix) || len(sub) < len(kv.key)-1 || !strings.HasSuffix(sub, suffix) {
			continue
		}
		if best < 0 || len(prefix) > len(strings.SplitN(obj[best].key, "*", 2)[0]) {
			best, match = i, sub[len(prefix):len(sub)-len(suffix)]
		}
	}
	if best < 0 {
		return "", false
	}
	return exportTarget(obj[best].val, match)
}

// exportTarget picks a target among conditions and fallbacks, with the
// pattern's match put in place of "*".
func exportTarget(val any, match string) (string, bool) {
	for _, conds := range [][]string{requireConditions, importConditions} {
		if t, ok := pickTarget(val, match, conds); ok {
			return t, true
		}
	}
	return "", false
}

func pickTarget(val any, match string, conds []string) (string, bool) {
	switch t := val.(type) {
	case string:
		if !strings.HasPrefix(t, "./") {
			return "", false
		}
		return strings.ReplaceAll(t, "*", match), true
	case []any:
		for _, x := range t {
			if s, ok := pickTarget(x, match, conds); ok {
				return s, true
			}
		}
	case ordered:
		for _, kv := range t {
			for _, c := range conds {
				if kv.key == c {
					if s, ok := pickTarget(kv.val, match, conds); ok {
						return s, true
					}
				}
			}
		}
	}
	return "", false
}

// unsupported is the one-line error for what the js backend does not
// have, pointing at the backend that does.
func (v *vm) unsupported(what string) *goja.Object {
	e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(fmt.Sprintf(
		"ERR_SQLFS_UNSUPPORTED: %s is not available in the js backend; run this program with the container backend (backend \"container\")", what)))
	_ = e.Set("code", "ERR_SQLFS_UNSUPPORTED")
	return e
}

// unsupportedModules are Node's built-in modules this backend lacks: a
// require names them instead of "Cannot find module".
var unsupportedModules = []string{
	"http", "https", "http2", "net", "tls", "dgram", "dns", "dns/promises", "cluster", "worker_threads",
	"inspector", "v8", "vm", "repl",
	"async_hooks", "diagnostics_channel", "trace_events", "wasi", "domain", "punycode", "sys", "test",
}

// requireResolve is require.resolve: the file require(id) would load from
// the calling module, without loading it; a built-in resolves to its name.
func (v *vm) requireResolve(call goja.FunctionCall) goja.Value {
	id := call.Argument(0).String()
	dir := v.cwd
	if frames := v.rt.CaptureCallStack(2, nil); len(frames) > 1 && path.IsAbs(frames[1].SrcName()) {
		dir = path.Dir(frames[1].SrcName())
	}
	if p, ok := v.resolveModule(id, dir); ok {
		return v.rt.ToValue(p)
	}
	e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(fmt.Sprintf("Cannot find module '%s'", id)))
	_ = e.Set("code", "MODULE_NOT_FOUND")
	panic(e)
}

func (v *vm) resolveModule(id, dir string) (string, bool) {
	name := strings.TrimPrefix(id, "node:")
	if slices.Contains(builtinModules(), name) || strings.HasPrefix(id, "sqlfs:") {
		return id, true
	}
	if path.IsAbs(id) || id == "." || id == ".." || strings.HasPrefix(id, "./") || strings.HasPrefix(id, "../") {
		return v.resolveFileOrDir(v.abs(dir, id))
	}
	for d := dir; ; d = path.Dir(d) {
		if path.Base(d) != "node_modules" {
			if p, ok := v.resolveFileOrDir(v.resolvePath(path.Join(d, "node_modules"), id)); ok {
				return p, true
			}
		}
		if d == "/" {
			return "", false
		}
	}
}

// resolveFileOrDir is Node's LOAD_AS_FILE then LOAD_AS_DIRECTORY.
func (v *vm) resolveFileOrDir(p string) (string, bool) {
	isFile := func(p string) bool { fi, err := v.env.FS.Stat(p); return err == nil && !fi.IsDir() }
	for _, c := range []string{p, p + ".js", p + ".json"} {
		if isFile(c) {
			return c, true
		}
	}
	if main, ok := v.packageField(p, "main"); ok {
		if m, ok := main.(string); ok {
			mp := path.Join(p, m)
			for _, c := range []string{mp, mp + ".js", mp + ".json", mp + "/index.js", mp + "/index.json"} {
				if isFile(c) {
					return c, true
				}
			}
		}
	}
	for _, c := range []string{p + "/index.js", p + "/index.json"} {
		if isFile(c) {
			return c, true
		}
	}
	return "", false
}
