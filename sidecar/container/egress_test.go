package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/httpcred"
)

// names answers the test's host names from a table.
type names map[string]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestEgressProxy: a container with Egress reaches an origin on the
// host's loopback only through the owner's proxy, only for an exec that
// asked for the network, only where the policy allows (a name resolving
// to the metadata address is refused with the rule's reason), and sees no
// interface but loopback, so nothing else of the host is reachable.
func TestEgressProxy(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	ap := netip.MustParseAddrPort(strings.TrimPrefix(origin.URL, "http://"))
	pol, err := egress.NewPolicy(fmt.Sprintf("127.0.0.1:%d", ap.Port()))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var attempts []egress.Attempt
	d := &egress.Dialer{Policy: pol, Resolver: names{"origin.test": "127.0.0.1", "meta.test": "169.254.169.254"},
		Audit: func(a egress.Attempt) { mu.Lock(); attempts = append(attempts, a); mu.Unlock() }}
	b, _ := newTestBackend(t, func(c *Options) { c.Egress = d })
	port := ap.Port()
	for _, tc := range []struct {
		name    string
		cmd     string
		network bool
		ok      bool
		out     string // in stdout when ok, else in stderr
	}{
		{"allowed", fmt.Sprintf("wget -q -O - http://origin.test:%d/hi", port), true, true, "hello /hi"},
		{"exec without allow_network", fmt.Sprintf("wget -q -O - http://origin.test:%d/hi", port), false, false, "403"},
		{"name resolving to the metadata address", fmt.Sprintf("wget -q -O - http://meta.test:%d/", port), true, false, "403"},
		// The origin's address is the container's own loopback, where nothing listens.
		{"host's loopback without the proxy", fmt.Sprintf("unset http_proxy HTTP_PROXY; wget -q -O - http://127.0.0.1:%d/", port), true, false, "refused"},
		{"only loopback", "ls -1 /sys/class/net", true, true, "lo\n"},
		{"proxy variables", "echo $HTTPS_PROXY $no_proxy", true, true, "http://" + ProxyAddr + " localhost,127.0.0.1,::1\n"},
		{"CONNECT to an IP literal", fmt.Sprintf(`printf 'CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n' | nc 127.0.0.1 3128 | head -1`), true, true, "403 Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := execIn(t, b, sidecar.Request{Command: tc.cmd, AllowNetwork: tc.network, Actor: "exec:" + tc.name})
			switch {
			case got.err != nil:
				t.Fatal(got.err)
			case tc.ok && (got.res.ExitCode != 0 || !strings.Contains(got.stdout, tc.out)):
				t.Errorf("exit %d, stdout %q, stderr %q; want %q", got.res.ExitCode, got.stdout, got.stderr, tc.out)
			case !tc.ok && (got.res.ExitCode == 0 || !strings.Contains(got.stderr, tc.out)):
				t.Errorf("exit %d, stdout %q, stderr %q; want a failure saying %q", got.res.ExitCode, got.stdout, got.stderr, tc.out)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	var seen []string
	for _, a := range attempts {
		seen = append(seen, fmt.Sprintf("%s %s %s", a.Actor, a.Host, a.Outcome))
	}
	want := []string{"exec:allowed origin.test allowed", "exec:name resolving to the metadata address meta.test denied", "exec:CONNECT to an IP literal 10.0.0.1 denied"}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("audited attempts:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestDialPort: the owner reaches a server inside the container's own
// namespace, never the proxy it serves there (an outsider would get the
// exec's way out), and nothing when the container shares the host's
// network or is not running.
func TestDialPort(t *testing.T) {
	pol, err := egress.NewPolicy("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBackend(t, func(c *Options) { c.Egress = &egress.Dialer{Policy: pol} })
	if _, err := b.DialPort(context.Background(), 8080); !errors.Is(err, ErrNotRunning) {
		t.Errorf("before any exec: %v, want ErrNotRunning", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = b.Exec(ctx, sidecar.Request{Command: "echo -n inside | nc -l -p 8080"})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var c net.Conn
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = b.DialPort(context.Background(), 8080); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "inside" {
		t.Errorf("read %q from the container's server", got)
	}
	if _, err := b.DialPort(context.Background(), proxyPort); !errors.Is(err, ErrProxyPort) {
		t.Errorf("the proxy's port: %v, want ErrProxyPort", err)
	}
	hb, _ := newTestBackend(t, func(c *Options) { c.Network = true })
	if _, err := hb.DialPort(context.Background(), 8080); !errors.Is(err, ErrHostNetwork) {
		t.Errorf("host network: %v, want ErrHostNetwork", err)
	}
}

// TestTokenNeverInContainer: the container gets allowlisting without
// credential injection. With the operator's token held by the owner (in
// its environment, in a token file on the host, and in the credential
// transport the shell's git uses, which does add it: the origin below
// would show an injected token), nothing in the container sees it: not
// its environment, its processes, its files, nor the origin it reaches
// through the proxy, forwarded or tunnelled.
func TestTokenNeverInContainer(t *testing.T) {
	const token = "sqlfs-test-token-3f9d1c"
	t.Setenv("SQLFS_TEST_OPERATOR_TOKEN", token)
	if err := os.WriteFile(filepath.Join(t.TempDir(), "token"), []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "authorization=[%s]\n", r.Header.Get("Authorization"))
	}))
	t.Cleanup(origin.Close)
	ap := netip.MustParseAddrPort(strings.TrimPrefix(origin.URL, "http://"))
	rule := fmt.Sprintf("127.0.0.1:%d", ap.Port())
	pol, err := egress.NewPolicy(rule)
	if err != nil {
		t.Fatal(err)
	}
	d := &egress.Dialer{Policy: pol, Resolver: names{"origin.test": "127.0.0.1"}}
	host, err := egress.ParseRule(rule)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := httpcred.New(d.Transport(), httpcred.Options{Rules: []httpcred.Rule{{Host: host, User: "x", Token: token}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: cred}).Get(origin.URL)
	if err != nil {
		t.Fatal(err)
	}
	control, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(control) == "authorization=[]\n" {
		t.Fatalf("the owner's credential transport sent no token (%q): the origin could not show one", control)
	}

	b, _ := newTestBackend(t, func(c *Options) { c.Egress = d })
	url := fmt.Sprintf("http://origin.test:%d/", ap.Port())
	got := execIn(t, b, sidecar.Request{AllowNetwork: true, Actor: "exec:probe", Command: fmt.Sprintf(`
wget -q -O - %s
{ printf 'CONNECT origin.test:%d HTTP/1.1\r\nHost: origin.test\r\n\r\nGET / HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n'; sleep 1; } | nc 127.0.0.1 3128 | grep authorization
env
cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline | tr '\0' '\n'
a=%s; b=%s
grep -rl "$a$b" / --exclude-dir=sys 2>/dev/null | grep -v '^/proc/' || true
`, url, ap.Port(), token[:12], token[12:])})
	if got.err != nil {
		t.Fatal(got.err)
	}
	if strings.Count(got.stdout, "authorization=[]") != 2 {
		t.Errorf("the origin, forwarded then tunnelled, saw:\n%s\nwant no Authorization both times", got.stdout)
	}
	// The script holds the token in two halves, so only the token
	// itself, found somewhere, puts it whole in the output.
	if strings.Contains(got.stdout+got.stderr, token) {
		t.Errorf("the token is visible in the container:\nstdout %s\nstderr %s", got.stdout, got.stderr)
	}
}
