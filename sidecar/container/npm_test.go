package container

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/sidecar"
)

// TestNPMThroughProxy: npm in the container installs a package from a
// real registry (Verdaccio, installed by make deps, on 127.0.0.1) through
// the owner's egress proxy, which the policy allows for that registry
// only; a registry the policy does not allow is refused with the rule's
// reason, before any connection, and both attempts are audited.
func TestNPMThroughProxy(t *testing.T) {
	kit := registryKit(t)
	port := startVerdaccio(t, kit)
	pol, err := egress.NewPolicy(fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var attempts []string
	d := &egress.Dialer{Policy: pol,
		// registry.npmjs.org gets a public address no connection is
		// made to: the policy refuses it first.
		Resolver: names{"registry.test": "127.0.0.1", "registry.npmjs.org": "104.16.0.35"},
		Audit: func(a egress.Attempt) {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, fmt.Sprintf("%s %s:%d %s", a.Actor, a.Host, a.Port, a.Outcome))
		}}
	rootfs := nodeRootfs(t, kit)
	b, ws := newTestBackend(t, func(c *Options) { c.Egress = d; c.Rootfs = rootfs })
	pj := filepath.Join(ws, "package.json")
	if err := os.WriteFile(pj, []byte(`{"name":"app","version":"1.0.0","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(pj, testUID, testGID); err != nil {
		t.Fatal(err)
	}
	npm := "npm install --no-audit --no-fund --no-update-notifier --loglevel=error --fetch-retries=0 "
	got := execIn(t, b, sidecar.Request{Actor: "exec:npm", AllowNetwork: true, Timeout: 5 * time.Minute,
		Command: npm + fmt.Sprintf("--registry http://registry.test:%d/ sqlfs-demo >/dev/null && node -e 'console.log(require(\"sqlfs-demo\"))'", port)})
	if got.err != nil || got.res.ExitCode != 0 || got.stdout != "hello from sqlfs-demo\n" {
		t.Fatalf("npm install from the allowed registry: %v, exit %d\nstdout %s\nstderr %s", got.err, got.res.ExitCode, got.stdout, got.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "node_modules", "sqlfs-demo", "index.js")); err != nil {
		t.Errorf("the package is not in the workspace: %v", err)
	}
	got = execIn(t, b, sidecar.Request{Actor: "exec:denied", AllowNetwork: true, Timeout: 5 * time.Minute,
		Command: npm + "--registry http://registry.npmjs.org/ left-pad"})
	if got.err != nil || got.res.ExitCode == 0 || !strings.Contains(got.stderr, "403 Forbidden") {
		t.Errorf("npm install from a registry the policy does not allow: %v, exit %d, stderr %s; want a 403", got.err, got.res.ExitCode, got.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(attempts, "\n")
	for _, want := range []string{fmt.Sprintf("exec:npm registry.test:%d allowed", port), "exec:denied registry.npmjs.org:80 denied"} {
		if !strings.Contains(all, want) {
			t.Errorf("audited attempts:\n%s\nwant a line %q", all, want)
		}
	}
	if strings.Contains(all, "exec:denied registry.npmjs.org:80 allowed") || strings.Contains(all, "failed") {
		t.Errorf("audited attempts:\n%s\nwant no other outcome", all)
	}
}

// registryKit is the directory make deps installs Verdaccio and a
// self-contained npm into (node_modules/{verdaccio,npm}), found through
// the verdaccio link on PATH.
func registryKit(t testing.TB) string {
	t.Helper()
	bin := testenv.LookPath(t, "verdaccio", "none: the npm package, which make deps installs")
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	// .../node_modules/verdaccio/bin/verdaccio
	kit := filepath.Dir(filepath.Dir(filepath.Dir(real)))
	if _, err := os.Stat(filepath.Join(kit, "npm", "bin", "npm-cli.js")); err != nil {
		testenv.Require(t, "npm beside verdaccio (make deps installs it)", err)
	}
	testenv.LookPath(t, "node", "nodejs")
	return kit
}

// nodeRootfs is the busybox rootfs with the host's node (and the shared
// libraries it needs) and the kit's npm, linked where the filesystem
// allows and copied where not.
func nodeRootfs(t testing.TB, kit string) string {
	t.Helper()
	dir := t.TempDir()
	if err := BuildBusyboxRootfs(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	node, _ = filepath.EvalSymlinks(node)
	out, err := exec.Command("ldd", node).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", node, err)
	}
	files := []string{node}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		dst := filepath.Join(dir, f)
		if f == node {
			dst = filepath.Join(dir, "usr/bin/node")
		}
		if err := linkOrCopy(f, dst); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "usr/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-al", filepath.Join(kit, "npm"), filepath.Join(dir, "usr/lib/npm")).CombinedOutput(); err != nil {
		if out, err = exec.Command("cp", "-a", filepath.Join(kit, "npm"), filepath.Join(dir, "usr/lib/npm")).CombinedOutput(); err != nil {
			t.Fatalf("copy npm: %v\n%s", err, out)
		}
	}
	if err := os.Symlink("../lib/npm/bin/npm-cli.js", filepath.Join(dir, "usr/bin/npm")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	src, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	return copyFile(src, dst, 0o755)
}

// startVerdaccio runs Verdaccio on 127.0.0.1 with no uplinks (it asks no
// other registry) until the test ends, publishes sqlfs-demo@1.0.0 to it
// and returns its port.
func startVerdaccio(t *testing.T, kit string) int {
	t.Helper()
	port := runVerdaccio(t, kit, "")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var user struct{ Token string }
	if err := callJSON(http.MethodPut, base+"/-/user/org.couchdb.user:sqlfs", "", map[string]string{"name": "sqlfs", "password": "test-only-password"}, &user); err != nil || user.Token == "" {
		t.Fatalf("add a user: %v (token %q)", err, user.Token)
	}
	if err := publish(base, user.Token, "sqlfs-demo", "1.0.0", map[string]string{
		"package.json": `{"name":"sqlfs-demo","version":"1.0.0","main":"index.js"}`,
		"index.js":     `module.exports = "hello from sqlfs-demo";`,
	}); err != nil {
		t.Fatal(err)
	}
	return port
}

// runVerdaccio runs Verdaccio on 127.0.0.1 with no uplinks (it asks no
// other registry) until t ends, serving a copy of the storage directory
// seed (an empty registry when seed is ""), and returns its port.
func runVerdaccio(t testing.TB, kit, seed string) int {
	t.Helper()
	dir := t.TempDir()
	if seed != "" {
		// A copy: Verdaccio writes its database into the storage.
		if out, err := exec.Command("cp", "-a", seed, filepath.Join(dir, "storage")).CombinedOutput(); err != nil {
			t.Fatalf("copy the registry's storage: %v\n%s", err, out)
		}
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`storage: %s/storage
auth:
  htpasswd:
    file: %s/htpasswd
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
web:
  enable: false
# Node closes an idle connection after 5 s by default, which races npm
# reusing it (ECONNRESET) on a loaded machine.
server:
  keepAliveTimeout: 120
log: { type: stdout, format: pretty, level: warn }
`, dir, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("node", filepath.Join(kit, "verdaccio", "bin", "verdaccio"), "--config", cfg, "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	exited, err := testenv.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("verdaccio:\n%s", log.String())
		}
	})
	// Node starts slowly on a loaded machine.
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/-/ping", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("verdaccio exited:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("verdaccio did not answer: %v\n%s", err, log.String())
		}
	}
	return port
}

func callJSON(method, url, token string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, url, resp.Status, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// publish does what npm publish does: PUT the package document with the
// tarball attached.
func publish(base, token, name, version string, files map[string]string) error {
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for f, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + f, Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, content); err != nil {
			return err
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return err
	}
	sha := sha1.Sum(tgz.Bytes())
	sri := sha512.Sum512(tgz.Bytes())
	file := fmt.Sprintf("%s-%s.tgz", name, version)
	manifest := map[string]any{}
	if err := json.Unmarshal([]byte(files["package.json"]), &manifest); err != nil {
		return err
	}
	manifest["_id"] = name + "@" + version
	manifest["dist"] = map[string]string{
		"shasum":    hex.EncodeToString(sha[:]),
		"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sri[:]),
		"tarball":   fmt.Sprintf("%s/%s/-/%s", base, name, file),
	}
	doc := map[string]any{
		"_id": name, "name": name,
		"dist-tags": map[string]string{"latest": version},
		"versions":  map[string]any{version: manifest},
		"_attachments": map[string]any{file: map[string]any{
			"content_type": "application/octet-stream",
			"data":         base64.StdEncoding.EncodeToString(tgz.Bytes()),
			"length":       tgz.Len(),
		}},
	}
	return callJSON(http.MethodPut, base+"/"+name, token, doc, nil)
}
