package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestProxy runs the proxy on loopback in front of an origin on loopback
// that only a rule naming its address allows: forwarded requests, CONNECT
// tunnels, and the refusals (a name resolving to the metadata address, a
// redirect there, an IP literal, a name no rule allows), each audited
// under the request's actor.
func TestProxy(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://meta.test:"+r.URL.Query().Get("port")+"/secret", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "hello %s from %s, proxy auth %q", r.URL.Path, r.Host, r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(origin.Close)
	ap := netip.MustParseAddrPort(strings.TrimPrefix(origin.URL, "http://"))
	port := fmt.Sprint(ap.Port())
	res := &fakeResolver{answers: map[string][][]netip.Addr{}}
	for range 20 {
		res.answers["origin.test"] = append(res.answers["origin.test"], []netip.Addr{ap.Addr()})
		res.answers["meta.test"] = append(res.answers["meta.test"], []netip.Addr{netip.MustParseAddr("169.254.169.254")})
	}
	pol, err := NewPolicy("127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var attempts []Attempt
	p := &Proxy{
		Dialer: &Dialer{Policy: pol, Resolver: res, Audit: func(a Attempt) { mu.Lock(); attempts = append(attempts, a); mu.Unlock() }},
		Actor: func(r *http.Request) (string, error) {
			if r.Header.Get("X-Anonymous") != "" {
				return "", errors.New("no exec behind it")
			}
			return "exec:7", nil
		},
	}
	proxyAddr := serveProxy(t, p)
	proxyURL := &url.URL{Scheme: "http", Host: proxyAddr, User: url.UserPassword("agent", "pw")}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}

	get := func(u string) (int, string, string) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header.Get("X-Sqlfs-Egress")
	}
	if code, body, _ := get("http://origin.test:" + port + "/a"); code != 200 || body != `hello /a from origin.test:`+port+`, proxy auth ""` {
		t.Errorf("allowed: %d %q", code, body)
	}
	if code, body, why := get("http://meta.test:" + port + "/secret"); code != 403 || !strings.Contains(why, "169.254.169.254") || !strings.Contains(body, "refused") {
		t.Errorf("a name resolving to the metadata address: %d %q %q", code, body, why)
	}
	if code, _, why := get("http://origin.test:" + port + "/redirect?port=" + port); code != 403 || !strings.Contains(why, "169.254.169.254") {
		t.Errorf("a redirect to the metadata address: %d %q", code, why)
	}
	if code, _, why := get("http://other.example:81/"); code != 403 || !strings.Contains(why, "no --egress-allow rule matches") {
		t.Errorf("a name no rule allows: %d %q", code, why)
	}
	if code, _, _ := get("http://gone.test:" + port + "/"); code != 502 {
		t.Errorf("a name that does not resolve: %d, want 502", code)
	}

	connect := func(target string) (string, *bufio.Reader, net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		br := bufio.NewReader(c)
		status, _ := br.ReadString('\n')
		return status, br, c
	}
	status, br, c := connect("origin.test:" + port)
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT to an allowed name: %q", status)
	}
	for line, _ := br.ReadString('\n'); line != "\r\n" && line != ""; line, _ = br.ReadString('\n') {
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "hello /tunnel") {
		t.Errorf("through the tunnel: %q", body)
	}
	for _, target := range []string{"10.0.0.1:443", "169.254.169.254:80", "meta.test:" + port, "127.0.0.1:1"} {
		if status, _, _ := connect(target); !strings.Contains(status, " 403 ") {
			t.Errorf("CONNECT %s: %q, want 403", target, status)
		}
	}
	if status, _, _ := connect("origin.test:https"); !strings.Contains(status, " 400 ") {
		t.Errorf("CONNECT to a service name: %q, want 400", status)
	}
	if status, _, _ := connect("127.0.0.1:" + port); !strings.Contains(status, " 200 ") {
		t.Errorf("CONNECT to the address a rule names: %q", status)
	}

	// A request the Actor refuses is refused before any connection.
	req, _ := http.NewRequest("GET", "http://origin.test:"+port+"/a", nil)
	req.Header.Set("X-Anonymous", "1")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("X-Sqlfs-Egress"), "no exec behind it") {
		t.Errorf("a request of no actor: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// A request not in absolute form is no proxy request.
	resp, err = http.Get("http://" + proxyAddr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("origin-form request: %d, want 400", resp.StatusCode)
	}

	mu.Lock()
	defer mu.Unlock()
	var denied int
	for _, a := range attempts {
		if a.Actor != "exec:7" {
			t.Errorf("attempt %+v not under the request's actor", a)
		}
		if a.Outcome == Denied {
			denied++
		}
	}
	if denied != 7 {
		t.Errorf("%d attempts denied, want 7: %+v", denied, attempts)
	}
}

// TestProxyKeepsUpstreamConnections: a client with several requests in
// flight at once, round after round (npm fetches 15 at a time), reuses the
// proxy's connections to the origin instead of dialing most of them anew
// each round, as a pool of net/http's default two idle connections per
// host did (26 dials for these 4 rounds of 8).
func TestProxyKeepsUpstreamConnections(t *testing.T) {
	const inFlight, rounds = 8, 4
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // keeps the round's requests in flight together
		io.WriteString(w, "ok")
	}))
	t.Cleanup(origin.Close)
	ap := netip.MustParseAddrPort(strings.TrimPrefix(origin.URL, "http://"))
	pol, err := NewPolicy(ap.String())
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	p := &Proxy{Dialer: &Dialer{Policy: pol, Audit: func(a Attempt) {
		if a.Outcome == Allowed {
			dials.Add(1)
		}
	}}}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: serveProxy(t, p)}), MaxIdleConnsPerHost: inFlight}}
	t.Cleanup(client.CloseIdleConnections)
	for range rounds {
		var wg sync.WaitGroup
		for range inFlight {
			wg.Go(func() {
				resp, err := client.Get(origin.URL + "/x")
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(body) != "ok" {
					t.Errorf("%d %q", resp.StatusCode, body)
				}
			})
		}
		wg.Wait()
	}
	// A round may start before the last one's connections are back in
	// the pool: some slack over inFlight, far under a new pool per round.
	if n := dials.Load(); n > inFlight+inFlight/2 {
		t.Errorf("%d connections to the origin for %d rounds of %d requests; want at most %d", n, rounds, inFlight, inFlight+inFlight/2)
	}
}

// serveProxy serves p on loopback until t ends and returns its address.
func serveProxy(t *testing.T, p *Proxy) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := p.Server()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}
