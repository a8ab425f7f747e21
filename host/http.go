package host

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sidecar/workspace"
)

// Host API error codes, next to the tools' and the API's own.
const (
	codeBadID         tools.Code = "invalid_workspace_id"
	codeNoWorkspace   tools.Code = "unknown_workspace"
	codeWorkspaceBusy tools.Code = "workspace_busy"
	codeTooManyOpen   tools.Code = "too_many_open_workspaces"
	codeUnimplemented tools.Code = "not_implemented"
	codeShuttingDown  tools.Code = "shutting_down"
	codeUnknownToken  tools.Code = "unknown_token"
	codeNoSession     tools.Code = "unknown_mcp_session"
	codeUnavailable   tools.Code = "workspace_unavailable"
	retryAfterSeconds            = "1"
	maxManageBody                = 1 << 20
	defaultListLimit             = 100
	maxListLimit                 = 1000
)

var hostStatus = map[tools.Code]int{
	codeBadID:         http.StatusBadRequest,
	codeNoWorkspace:   http.StatusNotFound,
	codeUnknownToken:  http.StatusNotFound,
	codeNoSession:     http.StatusNotFound,
	codeWorkspaceBusy: http.StatusConflict,
	codeTooManyOpen:   http.StatusTooManyRequests,
	codeUnimplemented: http.StatusNotImplemented,
	codeShuttingDown:  http.StatusServiceUnavailable,
	codeUnavailable:   http.StatusServiceUnavailable,
}

// HandlerOptions configure the host's HTTP API.
type HandlerOptions struct {
	// OperatorToken, when set, must come as the bearer token of every
	// request, except a workspace's own routes, which take one of its
	// workspace tokens too. "" (a Unix socket, mode 0600): no check.
	OperatorToken string
	// WorkspaceLabel counts each workspace's requests in
	// sqlfs_host_workspace_requests_total{workspace}: one series per
	// workspace, so off by default.
	WorkspaceLabel bool
	// Remote is where workspaces live beyond DIR (a replica, a fleet's
	// leases); nil: nowhere. DELETE removes a workspace there too.
	Remote Remote
	// Admission gives the workspaces' requests their turns (nil: all
	// at once), and the operator's that open, copy, close or remove a
	// store (create, fork, PATCH, DELETE); the others (lists, info,
	// tokens, health) read a few small files. Change streams (events, an
	// MCP session's GET) take none: they hold no turn while they wait.
	Admission *Admission
	Logger    *slog.Logger
}

// Remote is where workspaces live beyond this host's disk.
type Remote interface {
	// Exists says whether workspace id exists there, at a bounded cost
	// for unknown ids (Known).
	Exists(ctx context.Context, id string) (bool, error)
	// Delete deletes workspace id there for good; the host holds it
	// closed meanwhile.
	Delete(ctx context.Context, id string) error
}

type handler struct {
	h   *Host
	d   *Dir
	o   HandlerOptions
	mux *api.Mux
}

// Handler serves the host API: workspaces managed under /v1/workspaces,
// each workspace's own API under /v1/workspaces/ID/ (MCP at
// /v1/workspaces/ID/mcp), and the host's /v1/health and /metrics.
func Handler(h *Host, d *Dir, o HandlerOptions) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &handler{h: h, d: d, o: o, mux: api.NewMux()}
	if o.WorkspaceLabel {
		metrics.EnableHostWorkspaceLabel()
	}
	op := s.operator
	s.mux.HandleFunc("GET /v1/health", op(s.health))
	s.mux.Handle("GET /metrics", op(metrics.Handler().ServeHTTP))
	s.mux.HandleFunc("POST /v1/workspaces", op(s.create))
	s.mux.HandleFunc("GET /v1/workspaces", op(s.list))
	s.mux.HandleFunc("GET /v1/workspaces/{id}", op(s.withID(s.info)))
	s.mux.HandleFunc("PATCH /v1/workspaces/{id}", op(s.withID(s.patch)))
	s.mux.HandleFunc("DELETE /v1/workspaces/{id}", op(s.withID(s.remove)))
	s.mux.HandleFunc("POST /v1/workspaces/{id}/tokens", op(s.withID(s.mintToken)))
	s.mux.HandleFunc("GET /v1/workspaces/{id}/tokens", op(s.withID(s.listTokens)))
	s.mux.HandleFunc("DELETE /v1/workspaces/{id}/tokens/{token}", op(s.withID(s.revokeToken)))
	s.mux.HandleFunc("GET /v1/workspaces/{id}/events", s.withID(s.member(s.events)))
	s.mux.HandleFunc("GET /v1/workspaces/{id}/mcp", s.withID(s.member(s.mcpStream)))
	s.mux.HandleFunc("/v1/workspaces/{id}/{rest...}", s.withID(s.member(s.forward)))
	return Retrying(s.mux)
}

