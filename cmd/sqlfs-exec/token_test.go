package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sidecar/api"
)

func TestTokenCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if _, stderr, code := sqlfsExec(t, "", "token", file); code != 0 {
		t.Fatalf("token: %d %s", code, stderr)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	tok, err := api.ReadTokenFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := sqlfsExec(t, "", "token", file); code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("token over an existing file: %d %s", code, stderr)
	}
	if again, _ := api.ReadTokenFile(file); again != tok {
		t.Error("existing token file was changed")
	}
	out, _, code := sqlfsExec(t, "", "token", "-")
	if code != 0 || strings.TrimSpace(out) == tok || api.CheckToken(strings.TrimSpace(out)) != nil {
		t.Errorf("token -: %d %q", code, out)
	}

	// serve refuses the measured weak tokens: 5 characters, world-readable.
	for name, c := range map[string]struct {
		content string
		mode    os.FileMode
		msg     string
	}{
		"short":          {"abcde", 0o600, "at least 16"},
		"world readable": {tok, 0o644, "chmod 600"},
	} {
		weak := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(weak, []byte(c.content), c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(weak, c.mode); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := sqlfsExec(t, "", "serve", "--store", filepath.Join(dir, "ws.sqlfs"), "--listen", "127.0.0.1:0", "--token-file", weak)
		if code == 0 || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s token: exit %d, %s", name, code, stderr)
		}
	}
}
