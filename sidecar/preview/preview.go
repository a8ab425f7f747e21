// Package preview gives a server an exec runs inside the workspace's
// container (a dev server, `npm run dev`, `busybox httpd`) a URL on the
// owner's public listener: BASE/x/TOKEN/ is proxied, HTTP and WebSocket
// upgrades alike, to 127.0.0.1:PORT inside the container's network
// namespace.
//
//   - The token is 32 random bytes: the URL is the capability, as a
//     published link's signature is. An unknown, revoked or expired token
//     is a 404 that says nothing more.
//   - A preview belongs to the exec that asked for it (the one running the
//     server) and ends with it, when its TTL passes, or when it is revoked;
//     ending it closes the connections it carries, upgraded ones included.
//   - The owner dials the port from inside the container's namespace
//     (container.Backend.DialPort), so a preview reaches only the
//     container's own loopback: not the host's ports, not the owner's API,
//     not another workspace (each workspace has its own Registry, whose
//     tokens no other one knows).
//   - Exposing and ending are audited under the caller's actor (op
//     "expose" and "unexpose" on "port:PORT"); requests are counted in
//     sqlfs_preview_requests_total{outcome}.
package preview

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/sqlfs/sqlfs/metrics"
)

// DefaultTTL is a preview's life when the caller names none; MaxTTL bounds
// it.
const (
	DefaultTTL = time.Hour
	MaxTTL     = 24 * time.Hour
)

// PathPrefix is where previews live on the public listener.
const PathPrefix = "/x/"

var requests = promauto.With(metrics.Registry).NewCounterVec(prometheus.CounterOpts{
	Name: "sqlfs_preview_requests_total",
	Help: "Requests to preview URLs by outcome (proxied, not_found, unreachable).",
}, []string{"outcome"})

// Errors of Expose and Revoke.
var (
	ErrNoBaseURL = errors.New("no public listener: start `sqlfs-exec serve --public-addr HOST:PORT` to expose ports")
	ErrExecEnded = errors.New("the exec has ended: a preview belongs to a running exec (the one serving the port)")
	ErrNoPreview = errors.New("no such preview")
	ErrBadPort   = errors.New("port must be 1-65535")
)

// Options say how a Registry reaches the container and whom it tells.
type Options struct {
	// BaseURL is the public listener's base (http://host:port); previews
	// are BaseURL/x/TOKEN/.
	BaseURL string
	// Dial connects to 127.0.0.1:port inside the container's network
	// namespace (container.Backend.DialPort).
	Dial func(ctx context.Context, port uint16) (net.Conn, error)
	// Running reports whether an exec is still running; a preview ends
	// with its exec.
	Running func(execID string) bool
	// Record audits an event under actor (fs.FS.WithActor(actor).Record);
	// nil records nothing.
	Record func(actor, op, target string, err error)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Preview is one exposed port.
type Preview struct {
	ID      string    `json:"id"` // names it for Revoke; not a secret
	Exec    string    `json:"exec_id"`
	Port    uint16    `json:"port"`
	URL     string    `json:"url"` // the secret: whoever holds it reaches the port
	Expires time.Time `json:"expires"`
	Actor   string    `json:"-"`
}

type entry struct {
	Preview
	token string
	ctx   context.Context // ends when the preview does
	end   context.CancelFunc
}

// Registry holds one workspace's previews. It is safe for concurrent use.
type Registry struct {
	o     Options
	proxy *httputil.ReverseProxy

	mu      sync.Mutex
	byToken map[string]*entry
	closed  bool
}

type portKey struct{}

// New returns an empty Registry.
func New(o Options) *Registry {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Record == nil {
		o.Record = func(string, string, string, error) {}
	}
	o.BaseURL = strings.TrimSuffix(o.BaseURL, "/")
	r := &Registry{o: o, byToken: map[string]*entry{}}
	t := &http.Transport{
		// Every connection is a fresh one into the namespace for the
		// preview the request came through: the port is taken from the
		// request's context, never from anything the client sent.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			port, _ := ctx.Value(portKey{}).(uint16)
			return o.Dial(ctx, port)
		},
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: 2 * time.Minute,
	}
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			port := pr.In.Context().Value(portKey{}).(uint16)
			target := &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))}
			pr.SetURL(target)
			pr.Out.Host = "localhost:" + strconv.Itoa(int(port)) // dev servers check Host
			pr.SetXForwarded()
		},
		Transport: t,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			requests.WithLabelValues("unreachable").Inc()
			r.o.Logger.Debug("preview: port unreachable", "err", err)
			http.Error(w, "502 nothing answers on the exposed port inside the workspace's container", http.StatusBadGateway)
		},
	}
	return r
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on Linux
	return hex.EncodeToString(b)
}