// WriteError answers err as the host's handler does (status, code,
// Retry-After); a fleet's handler that opened the workspace itself uses it
// too.
func WriteError(w http.ResponseWriter, err error) {
	te, retry := toolsError(err)
	var over *OverloadedError
	switch {
	case errors.As(err, &over):
		w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(over.Retry)))
	case retry:
		w.Header().Set("Retry-After", retryAfterSeconds)
	}
	b, st := api.ErrorOf(te)
	if s, ok := hostStatus[te.Code]; ok {
		st = s
	}
	api.WriteJSON(w, st, map[string]api.ErrorBody{"error": b})
}

// toolsError is err as the API reports it, and whether a retry may work.
func toolsError(err error) (te *tools.Error, retry bool) {
	switch {
	case errors.As(err, &te):
	case errors.Is(err, ErrBadID):
		te = &tools.Error{Code: codeBadID, Msg: err.Error()}
	case errors.Is(err, ErrNotFound):
		te = &tools.Error{Code: codeNoWorkspace, Msg: err.Error()}
	case errors.Is(err, ErrNoToken):
		te = &tools.Error{Code: codeUnknownToken, Msg: err.Error()}
	case errors.Is(err, ErrBusy):
		te = &tools.Error{Code: codeWorkspaceBusy, Msg: err.Error()}
	case errors.Is(err, ErrOverloaded):
		te = &tools.Error{Code: tools.CodeAtCapacity, Msg: err.Error()}
	case errors.Is(err, ErrTooManyOpen):
		te = &tools.Error{Code: codeTooManyOpen, Msg: err.Error() + "; retry in a moment"}
	case errors.Is(err, ErrClosed):
		te = &tools.Error{Code: codeShuttingDown, Msg: err.Error()}
	case errors.Is(err, ErrUnavailable):
		te = &tools.Error{Code: codeUnavailable, Msg: err.Error() + "; retry"}
	case errors.Is(err, os.ErrExist):
		te = &tools.Error{Code: tools.CodeExists, Msg: err.Error()}
	case errors.Is(err, errBadPolicy), errors.Is(err, errBadLimits), errors.Is(err, errBadToken):
		te = &tools.Error{Code: tools.CodeInvalid, Msg: err.Error()}
	default:
		te = &tools.Error{Code: tools.CodeInternal, Msg: err.Error()}
	}
	return te, te.Code == codeTooManyOpen || te.Code == codeShuttingDown || te.Code == codeUnavailable
}

func apiError(code tools.Code, msg string) error { return &tools.Error{Code: code, Msg: msg} }

// operator lets only the operator through. A token of the workspace the
// path names is known but not allowed here: 403, not 401.
func (s *handler) operator(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.OperatorToken != "" && !api.Authorized(r, s.o.OperatorToken) {
			if tok, _ := api.BearerToken(r); CheckID(r.PathValue("id")) == nil && s.d.ValidToken(r.PathValue("id"), tok) {
				WriteError(w, apiError(tools.CodeDenied, "a workspace token cannot "+r.Method+" "+r.URL.Path+": only the operator can"))
				return
			}
			api.Unauthorized(w)
			return
		}
		next(w, r)
	}
}

