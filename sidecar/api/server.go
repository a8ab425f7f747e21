// Package api serves a workspace's tools over HTTP (JSON, with NDJSON
// streaming for exec) and MCP, and holds the client other sqlfs-exec
// commands use to reach the process that owns a workspace. See README.md
// for the reference.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sqlfs/sqlfs/internal/netlimit"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Options configure a Server.
type Options struct {
	Tools *tools.Service
	// Token, when set, must come as "Authorization: Bearer TOKEN" on every
	// request. Required on TCP; a Unix socket relies on its 0600 mode.
	Token string
	// MaxBody caps JSON request bodies (tool arguments, exec stdin).
	// Default 16 MiB. Import streams are not capped (the quota is).
	MaxBody int64
	// ReadTimeout bounds reading a JSON request body. Default 1m.
	ReadTimeout time.Duration
	// WriteTimeout is how long one streamed event may take to reach the
	// client before the exec is cancelled as abandoned. Default 30s.
	WriteTimeout time.Duration
	// MaxConns caps the connections open at once (DefaultMaxConns when 0);
	// one TCP client address may hold a quarter of them. Past the cap a
	// connection is closed on accept, so a flood cannot take the file
	// descriptors the store and the mount need.
	MaxConns int
	// Grace is how long a shutdown lets running execs finish before it
	// cancels them. Default 10s.
	Grace   time.Duration
	Version string
	Logger  *slog.Logger
}

// DefaultMaxConns is Options.MaxConns's default.
const DefaultMaxConns = 256

// DefaultWriteTimeout is Options.WriteTimeout's default.
const DefaultWriteTimeout = 30 * time.Second

// Server is the HTTP API of one workspace.
type Server struct {
	opts Options
	mux  *Mux
}

// NewServer returns the API server for o.Tools.
func NewServer(o Options) *Server {
	if o.MaxBody <= 0 {
		o.MaxBody = 16 << 20
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = time.Minute
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{opts: o, mux: NewMux()}
	s.mux.HandleFunc("GET /v1/health", s.health)
	s.mux.Handle("GET /metrics", metrics.Handler())
	s.mux.HandleFunc("POST /v1/exec", s.exec)
	s.mux.HandleFunc("GET /v1/execs", s.execs)
	s.mux.HandleFunc("GET /v1/execs/{id}", s.execInfo)
	s.mux.HandleFunc("POST /v1/execs/{id}/kill", s.kill)
	s.mux.HandleFunc("GET /v1/execs/{id}/changes", s.changes)
	s.mux.HandleFunc("POST /v1/execs/{id}/expose", s.expose)
	s.mux.HandleFunc("GET /v1/previews", s.previews)
	s.mux.HandleFunc("DELETE /v1/previews/{id}", s.revokePreview)
	s.mux.HandleFunc("POST /v1/execs/{id}/undo", s.undo)
	s.mux.HandleFunc("POST /v1/checkpoints", s.createCheckpoint)
	s.mux.HandleFunc("GET /v1/checkpoints", s.listCheckpoints)
	s.mux.HandleFunc("POST /v1/checkpoints/{ref}/restore", s.restore)
	s.mux.HandleFunc("GET /v1/checkpoints/{ref}/diff", s.diff)
	s.mux.HandleFunc("DELETE /v1/checkpoints/{ref}", s.deleteCheckpoint)
	s.mux.HandleFunc("POST /v1/fork", s.fork)
	s.mux.HandleFunc("GET /v1/tools", s.listTools)
	s.mux.HandleFunc("POST /v1/tools/{name}", s.callTool)
	s.mux.HandleFunc("GET /v1/audit", s.audit)
	s.mux.HandleFunc("GET /v1/events", s.events)
	s.mux.HandleFunc("POST /v1/import", s.importTar)
	s.mux.HandleFunc("GET /v1/export", s.exportTar)
	// MCP's server is made at its first request: making one (resolving
	// every tool's schema) took 2 of a host's 6 ms to wake a workspace,
	// most of whose wakes serve no MCP (BenchmarkWake10k).
	mcp := sync.OnceValue(func() http.Handler {
		return mcpHandler(NewMCPServer(Local{o.Tools}, o.Version, o.Logger), o.MaxBody, o.Logger)
	})
	s.mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) { mcp().ServeHTTP(w, r) })
	return s
}

