package js

import (
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar"
)

// TestUnsupportedSaysSo: what the backend lacks fails in one line naming
// it and the container backend, from the program and from inside a
// package, never as "Cannot find module" or a SyntaxError of ELF bytes.
func TestUnsupportedSaysSo(t *testing.T) {
	b, _, fsys := newTestBackend(t, Options{Runner: InProcess})
	for _, d := range []string{"/node_modules/native/build", "/node_modules/server"} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.WriteFile("/node_modules/native/build/addon.node", []byte("\x7fELF\x02\x01\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/node_modules/native/index.js", []byte(`module.exports = require('./build/addon.node')`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/node_modules/server/index.js", []byte(`module.exports = require('http')`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ code, want string }{
		{`require('http')`, "node:http"},
		{`require('node:worker_threads')`, "node:worker_threads"},
		{`require('server')`, "node:http"},
		{`require('native')`, "the native addon /workspace/node_modules/native/build/addon.node (a .node file)"},
		{`require('crypto').createCipheriv('aes-128-cbc')`, "crypto.createCipheriv"},
		{`require('zlib').createBrotliCompress()`, "zlib.createBrotliCompress (brotli)"},
		{`(1234.5).toLocaleString('de-DE')`, "Intl: the locale de-DE (the js backend formats en-US only)"},
		{`new Intl.DateTimeFormat('en-US', { dayPeriod: 'short', hour: 'numeric' })`, "Intl: DateTimeFormat dayPeriod"},
		{`new Intl.DateTimeFormat('en-US', { weekday: 'long', day: 'numeric' })`, "Intl: DateTimeFormat of the fields weekday, day"},
		{`new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Seoul', timeZoneName: 'long' }).format(0)`, "Intl: timeZoneName long for Asia/Seoul"},
		{`new Intl.NumberFormat('en-US', { style: 'unit', unit: 'furlong' })`, "Intl: the unit furlong"},
		{`new Intl.Segmenter()`, "Intl: Intl.Segmenter"},
		{`new ReadableStream({ type: 'bytes' })`, "stream/web byte streams (type: \"bytes\")"},
		{`'a'.localeCompare('b', 'en', { caseFirst: 'upper' })`, "Intl: Collator caseFirst upper"},
	} {
		out := run(t, b, sidecar.Request{Command: tc.code})
		first, _, _ := strings.Cut(out.stderr, "\n")
		want := "Error: ERR_SQLFS_UNSUPPORTED: " + tc.want + " is not available in the js backend; run this program with the container backend"
		if out.ExitCode != 1 || !strings.HasPrefix(first, want) {
			t.Errorf("%s: exit %d, stderr %q, want a first line starting %q", tc.code, out.ExitCode, out.stderr, want)
		}
	}
	out := run(t, b, sidecar.Request{Command: `try { require('http') } catch (e) { console.log(e.code) }`})
	if out.stdout != "ERR_SQLFS_UNSUPPORTED\n" {
		t.Errorf("code: %q, stderr %q", out.stdout, out.stderr)
	}
}
