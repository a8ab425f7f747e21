package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means an error
	}{
		{"*", "*"},
		{"*.Example.com:443", "*.example.com:443"},
		{"api.github.com:8000-8100", "api.github.com:8000-8100"},
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8:5432", "10.0.0.0/8:5432"},
		{"127.0.0.1:8080", "127.0.0.1/32:8080"},
		{"::1", "[::1/128]"},
		{"[::1]:8080", "[::1/128]:8080"},
		{"[fd00::/8]:*", "[fd00::/8]"},
		{"::ffff:127.0.0.1", "127.0.0.1/32"},
		{"", ""},
		{":80", ""},
		{"host:0", ""},
		{"host:99999", ""},
		{"host:90-80", ""},
		{"host:http", ""},
		{"[::1", ""},
		{"[::1]x", ""},
		{"a/b", ""},
		{"[a-", ""},
	} {
		r, err := ParseRule(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseRule(%q) = %v, want an error", tc.in, r)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRule(%q) = %q, %v; want %q", tc.in, r.String(), err, tc.want)
		}
	}
}

func TestAllow(t *testing.T) {
	p, err := NewPolicy("*:443", "*.example.com", "127.0.0.1:8080", "10.0.0.0/8:5432")
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		host string
		addr netip.AddrPort
		ok   bool
	}{
		{"public.org", ap("93.184.215.14:443"), true},
		{"public.org", ap("93.184.215.14:80"), false},
		{"a.b.example.com", ap("93.184.215.14:80"), true},
		{"A.EXAMPLE.COM.", ap("93.184.215.14:22"), true},
		{"example.com", ap("93.184.215.14:80"), false},
		// Globs never reach special addresses, whatever the name says.
		{"evil.example.com", ap("127.0.0.1:80"), false},
		{"evil.example.com", ap("169.254.169.254:80"), false},
		{"metadata", ap("[fd00:ec2::254]:443"), false},
		{"x", ap("100.100.100.200:443"), false},
		{"x", ap("[::ffff:127.0.0.1]:443"), false},
		{"x", ap("[64:ff9b::7f00:1]:443"), false},
		{"x", ap("0.0.0.0:443"), false},
		{"x", ap("[::]:443"), false},
		{"x", ap("192.168.1.1:443"), false},
		{"x", ap("[fe80::1]:443"), false},
		{"x", ap("224.0.0.1:443"), false},
		{"x", ap("255.255.255.255:443"), false},
		// A rule naming the address allows it, by any name.
		{"localhost", ap("127.0.0.1:8080"), true},
		{"127.0.0.1", ap("[::ffff:127.0.0.1]:8080"), true},
		{"localhost", ap("127.0.0.1:8081"), false},
		{"localhost", ap("[::1]:8080"), false},
		{"db.internal", ap("10.9.8.7:5432"), true},
		{"db.internal", ap("10.9.8.7:5433"), false},
	} {
		err := p.Allow("exec:t", tc.host, tc.addr)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrDenied)) {
			t.Errorf("Allow(%q, %v) = %v; want allowed %v", tc.host, tc.addr, err, tc.ok)
		}
	}
	for _, empty := range []*Policy{nil, {}} {
		if err := empty.Allow("a", "x", ap("93.184.215.14:443")); !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "--egress-allow") {
			t.Errorf("empty policy: %v", err)
		}
	}
}

func TestRuleMatches(t *testing.T) {
	for _, tc := range []struct {
		rule, host string
		port       uint16
		want       bool
	}{
		{"*.example.com", "a.Example.COM.", 443, true},
		{"*.example.com", "example.com", 443, false},
		{"*.example.com:443", "a.example.com", 80, false},
		{"*", "1.2.3.4", 80, false}, // a name glob is no address rule
		{"*", "[::1]", 80, false},
		{"10.0.0.0/8:443", "10.3.2.1", 443, true},
		{"10.0.0.0/8:443", "::ffff:10.3.2.1", 443, true},
		{"10.0.0.0/8:443", "10.3.2.1.nip.io", 443, false},
		{"10.0.0.0/8:443", "11.0.0.1", 443, false},
		{"[::1]:8080", "[::1]", 8080, true},
		{"[fe80::/10]", "fe80::1%eth0", 80, false}, // a zone is never matched
	} {
		r, err := ParseRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Matches(tc.host, tc.port); got != tc.want {
			t.Errorf("%q.Matches(%q, %d) = %v, want %v", tc.rule, tc.host, tc.port, got, tc.want)
		}
	}
}

// TestSpecialModel checks Special against the ranges it stands for, on
// random addresses: "*" allows exactly the public ones.
func TestSpecialModel(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	pub := []netip.Prefix{netip.MustParsePrefix("1.0.0.0/8"), netip.MustParsePrefix("8.0.0.0/7"), netip.MustParsePrefix("2600::/12")}
	priv := []netip.Prefix{}
	for _, s := range []string{"127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10",
		"0.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "64:ff9b::/96", "2002::/16", "::ffff:127.0.0.0/104", "::ffff:10.0.0.0/104"} {
		priv = append(priv, netip.MustParsePrefix(s))
	}
	all, _ := NewPolicy("*")
	for i := 0; i < 5000; i++ {
		isPriv := i%2 == 0
		set := pub
		if isPriv {
			set = priv
		}
		a := randomIn(rng, set[rng.IntN(len(set))])
		got := all.Allow("a", "h", netip.AddrPortFrom(a, 443)) == nil
		if got == isPriv || Special(a) != isPriv {
			t.Fatalf("seed %d: %v special %v allowed %v", seed, a, Special(a), got)
		}
	}
}