// member lets through the operator and the tokens of the workspace named
// in the path, which withID has checked.
func (s *handler) member(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.OperatorToken != "" && !api.Authorized(r, s.o.OperatorToken) {
			tok, _ := api.BearerToken(r)
			if !s.d.ValidToken(r.PathValue("id"), tok) {
				api.Unauthorized(w)
				return
			}
		}
		next(w, r)
	}
}

// withID refuses a malformed workspace id before anything looks it up.
func (s *handler) withID(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := CheckID(r.PathValue("id")); err != nil {
			WriteError(w, err)
			return
		}
		next(w, r)
	}
}

// forward serves a workspace's own route with its API server, as the
// single-store server serves it at /v1/REST (and /mcp).
//
// An error answer is withheld until the workspace is known not to have
// closed under the request (see Retrying): one that did is served again,
// once the turn and the workspace are let go, never answered 500.
func (s *handler) forward(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	done, err := s.o.Admission.Admit(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	e, release, err := s.h.acquire(r.Context(), id)
	if err != nil {
		done()
		if errors.Is(err, ErrUnavailable) {
			serveAgain(w, r, id, err) // moved meanwhile: the fleet routes it
			return
		}
		WriteError(w, err)
		return
	}
	path := "/v1/" + r.PathValue("rest")
	if r.PathValue("rest") == "mcp" {
		path = "/mcp"
	}
	hw := newHoldWriter(w)
	s.serveOn(e.ws, hw, r, path)
	closed := hw.held() && s.h.closedUnder(e)
	release()
	done()
	if closed {
		serveAgain(w, r, id, nil)
		return
	}
	hw.flush()
}

// serveOn serves r, a route of the workspace it names, on ws as path.
func (s *handler) serveOn(ws Workspace, w http.ResponseWriter, r *http.Request, path string) {
	if s.o.WorkspaceLabel {
		metrics.HostWorkspaceRequests.WithLabelValues(r.PathValue("id")).Inc()
	}
	ws.ServeHTTP(w, withPath(r, path))
}

// withPath is r for path instead of its own.
func withPath(r *http.Request, path string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	r2.URL = &u
	u.Path = path
	u.RawPath = ""
	r2.RequestURI = u.RequestURI()
	return r2
}

// mcpStream serves an MCP session's GET stream (server-sent events), which
// does not keep the workspace open, as a change stream does not: it ends
// when the workspace begins to hibernate. MCP sessions end with the
// workspace, so a stream asked of a hibernated one is for a session
// gone: 404 (the client starts a new session) without waking it.
func (s *handler) mcpStream(w http.ResponseWriter, r *http.Request) {
	e, _, err := s.h.watchHold(r.Context(), r.PathValue("id"), false)
	if err != nil {
		WriteError(w, err)
		return
	}
	if e == nil {
		WriteError(w, apiError(codeNoSession, "no such MCP session: workspace "+r.PathValue("id")+
			" hibernated since, which ends its sessions; initialize a new one"))
		return
	}
	defer e.watchers.Done()
	ctx, cancel := untilStop(r.Context(), e)
	defer cancel()
	s.serveOn(e.ws, w, r.WithContext(ctx), "/mcp")
}

// events serves a workspace's change stream, which does not keep it open
// (Host.Watch).
func (s *handler) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.o.WorkspaceLabel {
		metrics.HostWorkspaceRequests.WithLabelValues(id).Inc()
	}
	api.ServeEvents(w, r, cmp.Or(s.d.api.WriteTimeout, api.DefaultWriteTimeout), func(ctx context.Context, o tools.WatchOptions, emit func([]tools.ChangeEvent, int64) error) (int64, error) {
		cursor, err := s.h.Watch(ctx, id, o, emit)
		if err != nil {
			te, _ := toolsError(err) // for the stream's error line
			return cursor, te
		}
		return cursor, nil
	}, WriteError)
}

// HostHealth is the answer of the host's GET /v1/health.
type HostHealth struct {
	OK      bool `json:"ok"`
	Pid     int  `json:"pid"`
	Open    int  `json:"open"`
	MaxOpen int  `json:"max_open"`
}