// Expose makes a URL for port inside the container, valid while execID
// runs and for ttl (0 is DefaultTTL), audited under actor.
func (r *Registry) Expose(actor, execID string, port int, ttl time.Duration) (Preview, error) {
	target := "port:" + strconv.Itoa(port)
	fail := func(err error) (Preview, error) {
		r.o.Record(actor, "expose", target, err)
		return Preview{}, fmt.Errorf("expose port %d: %w", port, err)
	}
	switch {
	case r.o.BaseURL == "":
		return fail(ErrNoBaseURL)
	case port < 1 || port > 65535:
		return fail(ErrBadPort)
	case ttl < 0 || ttl > MaxTTL:
		return fail(fmt.Errorf("ttl %v: must be between 1s and %v", ttl, MaxTTL))
	case !r.Serves(execID):
		return fail(ErrExecEnded)
	}
	if ttl == 0 {
		ttl = DefaultTTL
	}
	tok := make([]byte, 32)
	_, _ = rand.Read(tok)
	e := &entry{token: base64.RawURLEncoding.EncodeToString(tok)}
	e.Preview = Preview{ID: randomHex(6), Exec: execID, Port: uint16(port), Expires: time.Now().Add(ttl).Truncate(time.Second), Actor: actor}
	e.URL = r.o.BaseURL + PathPrefix + e.token + "/"
	e.ctx, e.end = context.WithCancel(context.Background())
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		e.end()
		return fail(errors.New("the workspace is closing"))
	}
	r.byToken[e.token] = e
	r.mu.Unlock()
	r.o.Record(actor, "expose", target, nil)
	return e.Preview, nil
}

// Serves reports whether execID may have its ports exposed: it runs, on
// the backend whose ports this Registry reaches.
func (r *Registry) Serves(execID string) bool {
	return r.o.Running != nil && r.o.Running(execID)
}

// List returns the live previews, oldest expiry first.
func (r *Registry) List() []Preview {
	r.sweep()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Preview
	for _, e := range r.byToken {
		out = append(out, e.Preview)
	}
	slices.SortFunc(out, func(a, b Preview) int { return a.Expires.Compare(b.Expires) })
	return out
}

// Revoke ends the preview id, closing its connections; actor is audited.
func (r *Registry) Revoke(actor, id string) error {
	r.mu.Lock()
	var found *entry
	for _, e := range r.byToken {
		if e.ID == id {
			found = e
		}
	}
	r.mu.Unlock()
	if found == nil {
		return fmt.Errorf("revoke preview %q: %w", id, ErrNoPreview)
	}
	r.end(found, actor, "revoked")
	return nil
}

// Close ends every preview.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	es := make([]*entry, 0, len(r.byToken))
	for _, e := range r.byToken {
		es = append(es, e)
	}
	r.mu.Unlock()
	for _, e := range es {
		r.end(e, e.Actor, "the workspace closed")
	}
}

// end removes e and closes its connections, once.
func (r *Registry) end(e *entry, actor, why string) {
	r.mu.Lock()
	_, live := r.byToken[e.token]
	delete(r.byToken, e.token)
	r.mu.Unlock()
	e.end()
	if live {
		r.o.Record(actor, "unexpose", "port:"+strconv.Itoa(int(e.Port)), nil)
		r.o.Logger.Info("preview ended", "id", e.ID, "exec", e.Exec, "port", e.Port, "why", why)
	}
}

// live returns the entry of token when it may still serve, ending it when
// its exec or its TTL is over.
func (r *Registry) live(token string) *entry {
	r.mu.Lock()
	e := r.byToken[token]
	r.mu.Unlock()
	if e == nil {
		return nil
	}
	switch {
	case time.Now().After(e.Expires):
		r.end(e, e.Actor, "expired")
		return nil
	case !r.o.Running(e.Exec):
		r.end(e, e.Actor, "its exec ended")
		return nil
	}
	return e
}

// sweep ends the previews whose exec or TTL is over, so that their open
// connections close without waiting for a request.
func (r *Registry) sweep() {
	r.mu.Lock()
	tokens := make([]string, 0, len(r.byToken))
	for t := range r.byToken {
		tokens = append(tokens, t)
	}
	r.mu.Unlock()
	for _, t := range tokens {
		r.live(t)
	}
}

// Watch sweeps every interval until ctx ends: a preview's connections
// close soon after its exec ends or its TTL passes.
func (r *Registry) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.sweep()
		}
	}
}

// ServeHTTP serves PathPrefix TOKEN/REST by proxying /REST to the
// preview's port.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rest, ok := strings.CutPrefix(req.URL.Path, PathPrefix)
	token, sub, _ := strings.Cut(rest, "/")
	var e *entry
	if ok && token != "" {
		e = r.live(token)
	}
	if e == nil {
		requests.WithLabelValues("not_found").Inc()
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if sub == "" && !strings.HasSuffix(rest, "/") {
		// BASE/x/TOKEN: the app's relative links need the slash.
		http.Redirect(w, req, PathPrefix+token+"/", http.StatusFound)
		return
	}
	requests.WithLabelValues("proxied").Inc()
	ctx, cancel := context.WithCancel(context.WithValue(req.Context(), portKey{}, e.Port))
	defer cancel()
	stop := context.AfterFunc(e.ctx, cancel) // ending the preview ends its requests and tunnels
	defer stop()
	out := req.Clone(ctx)
	out.URL.Path = "/" + sub
	out.URL.RawPath = ""
	if i := strings.Index(req.URL.RawPath, "/"+token+"/"); i >= 0 {
		out.URL.RawPath = req.URL.RawPath[i+len(token)+1:]
	}
	r.proxy.ServeHTTP(w, out)
}