func randomIn(rng *rand.Rand, p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := range b {
		bit := i * 8
		if bit+8 <= p.Bits() {
			continue
		}
		keep := max(0, p.Bits()-bit)
		mask := byte(0xff >> keep)
		b[i] = b[i]&^mask | byte(rng.UintN(256))&mask
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // successive answers per name
	asked   []string
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	as := r.answers[host]
	if len(as) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	r.answers[host] = as[1:]
	return as[0], nil
}

// TestDialerChecksWhatItDials: the name is checked before DNS hears of
// it, resolved once, and only checked addresses are dialed, so a rebinding
// answer never reaches the dialer.
func TestDialerChecksWhatItDials(t *testing.T) {
	addr := netip.MustParseAddr
	res := &fakeResolver{answers: map[string][][]netip.Addr{
		"rebind.example.com": {{addr("93.184.215.14")}, {addr("127.0.0.1")}},
		"mixed.example.com":  {{addr("127.0.0.1"), addr("169.254.169.254"), addr("93.184.215.15")}},
		"inside.example.com": {{addr("10.0.0.1")}},
	}}
	var dialed []string
	var attempts []Attempt
	p, _ := NewPolicy("*.example.com:443")
	d := &Dialer{Policy: p, Resolver: res,
		Dial: func(_ context.Context, _, a string) (net.Conn, error) {
			dialed = append(dialed, a)
			c1, c2 := net.Pipe()
			c2.Close()
			return c1, nil
		},
		Audit: func(a Attempt) { attempts = append(attempts, a) },
	}
	ctx := WithActor(context.Background(), "exec:1")
	before := testutil.ToFloat64(connections.WithLabelValues("denied"))
	for _, tc := range []struct {
		addr    string
		network string
		outcome Outcome
	}{
		{"rebind.example.com:443", "tcp", Allowed},
		{"mixed.example.com:443", "tcp", Allowed},
		{"inside.example.com:443", "tcp", Denied},
		{"secret-data.attacker.org:443", "tcp", Denied},
		{"rebind.example.com:80", "tcp", Denied},
		{"rebind.example.com:https", "tcp", Denied},
		{"127.0.0.1:443", "tcp", Denied},
		{"[fe80::1%eth0]:443", "tcp", Denied},
		{"gone.example.com:443", "tcp", Failed},
		{"rebind.example.com:443", "udp", Denied},
	} {
		c, err := d.DialContext(ctx, tc.network, tc.addr)
		if c != nil {
			c.Close()
		}
		last := attempts[len(attempts)-1]
		if last.Outcome != tc.outcome || last.Actor != "exec:1" || (tc.outcome == Denied) != errors.Is(err, ErrDenied) {
			t.Errorf("%s %s: %v, audit %+v; want %s", tc.network, tc.addr, err, last, tc.outcome)
		}
	}
	if want := []string{"93.184.215.14:443", "93.184.215.15:443"}; fmt.Sprint(dialed) != fmt.Sprint(want) {
		t.Errorf("dialed %v, want %v", dialed, want)
	}
	// The attacker's name and the wrong port were refused before DNS.
	if want := "[rebind.example.com mixed.example.com inside.example.com gone.example.com]"; fmt.Sprint(res.asked) != want {
		t.Errorf("looked up %v, want %v", res.asked, want)
	}
	if got := testutil.ToFloat64(connections.WithLabelValues("denied")) - before; got != 7 {
		t.Errorf("denied counted %v times, want 7", got)
	}
}

// TestTransportLoopback: over real loopback, a glob never reaches the
// owner's ports; a rule naming the address does; redirects are checked
// again; the environment's proxy is not used.
func TestTransportLoopback(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://192.0.2.1:1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://[::1]:1/", http.StatusFound)
			return
		}
		io.WriteString(w, "pong")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, tc := range []struct {
		rules []string
		path  string
		want  string // body, or "denied"
	}{
		{nil, "/", "denied"},
		{[]string{"*"}, "/", "denied"},
		{[]string{"localhost"}, "/", "denied"},
		{[]string{"127.0.0.1:" + port}, "/", "pong"},
		{[]string{"127.0.0.0/8"}, "/", "pong"},
		{[]string{"127.0.0.1"}, "/away", "denied"},
	} {
		p, err := NewPolicy(tc.rules...)
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Transport: (&Dialer{Policy: p}).Transport()}
		req, _ := http.NewRequestWithContext(WithActor(context.Background(), "t"), "GET", srv.URL+tc.path, nil)
		resp, err := client.Do(req)
		got := ""
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = string(b)
		} else if errors.Is(err, ErrDenied) {
			got = "denied"
		}
		if got != tc.want {
			t.Errorf("rules %v GET %s: %q (%v), want %q", tc.rules, tc.path, got, err, tc.want)
		}
		client.CloseIdleConnections()
	}
}
