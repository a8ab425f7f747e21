package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// TestDenyBeatsAllow: a deny rule wins over every allow rule, by name glob
// (before any lookup) and by range (on each address a name resolves to),
// and the refusal names the rule.
func TestDenyBeatsAllow(t *testing.T) {
	addr := netip.MustParseAddr
	res := &fakeResolver{answers: map[string][][]netip.Addr{
		"ok.example.com":    {{addr("93.184.215.14")}},
		"inner.example.com": {{addr("93.184.215.99")}},
		"split.example.com": {{addr("93.184.215.99"), addr("93.184.215.15")}},
	}}
	p, err := ParsePolicy([]string{"*", "10.0.0.0/8"}, []string{"*.evil.com:443", "93.184.215.96/29", "10.1.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	var dialed []string
	d := &Dialer{Policy: p, Resolver: res, Dial: func(_ context.Context, _, a string) (net.Conn, error) {
		dialed = append(dialed, a)
		c1, c2 := net.Pipe()
		c2.Close()
		return c1, nil
	}}
	for _, tc := range []struct {
		addr, rule string // rule "" is allowed
	}{
		{"ok.example.com:443", ""},
		{"a.evil.com:443", "--egress-deny *.evil.com:443"},
		{"a.evil.com:80", ""}, // the deny rule names port 443 only; a.evil.com is not in the resolver: Failed
		{"inner.example.com:443", "--egress-deny 93.184.215.96/29"},
		{"split.example.com:443", ""}, // the one address not denied is dialed
		{"10.2.3.4:5432", ""},
		{"10.1.2.3:5432", "--egress-deny 10.1.0.0/16"},
	} {
		c, err := d.DialContext(context.Background(), "tcp", tc.addr)
		if c != nil {
			c.Close()
		}
		de, denied := errors.AsType[*DeniedError](err)
		switch {
		case tc.rule == "" && denied:
			t.Errorf("%s: %v, want allowed", tc.addr, err)
		case tc.rule != "" && (!denied || de.Rule != tc.rule || !strings.Contains(err.Error(), "denied by "+tc.rule)):
			t.Errorf("%s: %v, want refused by %s", tc.addr, err, tc.rule)
		}
	}
	if want := "[ok.example.com a.evil.com inner.example.com split.example.com]"; fmtList(res.asked) != want {
		t.Errorf("looked up %v, want %s (a.evil.com looked up for port 80 only: 443 was refused before DNS)", res.asked, want)
	}
	if want := "[93.184.215.14:443 93.184.215.15:443 10.2.3.4:5432]"; fmtList(dialed) != want {
		t.Errorf("dialed %v, want %s", dialed, want)
	}
	// No allow rule: the reason says so.
	err = (&Dialer{Policy: p}).Policy.Allow("", "x", netip.MustParseAddrPort("127.0.0.1:1"))
	if err == nil || !strings.Contains(err.Error(), "--egress-allow") {
		t.Errorf("loopback under '*': %v", err)
	}
}

func fmtList(s []string) string { return "[" + strings.Join(s, " ") + "]" }

// TestSetPolicyMidConnection: SetPolicy applies to the next connection; a
// connection open before stays as it was, and a request after SetPolicy
// never reuses a pooled connection the new policy was not asked about.
func TestSetPolicyMidConnection(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			w.(http.Flusher).Flush()
			<-release
		}
		io.WriteString(w, "pong")
	}))
	defer srv.Close()
	allow, _ := NewPolicy("127.0.0.1")
	var attempts []Attempt
	d := &Dialer{Policy: allow, Audit: func(a Attempt) { attempts = append(attempts, a) }}
	tr := d.Transport()
	client := &http.Client{Transport: tr}
	get := func(path string) (string, error) {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get("/"); got != "pong" {
		t.Fatalf("allowed: %q %v", got, err)
	}
	// A request in flight (its headers read, its body pending) and a
	// CONNECT-style raw connection, both opened under the old policy.
	resp, err := client.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := d.DialContext(context.Background(), "tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	deny, _ := ParsePolicy([]string{"127.0.0.1"}, []string{"127.0.0.0/8"})
	d.SetPolicy(deny)
	if d.Current() != deny {
		t.Fatal("Current is not the policy set")
	}
	// The pooled idle connection is gone: the next request dials, and is
	// refused naming the rule.
	_, err = get("/")
	if de, ok := errors.AsType[*DeniedError](err); !ok || de.Rule != "--egress-deny 127.0.0.0/8" {
		t.Fatalf("after SetPolicy: %v, want refused by the deny rule", err)
	}
	if last := attempts[len(attempts)-1]; last.Outcome != Denied {
		t.Errorf("audit of the refused attempt: %+v", last)
	}
	// The connections opened before carry on.
	close(release)
	if b, err := io.ReadAll(resp.Body); string(b) != "pong" {
		t.Errorf("request in flight across SetPolicy: %q %v", b, err)
	}
	resp.Body.Close()
	if _, err := io.WriteString(raw, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(raw); !strings.Contains(string(b), "pong") {
		t.Errorf("raw connection across SetPolicy: %q", b)
	}
	// The connection of the request in flight went back to the old pool:
	// the next request still does not reuse it.
	if _, err := get("/"); !errors.Is(err, ErrDenied) {
		t.Errorf("second request after SetPolicy: %v, want refused", err)
	}
	d.SetPolicy(allow)
	if got, err := get("/"); got != "pong" {
		t.Errorf("allowed again: %q %v", got, err)
	}
}

// TestSlowOrigin: an origin that trickles its headers is cut off by the
// proxy's response header timeout, and one that trickles its body ends
// with the caller's context, through the Transport and through the proxy.
func TestSlowOrigin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				n, _ := c.Read(buf)
				body := strings.Contains(string(buf[:n]), "/body")
				if body {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
				} else {
					io.WriteString(c, "HTTP/1.1 200 OK\r\n")
				}
				for range 1000 {
					if _, err := io.WriteString(c, "X-A: b\r\n"[:1]); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
		}
	}()
	pol, _ := NewPolicy("127.0.0.1")
	d := &Dialer{Policy: pol}
	tr := d.Transport()
	tr.cur.Load().ResponseHeaderTimeout = 300 * time.Millisecond // the test's, not the minute
	proxy := &url.URL{Scheme: "http", Host: serveProxy(t, &Proxy{Dialer: d})}
	viaProxy := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	for _, tc := range []struct {
		name   string
		client *http.Client
		path   string
	}{
		{"transport headers", &http.Client{Transport: tr}, "/headers"},
		{"transport body", &http.Client{Transport: tr}, "/body"},
		{"proxy headers", viaProxy, "/headers"},
		{"proxy body", viaProxy, "/body"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Slack(time.Second))
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+ln.Addr().String()+tc.path, nil)
		resp, err := tc.client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		cancel()
		if err == nil || time.Since(start) > testenv.Slack(5*time.Second) {
			t.Errorf("%s: %v after %s, want an error within the deadline", tc.name, err, time.Since(start))
		}
	}
}