func (s *handler) health(w http.ResponseWriter, _ *http.Request) {
	api.WriteJSON(w, http.StatusOK, HostHealth{OK: true, Pid: os.Getpid(), Open: s.h.Open(), MaxOpen: s.h.o.MaxOpen})
}

// readJSON decodes a small management body strictly; an empty body is the
// zero value.
func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxManageBody+1))
	if err != nil {
		return apiError(tools.CodeInvalid, "reading the request body: "+err.Error())
	}
	if len(b) > maxManageBody {
		return apiError(tools.CodeTooLarge, "request body over 1 MiB")
	}
	if len(b) == 0 {
		return nil
	}
	return api.DecodeStrict(bytes.NewReader(b), v)
}

// CreateRequest is the body of POST /v1/workspaces.
type CreateRequest struct {
	ID         string                `json:"id,omitempty"`
	Policy     *workspace.PolicyFile `json:"policy,omitempty"`
	Limits     *workspace.ExecLimits `json:"limits,omitempty"`
	ForkOf     string                `json:"fork_of,omitempty"`
	Checkpoint string                `json:"checkpoint,omitempty"`
}

func (s *handler) create(w http.ResponseWriter, r *http.Request) {
	var in CreateRequest
	if err := readJSON(r, &in); err != nil {
		WriteError(w, err)
		return
	}
	if in.Checkpoint != "" && in.ForkOf == "" {
		WriteError(w, apiError(tools.CodeInvalid, "checkpoint names a checkpoint of the workspace fork_of names: give fork_of too"))
		return
	}
	if in.Limits != nil {
		if err := CheckLimits(*in.Limits); err != nil {
			WriteError(w, err)
			return
		}
	}
	if in.ID == "" {
		in.ID = NewID()
	}
	// Making a store, copying one for a fork: a turn of the workspace
	// worked on, as its own requests take.
	done, err := s.o.Admission.Admit(r.Context(), cmp.Or(in.ForkOf, in.ID))
	if err != nil {
		WriteError(w, err)
		return
	}
	defer done()
	create := func() error {
		if err := s.d.Create(in.ID, in.Policy); err != nil {
			return err
		}
		if in.Limits == nil {
			return nil
		}
		if err := s.d.SetLimits(in.ID, *in.Limits); err != nil {
			return errors.Join(err, s.d.Remove(in.ID))
		}
		return nil
	}
	if in.ForkOf != "" {
		create = func() error {
			return s.fork(r.Context(), in.ID, in.Policy, in.Limits, in.ForkOf, in.Checkpoint)
		}
	}
	if err := create(); err != nil {
		WriteError(w, err)
		return
	}
	// Open it once, so a store that cannot be made fails here, not later.
	_, release, err := s.h.Acquire(r.Context(), in.ID)
	if err != nil {
		WriteError(w, errors.Join(err, s.h.Remove(r.Context(), in.ID, true, func() error { return s.d.Remove(in.ID) })))
		return
	}
	release()
	in2, err := s.infoOf(in.ID)
	if err != nil {
		WriteError(w, err)
		return
	}
	api.WriteJSON(w, http.StatusCreated, in2)
}

// fork makes workspace id a copy of workspace src (its checkpoint ref,
// or its live state when ref is ""), with policy pol and exec limits lim,
// or src's own when nil. The source stays open and serving meanwhile; a
// failed fork leaves no workspace id behind.
func (s *handler) fork(ctx context.Context, id string, pol *workspace.PolicyFile, lim *workspace.ExecLimits, src, ref string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if err := CheckID(src); err != nil {
		return err
	}
	ws, release, err := s.h.Acquire(ctx, src)
	if err != nil {
		return err
	}
	defer release()
	from := ws.Tools()
	if from == nil {
		return apiError(codeUnimplemented, "workspace "+src+" cannot be forked by this host")
	}
	if pol == nil {
		own, err := s.d.Policy(src)
		if err != nil {
			return err
		}
		pol = &own
	}
	if lim == nil {
		own, err := s.d.Limits(src)
		if err != nil {
			return err
		}
		lim = &own
	}
	if err := s.d.Create(id, pol); err != nil {
		return err
	}
	if err := s.d.SetLimits(id, *lim); err != nil {
		return errors.Join(err, s.d.Remove(id))
	}
	if err := from.Fork(ctx, tools.CheckpointActor, ref, s.d.StorePath(id)); err != nil {
		return errors.Join(err, s.d.Remove(id))
	}
	return nil
}

