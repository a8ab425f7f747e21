package httpcred

import (
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/egress"
)

// recorder answers every request with body and remembers what it was sent.
type recorder struct {
	body string
	got  []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(r.body)), ContentLength: -1, Request: req}, nil
}

func TestRules(t *testing.T) {
	rules := []Rule{
		{Host: mustRule(t, "*.GitHub.com"), Token: "gh"},
		{Host: mustRule(t, "git.example.com:8443"), User: "bot", Token: "ex"},
		{Host: mustRule(t, "10.1.0.0/16:443"), User: "lan", Token: "net"},
		{Host: mustRule(t, "[::1]:8080"), User: "six", Token: "v6"},
	}
	for _, tc := range []struct {
		url, user, token string // token "" means no credential
	}{
		{"https://api.github.com/x", "x-access-token", "gh"},
		{"https://API.GITHUB.COM/x", "x-access-token", "gh"},
		{"https://api.github.com./x", "x-access-token", "gh"},
		{"https://github.com/x", "", ""}, // *.github.com needs a subdomain
		{"https://evilgithub.com/x", "", ""},
		{"https://api.github.com.evil.net/x", "", ""},
		{"https://git.example.com:8443/r", "bot", "ex"},
		{"https://git.example.com/r", "", ""}, // port 443, rule says 8443
		{"http://git.example.com:8443/r", "bot", "ex"},
		{"https://10.1.2.3/r", "lan", "net"},
		{"https://10.2.0.1/r", "", ""},
		{"http://10.1.2.3/r", "", ""}, // port 80
		{"https://10.1.2.3.evil.net/r", "", ""},
		{"http://[::1]:8080/r", "six", "v6"},
		{"http://[::ffff:10.1.0.1]:443/r", "lan", "net"}, // a mapped address is the IPv4 one
		{"http://[fe80::1%25eth0]:8080/r", "", ""},
		{"https://git.example.com:99999/r", "", ""},
	} {
		rec := &recorder{}
		tr, err := New(rec, Options{Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", tc.url, nil)
		req.SetBasicAuth("agent", "own") // replaced where a rule matches, kept elsewhere
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		u, p, _ := rec.got[0].BasicAuth()
		switch {
		case tc.token == "" && (u != "agent" || p != "own"):
			t.Errorf("%s: sent %q:%q, want the caller's own", tc.url, u, p)
		case tc.token != "" && (u != tc.user || p != tc.token):
			t.Errorf("%s: sent %q:%q, want %q:%q", tc.url, u, p, tc.user, tc.token)
		}
		if u, _, _ := req.BasicAuth(); u != "agent" {
			t.Errorf("%s: the caller's request was changed", tc.url)
		}
	}
}

func mustRule(t *testing.T, s string) egress.Rule {
	t.Helper()
	r, err := egress.ParseRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGlobStar: a name glob never sends a token to an address literal,
// only a rule naming the address does.
func TestGlobStar(t *testing.T) {
	rec := &recorder{}
	tr, err := New(rec, Options{Rules: []Rule{{Host: mustRule(t, "*"), Token: "all"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://1.2.3.4/", "http://[2001:4860::1]/", "http://example.com/"} {
		req, _ := http.NewRequest("GET", u, nil)
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{false, false, true} {
		if _, _, ok := rec.got[i].BasicAuth(); ok != want {
			t.Errorf("%s: credential sent %v, want %v", rec.got[i].URL, ok, want)
		}
	}
}

func TestBadRules(t *testing.T) {
	for _, r := range []Rule{{Host: mustRule(t, "a.com")}, {Token: "t"}} {
		if _, err := New(&recorder{}, Options{Rules: []Rule{r}}); err == nil {
			t.Errorf("rule %+v accepted", r)
		}
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("no transport accepted")
	}
}

func TestRedact(t *testing.T) {
	tr, err := New(&recorder{}, Options{Rules: []Rule{{Host: mustRule(t, "h"), User: "u", Token: "s3cr3t"}}})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString([]byte("u:s3cr3t"))
	got := tr.Redact("token s3cr3t, header Basic " + enc)
	if strings.Contains(got, "s3cr3t") || strings.Contains(got, enc) {
		t.Errorf("Redact left the secret: %q", got)
	}
}

func TestCap(t *testing.T) {
	for _, tc := range []struct {
		size  int
		limit int64
		fail  bool
	}{
		{10, 10, false},
		{11, 10, true},
		{0, 1, false},
		{1 << 16, 1 << 15, true},
	} {
		tr, err := New(&recorder{body: strings.Repeat("x", tc.size)}, Options{MaxResponseBytes: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", "http://h/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		if tc.fail != errors.Is(err, ErrTooLarge) {
			t.Errorf("%d bytes, limit %d: %v", tc.size, tc.limit, err)
		}
		if !tc.fail && len(data) != tc.size {
			t.Errorf("%d bytes, limit %d: read %d", tc.size, tc.limit, len(data))
		}
		if int64(len(data)) > tc.limit {
			t.Errorf("read %d bytes past the limit %d", len(data), tc.limit)
		}
	}
}
