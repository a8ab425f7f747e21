package main

import (
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/js"
)

// addJSBackend adds the JavaScript backend, which runs programs through
// the shell backend.
func addJSBackend(backends map[string]sidecar.Backend, o workspaceOptions) {
	backends["js"] = js.New(backends["shell"], js.Options{})
}
