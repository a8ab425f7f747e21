package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// Proxy is an HTTP proxy whose every connection out is the Dialer's:
// CONNECT opens a tunnel (TLS, which the proxy does not look into), and a
// request in absolute form (GET http://host/...) is forwarded over the
// Dialer's Transport, WebSocket upgrades included. Redirects are handed
// back to the client, whose next request is checked again. A refused
// connection is answered 403 with the refusal's reason, in the body and in
// the X-Sqlfs-Egress header, so the client's error names the rule; a
// connection that fails is 502.
//
// It is the container backend's only way out: serve it (Server) on a
// listener inside the container's network namespace.
type Proxy struct {
	Dialer *Dialer
	// Actor names the actor of a request (the exec behind its
	// connection), for the Dialer's policy and audit; nil is none. An
	// error refuses the request (403, with the error).
	Actor func(*http.Request) (string, error)

	once    sync.Once
	forward *httputil.ReverseProxy
}

// Server returns an http.Server for p with limits against slow or
// oversized request headers.
func (p *Proxy) Server() *http.Server {
	return &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
	}
}

func (p *Proxy) ctx(r *http.Request) (context.Context, error) {
	if p.Actor == nil {
		return r.Context(), nil
	}
	actor, err := p.Actor(r)
	if err != nil {
		return nil, &DeniedError{Host: r.Host, Reason: err.Error()}
	}
	return WithActor(r.Context(), actor), nil
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "ws") {
		http.Error(w, "sqlfs egress proxy: want CONNECT host:port or a request for an absolute http:// URL", http.StatusBadRequest)
		return
	}
	ctx, err := p.ctx(r)
	if err != nil {
		refuse(w, err)
		return
	}
	p.once.Do(func() {
		t := p.Dialer.transport(false) // an upgrade (WebSocket) needs HTTP/1.1
		p.forward = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.Out.URL.Scheme = "http"
				pr.Out.Host = pr.In.Host
				pr.Out.Header.Del("Proxy-Authorization")
			},
			Transport:    t,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) { refuse(w, err) },
		}
	})
	p.forward.ServeHTTP(w, r.WithContext(ctx))
}

// tunnel connects the client to r.Host and copies both ways until either
// side closes.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	ctx, err := p.ctx(r)
	if err != nil {
		refuse(w, err)
		return
	}
	out, err := p.Dialer.DialContext(ctx, "tcp", r.Host)
	if err != nil {
		refuse(w, err)
		return
	}
	defer out.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "sqlfs egress proxy: cannot tunnel over this connection", http.StatusInternalServerError)
		return
	}
	in, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer in.Close()
	if _, err := io.WriteString(in, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// What the client sent after its CONNECT is already buffered.
		_, _ = io.Copy(out, buf)
		closeWrite(out)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(in, out)
		closeWrite(in)
		done <- struct{}{}
	}()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// refuse answers a connection that was refused (403, with the reason) or
// failed (502).
func refuse(w http.ResponseWriter, err error) {
	code := http.StatusBadGateway
	if errors.Is(err, ErrDenied) {
		code = http.StatusForbidden
	}
	msg := err.Error()
	if de, ok := errors.AsType[*DeniedError](err); ok {
		msg = de.Error()
	}
	w.Header().Set("X-Sqlfs-Egress", msg)
	http.Error(w, fmt.Sprintf("sqlfs egress proxy: %s", msg), code)
}
