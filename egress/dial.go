package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/sqlfs/sqlfs/metrics"
)

// Outcome is how one connection attempt ended.
type Outcome string

const (
	Allowed Outcome = "allowed" // connected
	Denied  Outcome = "denied"  // refused by the policy
	Failed  Outcome = "failed"  // allowed, but the name did not resolve or nothing answered
)

var connections = promauto.With(metrics.Registry).NewCounterVec(prometheus.CounterOpts{
	Name: "sqlfs_egress_connections_total",
	Help: "Connections execs tried to open, by outcome (allowed, denied, failed).",
}, []string{"outcome"})

// Attempt is one connection an exec tried to open, as the audit hook sees
// it.
type Attempt struct {
	Actor   string
	Network string // tcp, tcp4 or tcp6; anything else is denied
	Host    string // the name or address asked for
	Port    uint16
	// Addr is the address checked last: the one connected to when
	// Outcome is Allowed; invalid when no address was looked up.
	Addr    netip.AddrPort
	Outcome Outcome
	Err     error // nil when Allowed
}

type actorKey struct{}

// WithActor names the actor whose connections ctx carries (the exec's
// audit name), for the policy, the audit hook and errors.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorOf is the actor WithActor put in ctx, or "".
func ActorOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

// Resolver looks up a name's addresses (*net.Resolver does).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens the connections its Policy allows. The zero Dialer allows
// nothing.
type Dialer struct {
	// Policy is the rules until SetPolicy replaces them.
	Policy *Policy
	// Resolver looks names up; nil is net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address already checked ("IP:PORT"); nil is a
	// net.Dialer with a 30 s timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Audit is told of every attempt, after it ended; nil tells nobody.
	Audit func(Attempt)

	live       atomic.Pointer[Policy] // set by SetPolicy
	mu         sync.Mutex
	transports []*Transport // made by Transport, renewed by SetPolicy
}

// Current is the policy each new connection is checked against: the last
// SetPolicy's, else Policy. A nil Dialer's is nil (nothing allowed).
func (d *Dialer) Current() *Policy {
	if d == nil {
		return nil
	}
	if p := d.live.Load(); p != nil {
		return p
	}
	return d.Policy
}

// SetPolicy replaces the rules from the next connection on (nil allows
// nothing): a connection open now stays open, but none opened before is
// reused by a request after SetPolicy returns, since the Transports' pools
// are renewed (their idle connections closed; one in use finishes its
// request and is never lent again).
func (d *Dialer) SetPolicy(p *Policy) {
	if p == nil {
		p = &Policy{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.live.Store(p)
	for _, t := range d.transports {
		t.renew()
	}
}

var defaultDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// DialContext connects to address ("host:port") when the policy allows it,
// for the actor ctx names: the host name is checked, looked up once, and
// each allowed address is tried in turn until one answers. A refusal's
// error Is ErrDenied.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	a := Attempt{Actor: ActorOf(ctx), Network: network}
	conn, err := d.dial(ctx, &a, address)
	a.Err = err
	switch {
	case err == nil:
		a.Outcome = Allowed
	case errors.Is(err, ErrDenied):
		a.Outcome = Denied
	default:
		a.Outcome = Failed
	}
	connections.WithLabelValues(string(a.Outcome)).Inc()
	if d.Audit != nil {
		d.Audit(a)
	}
	return conn, err
}

func (d *Dialer) dial(ctx context.Context, a *Attempt, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &DeniedError{Actor: a.Actor, Host: address, Reason: err.Error()}
	}
	a.Host = host
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		// A service name ("https") would be looked up on the host.
		return nil, &DeniedError{Actor: a.Actor, Host: address, Reason: "the port must be a number"}
	}
	a.Port = uint16(port)
	pol := d.Current()
	ipNet := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[a.Network]
	if ipNet == "" {
		return nil, &DeniedError{Actor: a.Actor, Host: host, Reason: "only TCP connections are allowed, not " + a.Network}
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return nil, &DeniedError{Actor: a.Actor, Host: host, Reason: "an address with a zone is link-local"}
		}
		addrs = []netip.Addr{ip}
	} else {
		if err := pol.mayName(a.Actor, host, a.Port); err != nil {
			return nil, err
		}
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, ipNet, host); err != nil {
			return nil, fmt.Errorf("egress to %s: %w", host, err)
		}
	}
	dial := d.Dial
	if dial == nil {
		dial = defaultDialer.DialContext
	}
	var denied, failed []error
	for _, ip := range addrs {
		a.Addr = netip.AddrPortFrom(ip.Unmap(), a.Port)
		if err := pol.Allow(a.Actor, host, a.Addr); err != nil {
			denied = append(denied, err)
			continue
		}
		conn, err := dial(ctx, a.Network, a.Addr.String())
		if err == nil {
			return conn, nil
		}
		failed = append(failed, err)
		if ctx.Err() != nil {
			break
		}
	}
	// Denied only when every address was; otherwise what went wrong is
	// the dial errors.
	switch {
	case len(failed) > 0:
		return nil, errors.Join(failed...)
	case len(denied) > 0:
		return nil, denied[0]
	}
	return nil, fmt.Errorf("egress to %s: no address", host)
}

// Transport returns an HTTP transport whose every connection goes through
// d. A pooled connection was checked when it was opened, so SetPolicy
// gives the Transport a new pool: no request after it reuses a connection
// the new rules were not asked about.
func (d *Dialer) Transport() *Transport { return d.transport(true) }

func (d *Dialer) transport(h2 bool) *Transport {
	t := &Transport{d: d, h2: h2}
	t.renew()
	d.mu.Lock()
	d.transports = append(d.transports, t)
	d.mu.Unlock()
	return t
}

// Transport is an http.RoundTripper over a Dialer (Dialer.Transport).
type Transport struct {
	d   *Dialer
	h2  bool
	cur atomic.Pointer[http.Transport]
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.cur.Load().RoundTrip(r)
}

// CloseIdleConnections closes the pooled connections not in use.
func (t *Transport) CloseIdleConnections() { t.cur.Load().CloseIdleConnections() }

// renew starts a new pool, closing the idle connections of the old one;
// those in use are closed by the old pool's idle timeout once they finish.
func (t *Transport) renew() {
	if old := t.cur.Swap(t.d.newHTTPTransport(t.h2)); old != nil {
		old.CloseIdleConnections()
	}
}

func (d *Dialer) newHTTPTransport(h2 bool) *http.Transport {
	return &http.Transport{
		Proxy:             nil, // a proxy from the environment would connect where nobody checked
		DialContext:       d.DialContext,
		ForceAttemptHTTP2: h2,
		MaxIdleConns:      32,
		// net/http keeps 2 idle per host by default: a client with more
		// requests in flight (npm: 15) then dials most of them anew,
		// each a resolve, a policy check and an audit line.
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// An origin that never finishes its headers (slowloris) ends the
		// request instead of holding it; a slow body is the caller's
		// context's to end.
		ResponseHeaderTimeout: 60 * time.Second,
	}
}
