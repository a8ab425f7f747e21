package js

import (
	"fmt"
	"github.com/dop251/goja"
	"path"
	"regexp"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// esmSyntax finds import/export statements, which make a script an ES
// module for esbuild to turn into CommonJS.
var esmSyntax = regexp.MustCompile(`(?m)^\s*(import\s*[\w{*'"]|export\s)`)

// transform turns TypeScript and ES modules into CommonJS that goja runs;
// plain scripts pass untouched (and fast).
func transform(file, code string) (string, error) {
	ext := path.Ext(file)
	if ext == ".json" {
		return code, nil
	}
	loader := loaderOf(file)
	if (loader == api.LoaderJS || strings.HasSuffix(file, "]")) && ext != ".mjs" && !esmSyntax.MatchString(code) && !strings.Contains(code, "await") {
		if _, err := goja.Compile(file, code, false); err == nil {
			return code, nil
		}
		// What goja cannot compile may be TypeScript typed at the prompt,
		// or syntax it lacks (async generators).
		loader = api.LoaderTS
	}
	return lower(file, code, loader)
}

// loaderOf is the esbuild loader for a file's extension.
func loaderOf(file string) api.Loader {
	switch path.Ext(file) {
	case ".ts", ".mts", ".cts":
		return api.LoaderTS
	case ".tsx":
		return api.LoaderTSX
	case ".jsx":
		return api.LoaderJSX
	case "", ".js]", "]":
		// -e, -p and stdin: the prompt takes TypeScript too.
		return api.LoaderTS
	}
	return api.LoaderJS
}

// lower has esbuild turn code into CommonJS goja runs.
func lower(file, code string, loader api.Loader) (string, error) {
	tla := hasTopLevelAwait(code)
	if tla {
		// CommonJS has no top-level await: strip the types, then wrap the
		// body (all but the imports) in an async function.
		esm, err := esbuild(file, code, loader, api.FormatESModule)
		if err != nil {
			return "", err
		}
		imports, body := splitImports(esm)
		code, loader = imports+"\n(async () => {\n"+body+"\n})();", api.LoaderJS
	}
	return esbuild(file, code, loader, api.FormatCommonJS)
}

func esbuild(file, code string, loader api.Loader, format api.Format) (string, error) {
	res := api.Transform(code, api.TransformOptions{
		Loader:     loader,
		Format:     format,
		Target:     target(format),
		Sourcefile: file,
		Supported:  map[string]bool{"dynamic-import": false},
		Define:     map[string]string{"import.meta": importMeta},
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		if m.Location != nil {
			return "", fmt.Errorf("%s:%d\n%s\n\nSyntaxError: %s", file, m.Location.Line, m.Location.LineText, m.Text)
		}
		return "", fmt.Errorf("SyntaxError: %s", m.Text)
	}
	out := string(res.Code)
	if format == api.FormatCommonJS {
		out = esmInterop.Replace(out)
	}
	if format == api.FormatCommonJS && strings.Contains(out, importMeta) {
		// On the first line, so that line numbers stay the source's.
		out = "var " + importMeta + "={url:require('url').pathToFileURL(__filename).href,filename:__filename,dirname:__dirname};" + out
	}
	return out, nil
}

// esmInterop patches esbuild's helpers for Node's rule on a default
// import from an .mjs file: module.exports of a CommonJS module, but the
// default export of an ES module, which here is CommonJS too. Lowered ES
// modules are marked, and only unmarked ones give module.exports.
var esmInterop = strings.NewReplacer(
	`isNodeMode || !mod || !mod.__esModule ?`,
	`!mod || !mod.__esModule || isNodeMode && !mod[Symbol.for("sqlfs.esm")] ?`,
	`__defProp({}, "__esModule", { value: true })`,
	`__defProp(__defProp({}, "__esModule", { value: true }), Symbol.for("sqlfs.esm"), { value: true })`,
)

// importMeta stands for import.meta in a module lowered to CommonJS.
const importMeta = "__sqlfsImportMeta"

// target lowers what goja lacks (async generators, for await) in the
// final pass; the first pass of a top-level-await module only strips types.
func target(format api.Format) api.Target {
	if format == api.FormatESModule {
		return api.ESNext
	}
	return api.ES2017
}

// hasTopLevelAwait is a cheap test: an `await` outside any function is
// the only way CommonJS output fails, so esbuild is asked when in doubt.
func hasTopLevelAwait(code string) bool {
	if !strings.Contains(code, "await") {
		return false
	}
	res := api.Transform(code, api.TransformOptions{Format: api.FormatCommonJS, Loader: api.LoaderTS, LogLevel: api.LogLevelSilent})
	for _, m := range res.Errors {
		if strings.Contains(m.Text, "Top-level await") {
			return true
		}
	}
	return false
}

// splitImports separates the import statements esbuild printed at the top
// of an ES module from the rest.
func splitImports(esm string) (imports, body string) {
	var head, rest []string
	lines := strings.Split(esm, "\n")
	inImport := false
	for i, l := range lines {
		if inImport || strings.HasPrefix(l, "import ") {
			head = append(head, l)
			inImport = !strings.HasSuffix(strings.TrimSpace(l), ";")
			continue
		}
		rest = lines[i:]
		break
	}
	return strings.Join(head, "\n"), strings.Join(rest, "\n")
}