func (s *handler) infoOf(id string) (Info, error) {
	in, err := s.d.Stat(id)
	if err != nil {
		return in, err
	}
	state, used := s.h.State(id)
	in.State = state
	if !used.IsZero() {
		in.LastUsed = used
	}
	return in, nil
}

// ListResponse is the answer of GET /v1/workspaces: a page of workspaces
// in id order; Next, when set, is the after= of the next page.
type ListResponse struct {
	Workspaces []Info `json:"workspaces"`
	Next       string `json:"next,omitempty"`
}

func (s *handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultListLimit
	for k, v := range q {
		switch {
		case len(v) != 1:
			WriteError(w, apiError(tools.CodeInvalid, "parameter "+k+" given more than once"))
			return
		case k == "limit":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > maxListLimit {
				WriteError(w, apiError(tools.CodeInvalid, "limit: want 1 to "+strconv.Itoa(maxListLimit)))
				return
			}
			limit = n
		case k != "after":
			WriteError(w, apiError(tools.CodeInvalid, "unknown parameter "+strconv.Quote(k)+"; known: after, limit"))
			return
		}
	}
	ids, err := s.d.IDs(q.Get("after"), limit+1)
	if err != nil {
		WriteError(w, err)
		return
	}
	out := ListResponse{Workspaces: []Info{}}
	if len(ids) > limit {
		ids = ids[:limit]
		out.Next = ids[limit-1]
	}
	for _, id := range ids {
		in, err := s.infoOf(id)
		if errors.Is(err, ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			WriteError(w, err)
			return
		}
		out.Workspaces = append(out.Workspaces, in)
	}
	api.WriteJSON(w, http.StatusOK, out)
}

// WorkspaceInfo is the answer of GET and PATCH /v1/workspaces/ID.
type WorkspaceInfo struct {
	Info
	Policy workspace.PolicyFile `json:"policy"`
	Limits workspace.ExecLimits `json:"limits"`
}

func (s *handler) info(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	in, err := s.infoOf(id)
	if err != nil {
		WriteError(w, err)
		return
	}
	pol, err := s.d.Policy(id)
	if err != nil {
		WriteError(w, err)
		return
	}
	lim, err := s.d.Limits(id)
	if err != nil {
		WriteError(w, err)
		return
	}
	api.WriteJSON(w, http.StatusOK, WorkspaceInfo{Info: in, Policy: pol, Limits: lim})
}

// PatchRequest is the body of PATCH /v1/workspaces/ID: the workspace's new
// policy and exec limits, each replacing the old one when given.
type PatchRequest struct {
	Policy *workspace.PolicyFile `json:"policy,omitempty"`
	Limits *workspace.ExecLimits `json:"limits,omitempty"`
}

func (s *handler) patch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in PatchRequest
	if err := readJSON(r, &in); err != nil {
		WriteError(w, err)
		return
	}
	if in.Policy == nil && in.Limits == nil {
		WriteError(w, apiError(tools.CodeInvalid, `nothing to change: send {"policy": {...}} or {"limits": {...}}`))
		return
	}
	// Both are checked before either is written: a refusal changes nothing.
	if in.Policy != nil {
		if _, err := checkPolicy(*in.Policy); err != nil {
			WriteError(w, err)
			return
		}
	}
	if in.Limits != nil {
		if err := CheckLimits(*in.Limits); err != nil {
			WriteError(w, err)
			return
		}
	}
	if _, err := s.d.path(id); err != nil {
		WriteError(w, err)
		return
	}
	// The reopen closes the store (its final commit): a turn, as the
	// workspace's own requests take.
	done, err := s.o.Admission.Admit(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	defer done()
	// The core and the backends take their policy and limits when the
	// workspace opens, the egress dialer at once: a change of the egress
	// rules alone needs no reopen.
	reopen := in.Limits != nil
	if in.Policy != nil {
		old, err := s.d.Policy(id)
		if err != nil {
			WriteError(w, err)
			return
		}
		reopen = reopen || !slices.Equal(old.ReadOnly, in.Policy.ReadOnly) || !slices.Equal(old.Hidden, in.Policy.Hidden) || old.QuotaBytes != in.Policy.QuotaBytes
		if err := s.d.SetPolicy(id, *in.Policy); err != nil {
			WriteError(w, err)
			return
		}
	}
	if in.Limits != nil {
		if err := s.d.SetLimits(id, *in.Limits); err != nil {
			WriteError(w, err)
			return
		}
	}
	if reopen {
		s.h.Reopen(id) // once idle
	}
	s.info(w, r)
}

