// Package httpcred attaches the owner's credentials to the outbound HTTP
// requests of an exec, so that the agent never sees them: a token is
// configured by the operator per host glob, added by the transport to
// each request (redirects included) whose host matches, and nowhere else.
// The agent's commands get only the http.RoundTripper; the token is not in
// their environment, the workspace or a repository's config, and Redact
// removes it from any text the transport's user prints.
//
// The transport also caps what one response body may carry, so a hostile
// or broken server cannot fill the workspace or memory with an endless
// reply.
package httpcred

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/sqlfs/sqlfs/egress"
)

// Rule is one credential: sent as HTTP basic auth (User, or "x-access-token"
// as GitHub expects for a token, and Token) to the hosts Host matches.
type Rule struct {
	// Host is written as an egress rule (egress.ParseRule: a host glob
	// such as "*.github.com", an address or range, optional ports) and
	// matched with egress.Rule.Matches against the request's URL.
	Host  egress.Rule
	User  string
	Token string
}

// ErrTooLarge is returned by a body read past Options.MaxResponseBytes.
var ErrTooLarge = errors.New("response larger than the owner allows")

// Options configure a Transport.
type Options struct {
	Rules []Rule
	// MaxResponseBytes caps each response body; zero means 4 GiB.
	MaxResponseBytes int64
}

// Transport adds credentials to requests through next and caps responses.
type Transport struct {
	next  http.RoundTripper
	opts  Options
	rules []Rule
}

const defaultMaxResponse = 4 << 30

// New returns a transport over next. A rule without a host or a token is
// an error, so a mistake does not silently send nothing (or everything).
func New(next http.RoundTripper, opts Options) (*Transport, error) {
	if next == nil {
		return nil, errors.New("httpcred: no transport to send through")
	}
	t := &Transport{next: next, opts: opts}
	if t.opts.MaxResponseBytes <= 0 {
		t.opts.MaxResponseBytes = defaultMaxResponse
	}
	for _, r := range opts.Rules {
		if (r.Host.Host == "" && !r.Host.Prefix.IsValid()) || r.Token == "" {
			return nil, fmt.Errorf("httpcred: rule %q: a host and a token are required", r.Host)
		}
		if r.User == "" {
			r.User = "x-access-token"
		}
		t.rules = append(t.rules, r)
	}
	return t, nil
}

// rule is the first rule matching the request's host, or nil.
func (t *Transport) rule(req *http.Request) *Rule {
	port := req.URL.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[req.URL.Scheme]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil
	}
	for i := range t.rules {
		if t.rules[i].Host.Matches(req.URL.Hostname(), uint16(n)) {
			return &t.rules[i]
		}
	}
	return nil
}

// RoundTrip sends req, with the matching rule's credentials in place of
// any the caller set.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if r := t.rule(req); r != nil {
		req = req.Clone(req.Context())
		req.SetBasicAuth(r.User, r.Token)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.opts.MaxResponseBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %w (%d bytes announced, limit %d)", req.URL.Host, ErrTooLarge, resp.ContentLength, t.opts.MaxResponseBytes)
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.opts.MaxResponseBytes, host: req.URL.Host, limit: t.opts.MaxResponseBytes}
	return resp, nil
}

// Redact replaces every token (and its basic-auth encoding) in s.
func (t *Transport) Redact(s string) string {
	for _, r := range t.rules {
		s = strings.ReplaceAll(s, r.Token, "[redacted]")
		s = strings.ReplaceAll(s, base64.StdEncoding.EncodeToString([]byte(r.User+":"+r.Token)), "[redacted]")
	}
	return s
}

// cappedBody fails a read past the limit instead of returning EOF, so a
// truncated reply is never taken for a complete one.
type cappedBody struct {
	rc          io.ReadCloser
	left, limit int64
	host        string
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Is there more? One byte tells.
		var one [1]byte
		for {
			n, err := b.rc.Read(one[:])
			if n > 0 {
				return 0, fmt.Errorf("%s: %w (limit %d bytes)", b.host, ErrTooLarge, b.limit)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
