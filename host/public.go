package host

import (
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/publish"
)

// publicPrefix is where workspace ID lives on a host's public listener:
// its published links at /w/ID/p/PATH, its previews at /w/ID/x/TOKEN/.
const publicPrefix = "/w/"

// publicBase is the base URL of workspace id's links and previews on the
// public listener whose base URL is base.
func publicBase(base, id string) string { return strings.TrimSuffix(base, "/") + publicPrefix + id }

// PublicHandler serves a host's public listener (serve --public-addr):
// workspace ID's published links under /w/ID/p/ and its previews under
// /w/ID/x/, the very handler a single-store server serves at / (its
// workspace's PublicHandler). A link is checked against the signing key of
// the workspace its path names and a preview token looked up among that
// workspace's previews only, so nothing of one workspace reaches another.
// The listener faces the internet, asks no token, and answers 404 to
// anything else; it wakes a hibernated workspace only for a link its key
// signs (previews live only while their workspace is open). A signed
// link takes a turn of a (nil: none), as the API's requests do; a
// preview takes none: it wakes nothing, and its work is its container's
// (under the container's own limits and --max-containers), the host
// only copying the bytes.
func PublicHandler(h *Host, d *Dir, a *Admission) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(publicPrefix+"{id}/{rest...}", func(w http.ResponseWriter, r *http.Request) {
		id, rest := r.PathValue("id"), "/"+r.PathValue("rest")
		if CheckID(id) != nil {
			http.NotFound(w, r)
			return
		}
		if tok, ok := strings.CutPrefix(rest, preview.PathPrefix); ok && tok != "" && !strings.Contains(tok, "/") {
			// The registry's own redirect would leave the prefix out.
			http.Redirect(w, r, r.URL.Path+"/", http.StatusFound)
			return
		}
		r2 := withPath(r, rest)
		var ws Workspace
		var release func()
		if strings.HasPrefix(rest, "/p/") {
			if !d.signed(id, r2) {
				http.NotFound(w, r)
				return
			}
			// A valid link wakes and reads its workspace: a turn of
			// it, as the API's requests take, so links flooding in
			// fill that workspace's share of the queue.
			done, err := a.Admit(r.Context(), id)
			if err != nil {
				publicError(w, r, err)
				return
			}
			defer done()
			if ws, release, err = h.Acquire(r.Context(), id); err != nil {
				publicError(w, r, err)
				return
			}
		} else if ws, release = h.acquireOpen(id); ws == nil {
			http.NotFound(w, r)
			return
		}
		defer release()
		p := ws.Public()
		if p == nil {
			http.NotFound(w, r)
			return
		}
		p.ServeHTTP(w, r2)
	})
	mux.HandleFunc("/", http.NotFound)
	return mux
}

// publicError answers a public request its workspace could not serve:
// 404 when it is gone, 429 with a retry hint past the host's request
// queue, 503 with one when it is busy or the host shuts down, never the
// reason's details.
func publicError(w http.ResponseWriter, r *http.Request, err error) {
	var over *OverloadedError
	if errors.As(err, &over) {
		w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(over.Retry)))
		http.Error(w, "429 busy, retry in "+strconv.Itoa(retrySeconds(over.Retry))+"s", http.StatusTooManyRequests)
		return
	}
	if _, retry := toolsError(err); retry {
		w.Header().Set("Retry-After", retryAfterSeconds)
		http.Error(w, "503 busy, retry in a moment", http.StatusServiceUnavailable)
		return
	}
	if !errors.Is(err, ErrNotFound) {
		http.Error(w, "503 unavailable", http.StatusServiceUnavailable)
		return
	}
	http.NotFound(w, r)
}

// signed says whether r (GET /p/PATH?e=&s=) carries a link workspace id's
// key signs, without opening the workspace: an unknown id or one that
// never published has no key and signs nothing.
func (d *Dir) signed(id string, r *http.Request) bool {
	if _, err := d.path(id); err != nil {
		return false
	}
	store := d.StorePath(id)
	if _, err := os.Lstat(publish.KeyPath(store)); err != nil {
		return false
	}
	links, err := publish.Open(store, "")
	if err != nil {
		return false
	}
	_, ok := links.Signed(r)
	return ok
}

// acquireOpen is Acquire of workspace id only if it is open, never waking
// it: nil when it is not.
func (h *Host) acquireOpen(id string) (Workspace, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.open[id]
	if h.closed || e == nil || e.closing != nil {
		return nil, nil
	}
	select {
	case <-e.ready:
	default:
		return nil, nil
	}
	if e.err != nil {
		return nil, nil
	}
	e.refs++
	return e.ws, func() { h.release(e) }
}