func (s *handler) remove(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	force := false
	for k, v := range r.URL.Query() {
		var err error
		if k != "force" || len(v) != 1 {
			err = apiError(tools.CodeInvalid, "unknown parameter "+strconv.Quote(k)+"; only force is accepted")
		} else if force, err = strconv.ParseBool(v[0]); err != nil {
			err = apiError(tools.CodeInvalid, "force: "+strconv.Quote(v[0])+" is not a boolean")
		}
		if err != nil {
			WriteError(w, err)
			return
		}
	}
	if _, err := s.d.path(id); err != nil {
		if s.o.Remote == nil || !errors.Is(err, ErrNotFound) {
			WriteError(w, err)
			return
		}
		if ok, rerr := s.o.Remote.Exists(r.Context(), id); rerr != nil || !ok {
			WriteError(w, cmp.Or(rerr, err))
			return
		}
	}
	// Closing the store, removing its folder and its remote copy: a
	// turn, as the workspace's own requests take.
	done, err := s.o.Admission.Admit(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	defer done()
	remove := func() error {
		err := s.d.Remove(id)
		if errors.Is(err, ErrNotFound) {
			err = nil // only elsewhere
		}
		if err == nil && s.o.Remote != nil {
			// After the local copy, so that a failure here leaves
			// nothing to serve locally but a DELETE to retry.
			err = s.o.Remote.Delete(r.Context(), id)
		}
		return err
	}
	if err := s.h.Remove(r.Context(), id, force, remove); err != nil {
		WriteError(w, err)
		return
	}
	metrics.HostWorkspaceRequests.DeleteLabelValues(id)
	api.WriteJSON(w, http.StatusOK, map[string]string{"deleted": id})
}

// TokenRequest is the body of POST /v1/workspaces/ID/tokens.
type TokenRequest struct {
	// TTLSeconds is how long the token works; 0: until revoked.
	TTLSeconds float64 `json:"ttl_seconds,omitempty"`
}

// TokenResponse is a minted token: Token is its secret, shown only here.
type TokenResponse struct {
	Token
	Secret string `json:"token"`
}

func (s *handler) mintToken(w http.ResponseWriter, r *http.Request) {
	var in TokenRequest
	if err := readJSON(r, &in); err != nil {
		WriteError(w, err)
		return
	}
	t, secret, err := s.d.MintToken(r.PathValue("id"), time.Duration(in.TTLSeconds*float64(time.Second)))
	if err != nil {
		WriteError(w, err)
		return
	}
	api.WriteJSON(w, http.StatusCreated, TokenResponse{Token: t, Secret: secret})
}

func (s *handler) listTokens(w http.ResponseWriter, r *http.Request) {
	ts, err := s.d.Tokens(r.PathValue("id"))
	if err != nil {
		WriteError(w, err)
		return
	}
	api.WriteJSON(w, http.StatusOK, map[string][]Token{"tokens": ts})
}

func (s *handler) revokeToken(w http.ResponseWriter, r *http.Request) {
	if err := s.d.RevokeToken(r.PathValue("id"), r.PathValue("token")); err != nil {
		WriteError(w, err)
		return
	}
	api.WriteJSON(w, http.StatusOK, map[string]string{"revoked": r.PathValue("token")})
}
