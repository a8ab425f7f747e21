package host

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/sqlfs/sqlfs/metrics"
)

// ErrUnavailable: the workspace cannot be served here just now (its fleet
// lease moved, or the lease store did not answer); a retry may be served,
// here or by the host it moved to. Answered 503 with Retry-After.
var ErrUnavailable = errors.New("workspace unavailable here for now")

// A request may meet its workspace closing under it: a fleet closes a
// workspace at once when its lease is lost (EvictInstance), a shutdown
// closes every workspace. The store then refuses the request's changes
// ("file system is closed", an EIO: a 500), changes never stored, so the
// request is served again on the workspace's new state (reopened here; a
// fleet forwards it to the lease's new holder or takes the lease again),
// or refused with 503 and Retry-After when it cannot be (its body too
// large to keep, the retries spent). A client of a fleet sees no 500 for
// a lease lost or a shutdown, and no write acknowledged that was not
// stored where the workspace is served next.
const (
	// maxRetries bounds how often one request is served again.
	maxRetries = 3
	// maxReplayBody is the most of a request body kept to serve it again:
	// a tool write of a few MiB of content fits.
	maxReplayBody = 16 << 20
)

// Retried requests, by outcome (retried, refused): sqlfs_host_request_retries_total.
const (
	retryServed  = "retried"
	retryRefused = "refused"
)

type retryKey struct{}

// retryState is one request's passage through Retrying.
type retryState struct {
	body  *replayBody // nil: the request had no body
	tries int
	again bool // set by the inner handler: serve it again
}

// canRetry says whether the request can be served again.
func (st *retryState) canRetry() bool {
	return st != nil && st.tries < maxRetries && (st.body == nil || st.body.rewindable())
}

// retryFrom is the retry state of r's outermost Retrying, nil when none.
func retryFrom(ctx context.Context) *retryState {
	st, _ := ctx.Value(retryKey{}).(*retryState)
	return st
}

// Retrying wraps h, the outermost handler of a host (Handler, or a
// fleet's in front of it), so that a request whose workspace closed under
// it before it was answered is served again by h. A Retrying inside
// another passes requests through: the outer one serves them again
// through everything in front of the workspace (a fleet's routing too).
func Retrying(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if retryFrom(r.Context()) != nil {
			h.ServeHTTP(w, r)
			return
		}
		st := &retryState{}
		if r.Body != nil && r.Body != http.NoBody {
			st.body = &replayBody{src: r.Body}
			r.Body = st.body
		}
		r = r.WithContext(context.WithValue(r.Context(), retryKey{}, st))
		for {
			st.again = false
			h.ServeHTTP(w, r)
			if !st.again {
				return
			}
			st.tries++
			if st.body != nil {
				st.body.rewind()
			}
		}
	})
}

// replayBody is a request body that keeps what is read of it, up to
// maxReplayBody, so that the request can be served again.
type replayBody struct {
	src  io.ReadCloser
	kept []byte
	pos  int  // next byte of kept to read again
	over bool // more than maxReplayBody was read: not kept
}

func (b *replayBody) Read(p []byte) (int, error) {
	if b.pos < len(b.kept) {
		n := copy(p, b.kept[b.pos:])
		b.pos += n
		return n, nil
	}
	n, err := b.src.Read(p)
	if !b.over {
		if len(b.kept)+n > maxReplayBody {
			b.over, b.kept = true, nil
		} else {
			b.kept = append(b.kept, p[:n]...)
		}
		b.pos = len(b.kept)
	}
	return n, err
}

// Close leaves the body to the server, which closes it after the last
// attempt.
func (b *replayBody) Close() error { return nil }

func (b *replayBody) rewindable() bool { return !b.over }

func (b *replayBody) rewind() { b.pos = 0 }

// holdWriter withholds an error answer (5xx) until the handler knows
// whether the request is to be served again (discard) or not (flush);
// any other answer passes through as it is written.
type holdWriter struct {
	w      http.ResponseWriter
	header http.Header
	status int // 0: nothing written yet
	hold   bool
	buf    []byte
}

func newHoldWriter(w http.ResponseWriter) *holdWriter {
	return &holdWriter{w: w, header: http.Header{}}
}

func (h *holdWriter) Header() http.Header {
	if h.status != 0 && !h.hold {
		return h.w.Header()
	}
	return h.header
}

func (h *holdWriter) WriteHeader(code int) {
	if h.status != 0 {
		return
	}
	if code < 200 { // informational: passes through, decides nothing
		h.copyHeader()
		h.w.WriteHeader(code)
		return
	}
	h.status = code
	if code >= 500 {
		h.hold = true
		return
	}
	h.copyHeader()
	h.w.WriteHeader(code)
}

func (h *holdWriter) copyHeader() {
	for k, v := range h.header {
		h.w.Header()[k] = v
	}
}

func (h *holdWriter) Write(p []byte) (int, error) {
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
	}
	if h.hold {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	return h.w.Write(p)
}

// FlushError flushes what passed through; a withheld answer stays held.
func (h *holdWriter) FlushError() error {
	if h.hold {
		return nil
	}
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(h.w).Flush()
}

func (h *holdWriter) Flush() { _ = h.FlushError() }

func (h *holdWriter) Unwrap() http.ResponseWriter { return h.w }

// held says whether an error answer is withheld.
func (h *holdWriter) held() bool { return h.hold }

// flush writes a withheld answer, or the headers of a handler that wrote
// nothing.
func (h *holdWriter) flush() {
	switch {
	case h.hold:
		h.copyHeader()
		h.w.WriteHeader(h.status)
		_, _ = h.w.Write(h.buf)
	case h.status == 0:
		h.copyHeader()
	}
}

// retire is a Workspace that can say it will serve no more requests
// (a fleet's whose lease was lost), before the host closes it.
type retire interface{ Retired() bool }

// closedUnder says whether e's workspace began to close, or retired,
// since the request that holds it acquired it.
func (h *Host) closedUnder(e *entry) bool {
	h.mu.Lock()
	closing := e.closing != nil
	h.mu.Unlock()
	if closing {
		return true
	}
	rt, ok := e.ws.(retire)
	return ok && rt.Retired()
}

// serveAgain has r, whose workspace closed under it unanswered (or moved
// before it was served), served again by the outermost Retrying, or
// answers 503 with Retry-After when it cannot be.
func serveAgain(w http.ResponseWriter, r *http.Request, id string, cause error) {
	if st := retryFrom(r.Context()); st.canRetry() {
		st.again = true
		metrics.HostRequestRetries.WithLabelValues(retryServed).Inc()
		return
	}
	metrics.HostRequestRetries.WithLabelValues(retryRefused).Inc()
	msg := "workspace " + id + " closed under the request (a lease lost, a shutdown) before it was answered: retry"
	if cause != nil {
		msg = "workspace " + id + ": " + cause.Error() + "; retry"
	}
	w.Header().Set("Retry-After", strconv.Itoa(1))
	WriteError(w, apiError(codeUnavailable, msg))
}
