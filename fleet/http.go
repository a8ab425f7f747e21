package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfs/sqlfs/host"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

const (
	maxCreateBody = 1 << 20 // the host's own bound on a management body
	// forwardedBy marks a request one host forwarded to another, which
	// never forwards it again (a loop while leases change hands).
	forwardedBy     = "X-Sqlfs-Forwarded-By"
	codeUnavailable = tools.Code("workspace_unavailable")
)

func writeError(w http.ResponseWriter, status int, code tools.Code, msg string) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	api.WriteJSON(w, status, map[string]api.ErrorBody{"error": {Code: code, Message: msg}})
}

// HandlerOptions say which requests may take a lease.
type HandlerOptions struct {
	// OperatorToken is the host's (the same on every host of a fleet);
	// "" accepts every request.
	OperatorToken string
	// Dir validates workspace tokens.
	Dir *host.Dir
	// Admission is the host handler's: a request this host opens a
	// workspace for takes its turn before the open (nil: none). One
	// forwarded to the holder takes none here: the holder admits it.
	Admission *host.Admission
}

// Handler routes the requests of each workspace to the host holding its
// lease: next (the host's own handler) serves those this host holds or
// can take; the others are forwarded by reverse proxy to the holder's
// advertised address, streamed both ways unbuffered (NDJSON exec output,
// MCP's event streams). Only a request bearing a credential this host
// accepts takes a lease; others are forwarded or left to next to refuse.
//
// A request whose workspace closed under it unanswered (its lease lost)
// comes through here again (host.Retrying): to the new holder, or to this
// host under a new lease.
func (f *Fleet) Handler(next http.Handler, o HandlerOptions) http.Handler {
	return host.Retrying(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/workspaces" && f.authorized(r, "", o) {
			f.create(w, r, next)
			return
		}
		id, rest, ok := workspacePath(r.URL.Path)
		if !ok || host.CheckID(id) != nil || f.Serving(id) {
			next.ServeHTTP(w, r)
			return
		}
		if ok, err := f.Exists(r.Context(), id); err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "workspace "+id+": the lease store is unreachable: "+err.Error())
			return
		} else if !ok {
			next.ServeHTTP(w, r) // the host answers 404
			return
		}
		rec, err := f.o.Lease.Holder(r.Context(), id)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "workspace "+id+": the lease store is unreachable: "+err.Error())
			return
		}
		if rec.Live(time.Now()) && rec.Instance != f.claim.Instance {
			f.forward(w, r, rec, f.authorized(r, id, o))
			return
		}
		// Workspace management, and requests that could not take a lease,
		// stay with this host's handler.
		if rest == "" || rest == "tokens" || strings.HasPrefix(rest, "tokens/") || !f.authorized(r, id, o) {
			next.ServeHTTP(w, r)
			return
		}
		// The open (a lease, maybe a restore) is the wake the host's
		// handler would do within the turn; next is admitted at once.
		r, done, err := o.Admission.AdmitRequest(r, id)
		if err != nil {
			host.WriteError(w, err)
			return
		}
		defer done()
		_, release, err := f.host.Acquire(r.Context(), id)
		var held *HeldError
		if errors.As(err, &held) {
			// Another host took it first, and admits it: this one
			// holds no turn while it proxies.
			done()
			f.forward(w, r, held.Record, true)
			return
		}
		if err != nil {
			// Answered here as the host answers it: passed on, the
			// request opened the workspace again, a second acquisition,
			// so each refused request took two lease generations (a
			// failover test's unreplicated workspace reached 1767).
			host.WriteError(w, err)
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	}))
}

// create refuses the id of a workspace the fleet has leased before: it
// exists, maybe on another host or only in the replica.
func (f *Fleet) create(w http.ResponseWriter, r *http.Request, next http.Handler) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCreateBody+1))
	if err != nil || len(body) > maxCreateBody {
		next.ServeHTTP(w, r) // let the host refuse it
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &in) != nil || in.ID == "" || host.CheckID(in.ID) != nil {
		next.ServeHTTP(w, r)
		return
	}
	rec, err := f.o.Lease.Holder(r.Context(), in.ID)
	switch {
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "workspace "+in.ID+": the lease store is unreachable: "+err.Error())
	case rec.Generation > 0:
		writeError(w, http.StatusConflict, tools.CodeExists, "workspace "+in.ID+" exists in the fleet (last served by "+rec.Addr+")")
	default:
		next.ServeHTTP(w, r)
	}
}

// workspacePath splits /v1/workspaces/ID[/REST].
func workspacePath(p string) (id, rest string, ok bool) {
	p, ok = strings.CutPrefix(p, "/v1/workspaces/")
	if !ok {
		return "", "", false
	}
	id, rest, _ = strings.Cut(p, "/")
	return id, rest, id != ""
}

func (f *Fleet) authorized(r *http.Request, id string, o HandlerOptions) bool {
	if o.OperatorToken == "" || api.Authorized(r, o.OperatorToken) {
		return true
	}
	tok, _ := api.BearerToken(r)
	return id != "" && o.Dir != nil && o.Dir.ValidToken(id, tok)
}

