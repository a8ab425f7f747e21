// Package netlimit bounds what the clients of a listener can hold of a
// process: a cap on its open connections and one per client address, so a
// flood of idle connections runs into the cap instead of into the file
// descriptors the rest of the process (the store, the mount, the API)
// needs. A connection past a cap is closed at once, not queued: its client
// sees the refusal, and the process spends one accept on it.
package netlimit

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/sqlfs/sqlfs/metrics"
)

var refused = promauto.With(metrics.Registry).NewCounterVec(prometheus.CounterOpts{
	Name: "sqlfs_listener_refused_connections_total",
	Help: "Connections closed on accept because a listener's cap was reached, by listener (api, public) and cap (total, per_client).",
}, []string{"listener", "cap"})

// Limits are a listener's caps; zero means no cap.
type Limits struct {
	Name      string // the listener in metrics: api, public
	MaxConns  int    // connections open at once
	PerClient int    // connections open at once from one IP address
}

// Listen wraps ln with l's caps.
func Listen(ln net.Listener, l Limits) net.Listener {
	return &listener{Listener: ln, l: l, perIP: map[netip.Addr]int{},
		total: refused.WithLabelValues(l.Name, "total"), client: refused.WithLabelValues(l.Name, "per_client")}
}

type listener struct {
	net.Listener
	l             Limits
	total, client prometheus.Counter

	mu    sync.Mutex
	open  int
	perIP map[netip.Addr]int
}

func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c)
		if ln.admit(ip) {
			return &conn{Conn: c, ln: ln, ip: ip}, nil
		}
		c.Close()
	}
}

func (ln *listener) admit(ip netip.Addr) bool {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if ln.l.MaxConns > 0 && ln.open >= ln.l.MaxConns {
		ln.total.Inc()
		return false
	}
	if ln.l.PerClient > 0 && ip.IsValid() && ln.perIP[ip] >= ln.l.PerClient {
		ln.client.Inc()
		return false
	}
	ln.open++
	if ip.IsValid() {
		ln.perIP[ip]++
	}
	return true
}

func (ln *listener) release(ip netip.Addr) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	ln.open--
	if ip.IsValid() {
		if ln.perIP[ip]--; ln.perIP[ip] <= 0 {
			delete(ln.perIP, ip)
		}
	}
}

// clientIP is a TCP peer's address; invalid for a Unix socket, whose
// clients share the one per-listener cap.
func clientIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip.Unmap()
	}
	return netip.Addr{}
}

type conn struct {
	net.Conn
	ln   *listener
	ip   netip.Addr
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.ln.release(c.ip) })
	return err
}

// Reserve is how many file descriptors the process keeps beyond its
// listeners' caps: the store and its WAL, the mount, the container
// backend, the execs' files, the API's own clients.
const Reserve = 1024

// CheckFiles refuses caps that, with Reserve, do not fit in the process's
// file limit (RLIMIT_NOFILE, whose soft value the Go runtime raises to the
// hard one at start), so a full listener can never starve the rest.
func CheckFiles(caps ...int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("file limit: %w", err)
	}
	sum := Reserve
	for _, c := range caps {
		if c <= 0 {
			return fmt.Errorf("connection caps must be positive, got %d", c)
		}
		sum += c
	}
	if uint64(sum) > lim.Cur {
		return fmt.Errorf("connection caps %v plus a reserve of %d files exceed the file limit of %d (ulimit -n): lower the caps or raise the limit", caps, Reserve, lim.Cur)
	}
	return nil
}
