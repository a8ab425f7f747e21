package publish

import (
	"flag"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sqlfs/sqlfs/internal/netlimit"
)

// ServerOptions bound what the clients of the public port, which faces the
// internet, can hold of the owner: time (each timeout) and connections
// (the caps, kept within the file limit beside netlimit.Reserve).
type ServerOptions struct {
	MaxConns          int // connections open at once
	MaxConnsPerClient int // connections open at once from one IP address
	// ReadHeaderTimeout bounds a request's headers (slowloris), ReadTimeout
	// the whole request, WriteTimeout one response (a download), and
	// IdleTimeout a kept-alive connection between requests.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                                            int // request line and headers
}

// DefaultServerOptions suit a link server on a host whose file limit is
// the usual tens of thousands.
var DefaultServerOptions = ServerOptions{
	MaxConns:          1024,
	MaxConnsPerClient: 64,
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	WriteTimeout:      10 * time.Minute,
	IdleTimeout:       30 * time.Second,
	MaxHeaderBytes:    8 << 10,
}

// AddFlags registers the --public-* bounds on fs, with o's values as
// defaults.
func (o *ServerOptions) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.MaxConns, "public-max-conns", o.MaxConns, "most connections the public listener holds open at once; more are closed on accept (with the API's cap and a reserve of 1024 it must fit in the file limit, ulimit -n)")
	fs.IntVar(&o.MaxConnsPerClient, "public-max-conns-per-client", o.MaxConnsPerClient, "most connections one client IP address holds open on the public listener")
	fs.DurationVar(&o.ReadHeaderTimeout, "public-header-timeout", o.ReadHeaderTimeout, "how long a public request's headers may take to arrive")
	fs.DurationVar(&o.ReadTimeout, "public-read-timeout", o.ReadTimeout, "how long a whole public request may take to arrive")
	fs.DurationVar(&o.WriteTimeout, "public-write-timeout", o.WriteTimeout, "how long one public response (a download) may take")
	fs.DurationVar(&o.IdleTimeout, "public-idle-timeout", o.IdleTimeout, "how long a kept-alive public connection may wait for its next request")
}

// NewServer returns the HTTP server of h on ln within o's bounds, and ln
// wrapped with its connection caps: serve it with srv.Serve(ln).
func NewServer(h http.Handler, ln net.Listener, o ServerOptions, log *slog.Logger) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return srv, netlimit.Listen(ln, netlimit.Limits{Name: "public", MaxConns: o.MaxConns, PerClient: o.MaxConnsPerClient})
}