// ServeHTTP checks the token and routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Token != "" && !Authorized(r, s.opts.Token) {
		Unauthorized(w)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Unauthorized answers a request without a valid bearer token.
func Unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="sqlfs"`)
	WriteError(w, apiErr(codeUnauthorized, "missing or wrong bearer token: send Authorization: Bearer TOKEN"))
}

// Mux is an http.ServeMux that refuses requests whose path or query is not
// valid UTF-8 and answers unknown routes and methods in JSON like every
// other error. The single-store server and the host both route with it.
type Mux struct{ *http.ServeMux }

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{http.NewServeMux()} }

func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := checkUTF8Query(r.URL.Query()); err != nil {
		WriteError(w, err)
		return
	}
	if !utf8.ValidString(r.URL.Path) {
		WriteError(w, apiErr(tools.CodeInvalid, "request path %q is not valid UTF-8", r.URL.Path))
		return
	}
	h, pattern := m.Handler(r)
	if pattern == "" {
		rec := &statusOnly{}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			WriteError(w, apiErr(codeMethod, "method %s not allowed on %s", r.Method, r.URL.Path))
			return
		}
		WriteError(w, apiErr(codeNoRoute, "no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	m.ServeMux.ServeHTTP(w, r)
}

// statusOnly captures what the mux's own error handlers would answer.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header {
	if s.header == nil {
		s.header = http.Header{}
	}
	return s.header
}
func (s *statusOnly) Write(p []byte) (int, error) { return len(p), nil }
func (s *statusOnly) WriteHeader(st int)          { s.status = st }

// Serve answers requests on ln until ctx ends, then shuts down gracefully:
// it stops accepting, lets running execs finish for Grace, cancels the
// rest, and returns once every handler has returned.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return Serve(ctx, ln, s, ServeOptions{Grace: s.opts.Grace, MaxConns: s.opts.MaxConns, Logger: s.opts.Logger, Drain: s.opts.Tools.Wait})
}

// ServeOptions say how Serve shuts down.
type ServeOptions struct {
	Grace time.Duration
	// MaxConns is Options.MaxConns (DefaultMaxConns when 0).
	MaxConns int
	Logger   *slog.Logger
	// Drain waits for the running execs until ctx ends, or cancels them
	// and waits when cancel is set (tools.Service.Wait).
	Drain func(ctx context.Context, cancel bool) error
}

// Serve answers requests on ln with h until ctx ends, then shuts down
// gracefully: it stops accepting, lets running execs finish for Grace,
// cancels the rest, and returns once every handler has returned.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, o ServeOptions) error {
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	base, stop := context.WithCancel(context.Background()) // every request's; cancelled last
	defer stop()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	ln = netlimit.Listen(ln, netlimit.Limits{Name: "api", MaxConns: o.MaxConns, PerClient: max(1, o.MaxConns/4)})
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	o.Logger.Info("shutting down", "grace", o.Grace)
	grace, cancel := context.WithTimeout(context.Background(), o.Grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- hs.Shutdown(grace) }()
	if err := o.Drain(grace, false); err != nil {
		o.Logger.Warn("cancelling running execs at shutdown")
		_ = o.Drain(context.Background(), true)
	}
	// Execs are over; end the long-lived streams (MCP) too.
	stop()
	err := <-done
	if err != nil {
		_ = hs.Close()
	}
	<-errc
	return nil
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	WriteJSON(w, http.StatusOK, Health{OK: true, Pid: os.Getpid(), Version: s.opts.Version, Backends: s.opts.Tools.Backends(), Tools: ToolNames()})
}

// Health is the answer of GET /v1/health.
type Health struct {
	OK       bool     `json:"ok"`
	Pid      int      `json:"pid"`
	Version  string   `json:"version"`
	Backends []string `json:"backends"`
	Tools    []string `json:"tools"`
}

// readBody reads a JSON request body within MaxBody and ReadTimeout, so a
// client that trickles its body cannot hold a handler forever.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.ReadTimeout))
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, jsonErr(err)
		}
		return nil, apiErr(codeBadJSON, "reading the request body: %v", err)
	}
	return b, nil
}

func (s *Server) callTool(w http.ResponseWriter, r *http.Request) {
	args, err := s.readBody(w, r)
	if err != nil {
		WriteError(w, err)
		return
	}
	res, err := Local{s.opts.Tools}.Call(r.Context(), r.PathValue("name"), args)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, res)
}

// ToolInfo describes a tool in GET /v1/tools.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (s *Server) listTools(w http.ResponseWriter, _ *http.Request) {
	out := make([]ToolInfo, len(toolset))
	for i, t := range toolset {
		out[i] = ToolInfo{t.name, t.desc}
	}
	WriteJSON(w, http.StatusOK, map[string][]ToolInfo{"tools": out})
}

// Event is one line of the NDJSON stream of POST /v1/exec: "start" (with
// the exec id), "stdout" and "stderr" chunks (data, or data_b64 when the
// chunk is not valid UTF-8), then "exit" with the result, or "error".
type Event struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Data    string `json:"data,omitempty"`
	DataB64 []byte `json:"data_b64,omitempty"`
	*tools.ExecResult
	Error *ErrorBody `json:"error,omitempty"`
}

// stream writes events to one exec's response. A write that fails or takes
// longer than the timeout marks the client gone and cancels the exec.
//
// An event reaches the client within flushDelay, not at once: the events
// of that window leave in one write, and an exec that ends within it
// (an echo: start, stdout, exit) in a single one with the end of the
// response, instead of a write and a wake-up of the client per event,
// which were a third of an echo's CPU.
type stream struct {
	mu      sync.Mutex
	rc      *http.ResponseController
	enc     *json.Encoder
	timeout time.Duration
	gone    context.CancelCauseFunc
	failed  bool
	ended   bool        // the last event is written: the handler returns
	flush   *time.Timer // the flush due, nil when none
}

// flushDelay is the longest an event waits in the stream's buffer.
const flushDelay = time.Millisecond

var errClientGone = errors.New("client too slow or gone")

// send writes ev, to be flushed within flushDelay.
func (st *stream) send(ev Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.write(ev) && st.flush == nil {
		st.flush = time.AfterFunc(flushDelay, st.flushNow)
	}
}

// end writes the last event, which the handler's return flushes with the
// end of the response.
func (st *stream) end(ev Event) {
	st.mu.Lock()
	st.write(ev)
	st.mu.Unlock()
	st.close()
}

// close ends the stream: nothing is written to the response after it, which
// the handler may then leave.
func (st *stream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ended = true
	if st.flush != nil {
		st.flush.Stop()
	}
}

// write encodes ev into the response's buffer (which writes through when
// full), reporting whether it did. Called with mu held.
func (st *stream) write(ev Event) bool {
	if st.failed || st.ended {
		return false
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	if err := st.enc.Encode(ev); err != nil {
		st.fail(err)
		return false
	}
	return true
}

func (st *stream) flushNow() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.flush = nil
	if st.failed || st.ended {
		return
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	if err := st.rc.Flush(); err != nil {
		st.fail(err)
	}
}

func (st *stream) fail(err error) {
	st.failed = true
	st.gone(fmt.Errorf("%w: %w", errClientGone, err))
}

type chunkWriter struct {
	st   *stream
	kind string
}

func (c chunkWriter) Write(p []byte) (int, error) {
	ev := Event{Type: c.kind}
	if utf8.Valid(p) {
		ev.Data = string(p)
	} else {
		ev.DataB64 = append([]byte(nil), p...)
	}
	c.st.send(ev)
	return len(p), nil
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	var in tools.ExecInput
	if err := s.decodeBody(w, r, &in); err != nil {
		WriteError(w, err)
		return
	}
	ctx, gone := context.WithCancelCause(r.Context())
	defer gone(nil)
	st := &stream{rc: http.NewResponseController(w), enc: json.NewEncoder(w), timeout: s.opts.WriteTimeout, gone: gone}
	defer st.close() // also when Exec panics: no flush after the handler
	started := false
	res, err := s.opts.Tools.Exec(ctx, in, chunkWriter{st, "stdout"}, chunkWriter{st, "stderr"}, func(id string) {
		started = true
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("X-Exec-Id", id)
		w.WriteHeader(http.StatusOK)
		st.send(Event{Type: "start", ID: id})
	})
	if !started {
		WriteError(w, err)
		return
	}
	if cause := context.Cause(ctx); errors.Is(cause, errClientGone) {
		s.opts.Logger.Info("exec client gone", "id", res.ID, "cause", cause)
	}
	if err != nil {
		b, _ := ErrorOf(err)
		st.end(Event{Type: "error", ID: res.ID, Error: &b})
		return
	}
	st.end(Event{Type: "exit", ID: res.ID, ExecResult: &res})
}

func (s *Server) execs(w http.ResponseWriter, _ *http.Request) {
	WriteJSON(w, http.StatusOK, map[string][]tools.ExecInfo{"execs": s.opts.Tools.Execs()})
}

func (s *Server) execInfo(w http.ResponseWriter, r *http.Request) {
	info, err := s.opts.Tools.ExecInfo(r.PathValue("id"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, info)
}

func (s *Server) kill(w http.ResponseWriter, r *http.Request) {
	info, err := s.opts.Tools.Kill(r.PathValue("id"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, info)
}

func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	paths, err := s.opts.Tools.Changes(r.Context(), r.PathValue("id"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string][]string{"changed": paths})
}

// AuditEvent is one audit record as the API returns it.
type AuditEvent struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Op     string    `json:"op"`
	Path   string    `json:"path"`
	Path2  string    `json:"path2,omitempty"`
	Result string    `json:"result"`
}

func toAPIEvents(ev []sqlstore.AuditEvent) []AuditEvent {
	out := make([]AuditEvent, len(ev))
	for i, e := range ev {
		out[i] = AuditEvent{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Op: e.Op, Path: e.Path, Path2: e.Path2, Result: e.Result}
	}
	return out
}

// auditQuery turns GET /v1/audit parameters into a filter; unknown ones
// are refused like unknown JSON fields.
func auditQuery(q url.Values) (sqlstore.AuditFilter, error) {
	var f sqlstore.AuditFilter
	for k, v := range q {
		if len(v) != 1 {
			return f, apiErr(tools.CodeInvalid, "parameter %s given %d times", k, len(v))
		}
		var err error
		switch val := v[0]; k {
		case "actor":
			f.Actor = val
		case "actor_prefix":
			f.ActorPrefix = val
		case "op":
			f.Op = val
		case "path_prefix":
			f.PathPrefix, err = AuditPathPrefix(val)
		case "since":
			f.Since, err = time.Parse(time.RFC3339Nano, val)
		case "after_seq":
			f.AfterSeq, err = strconv.ParseInt(val, 10, 64)
		case "limit":
			f.Limit, err = strconv.Atoi(val)
		default:
			return f, apiErr(tools.CodeInvalid, "unknown parameter %q; known: actor, actor_prefix, op, path_prefix, since, after_seq, limit", k)
		}
		if err != nil {
			return f, apiErr(tools.CodeInvalid, "parameter %s: %v", k, err)
		}
	}
	return f, nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	f, err := auditQuery(r.URL.Query())
	if err != nil {
		WriteError(w, err)
		return
	}
	ev, err := s.opts.Tools.Audit(r.Context(), f)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string][]AuditEvent{"events": toAPIEvents(ev)})
}

// trailerErr carries an export failure after the tar stream has started.
const trailerErr = "X-Sqlfs-Error"

func onlyParam(q url.Values, name string) (string, error) {
	for k := range q {
		if k != name {
			return "", apiErr(tools.CodeInvalid, "unknown parameter %q; only %s is accepted", k, name)
		}
	}
	return q.Get(name), nil
}

func (s *Server) importTar(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var opts tools.ImportOptions
	if v := q.Get("skip_special"); v != "" {
		skip, err := strconv.ParseBool(v)
		if err != nil {
			WriteError(w, apiErr(tools.CodeInvalid, "skip_special: %q is not a boolean", v))
			return
		}
		opts.SkipSpecial = skip
		q.Del("skip_special")
	}
	dest, err := onlyParam(q, "dest")
	if err != nil {
		WriteError(w, err)
		return
	}
	stats, err := s.opts.Tools.Import(r.Context(), dest, r.Body, opts)
	if err = s.durable(r, err); err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, stats)
}

func (s *Server) exportTar(w http.ResponseWriter, r *http.Request) {
	src, err := onlyParam(r.URL.Query(), "src")
	if err != nil {
		WriteError(w, err)
		return
	}
	// Problems found before any byte is written get a normal error answer;
	// later ones travel in a trailer, as the status is gone by then.
	if err := s.opts.Tools.CheckExport(src); err != nil {
		WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Trailer", trailerErr)
	w.WriteHeader(http.StatusOK)
	if err := s.opts.Tools.Export(r.Context(), src, w); err != nil {
		b, _ := ErrorOf(err)
		w.Header().Set(trailerErr, string(b.Code)+": "+b.Message)
	}
}
