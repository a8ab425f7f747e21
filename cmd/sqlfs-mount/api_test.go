package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestControlSocket drives the shell backend through the mount's control
// socket and sees its changes through the mount at once, and the other way
// round: one store, two frontends, one owner.
func TestControlSocket(t *testing.T) {
	fusetest.Skip(t)
	base := t.TempDir()
	store, dir := filepath.Join(base, "ws.db"), filepath.Join(base, "mnt")
	os.Mkdir(dir, 0o755)
	p := startMount(t, store, dir)
	if err := os.WriteFile(filepath.Join(dir, "from-kernel"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.ReadFile(filepath.Join(dir, "from-kernel"))
	_, err := os.Stat(filepath.Join(dir, "from-shell")) // a cached negative entry
	if !os.IsNotExist(err) {
		t.Fatalf("stat before: %v", err)
	}

	c, err := api.Dial(t.Context(), "unix:"+api.SocketPath(store), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	res, err := c.Exec(t.Context(), tools.ExecInput{Command: "cat from-kernel; echo shell > from-shell"}, &out, &out)
	if err != nil || res.ExitCode != 0 || out.String() != "k" {
		t.Fatalf("exec through the socket: %v, exit %d, output %q", err, res.ExitCode, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "from-shell")); err != nil || string(b) != "shell\n" {
		t.Fatalf("the mount reads %q, %v", b, err)
	}
	if !strings.Contains(strings.Join(res.Changed, ","), "from-shell") {
		t.Errorf("exec's changes %q", res.Changed)
	}
	stopMount(t, p)
	if _, err := os.Stat(api.SocketPath(store)); !os.IsNotExist(err) {
		t.Errorf("socket left behind after a clean stop: %v", err)
	}
}