// forward proxies r to the host holding rec. When the holder cannot be
// reached and r could take the lease (mayLease), the workspace is
// restored ahead of the lease's expiry (see prepare).
func (f *Fleet) forward(w http.ResponseWriter, r *http.Request, rec Record, mayLease bool) {
	wait := strconv.Itoa(max(1, int(time.Until(rec.Expires).Seconds()+1)))
	if by := r.Header.Get(forwardedBy); by != "" || rec.Addr == f.claim.Addr {
		// Forwarded once already, or held by this address's previous
		// process: only the lease's expiry settles it.
		w.Header().Set("Retry-After", wait)
		api.WriteJSON(w, http.StatusServiceUnavailable, map[string]api.ErrorBody{"error": {Code: codeUnavailable,
			Message: "workspace " + rec.ID + " is leased to " + rec.Addr + " (generation " + strconv.FormatInt(rec.Generation, 10) + "), which does not serve it; retry in " + wait + "s"}})
		return
	}
	target, err := url.Parse(rec.Addr)
	if err != nil {
		writeError(w, http.StatusBadGateway, codeUnavailable, "workspace "+rec.ID+": its lease names a bad address: "+err.Error())
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Header.Set(forwardedBy, f.claim.Addr)
		},
		// Write each piece of a streamed answer as it comes.
		FlushInterval: -1,
		ModifyResponse: func(*http.Response) error {
			metrics.FleetForwards.WithLabelValues("ok").Inc()
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			metrics.FleetForwards.WithLabelValues("unreachable").Inc()
			f.o.Logger.Warn("forwarding to a workspace's holder failed", "id", rec.ID, "holder", rec.Addr, "err", err)
			if mayLease {
				f.prepare(rec, err)
			}
			w.Header().Set("Retry-After", wait)
			api.WriteJSON(w, http.StatusServiceUnavailable, map[string]api.ErrorBody{"error": {Code: codeUnavailable,
				Message: "workspace " + rec.ID + " is served by " + rec.Addr + ", which did not answer; its lease expires in " + wait + "s, then another host takes it"}})
		},
	}
	rp.ServeHTTP(w, r)
}

// prepare has the Opener restore rec's workspace while its lease runs
// out, when forwarding to its holder failed to connect at all (the
// holder looks dead: refused, unreachable), so that the restore overlaps
// the TTL; the open after the expiry takes the copy up only if the
// replica has nothing newer. Every other workspace that holder holds is
// prepared too, behind it (sweep): its clients come next. A holder that
// answers slowly is not dead: nothing is prepared for it.
func (f *Fleet) prepare(rec Record, err error) {
	p, ok := f.o.Opener.(preparer)
	var op *net.OpError
	if !ok || !errors.As(err, &op) || op.Op != "dial" {
		return
	}
	p.Prepare(rec.ID, rec.Generation, rec.Expires.Add(f.o.TTL+time.Minute))
	f.mu.Lock()
	now := time.Now()
	for inst, at := range f.swept {
		if now.Sub(at) > f.o.TTL {
			delete(f.swept, inst)
		}
	}
	_, seen := f.swept[rec.Instance]
	if !seen {
		f.swept[rec.Instance] = now
	}
	f.mu.Unlock()
	if !seen {
		go f.sweep(rec.Instance, p)
	}
}

// sweepLookups bounds the lease lookups of a sweep running at once.
const sweepLookups = 8

// sweep prepares (PrepareLater) every workspace whose lease the holder
// instance, seen dead, still holds live: a host that died held many,
// and the requests for the others follow the first one's. It reads
// every lease record of the fleet (a listing, then one GET each, a few
// at a time) and writes none: preparing only restores into a staging
// copy, and each open still takes its lease first. Each host that finds
// the holder dead sweeps once per TTL; in a fleet of many hosts each may
// stage the same workspaces, and the one that takes a lease uses its
// own copy only.
func (f *Fleet) sweep(instance string, p preparer) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.TTL)
	defer cancel()
	ids, err := f.o.Lease.List(ctx)
	if err != nil {
		f.o.Logger.Warn("listing the leases of a holder seen dead failed; only the workspaces asked for are restored ahead of the lease", "err", err)
		return
	}
	var (
		wg     sync.WaitGroup
		next   atomic.Int64
		staged atomic.Int64
	)
	for range min(sweepLookups, len(ids)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(ids); i = int(next.Add(1)) - 1 {
				rec, err := f.o.Lease.Holder(ctx, ids[i])
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					continue
				}
				if rec.Instance == instance && rec.Live(time.Now()) {
					p.PrepareLater(rec.ID, rec.Generation, rec.Expires.Add(f.o.TTL+time.Minute))
					staged.Add(1)
				}
			}
		})
	}
	wg.Wait()
	f.o.Logger.Info("restoring ahead of their leases the workspaces of a holder seen dead", "instance", instance, "workspaces", staged.Load(), "leases", len(ids))
}
