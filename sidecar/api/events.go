package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// heartbeat is how often an idle change stream says it is alive.
const heartbeat = 15 * time.Second

// ChangeLine is one line of the NDJSON stream of GET /v1/events: a
// "change"; "live" (seq: the stream has caught up, every later change
// comes as it is committed); "heartbeat" (seq: where the stream is, to
// resume after even when no change passed the filter); or "error", which
// ends the stream.
type ChangeLine struct {
	Type  string     `json:"type"`
	Seq   int64      `json:"seq"`
	Time  time.Time  `json:"time,omitzero"`
	Actor string     `json:"actor,omitempty"`
	Op    string     `json:"op,omitempty"`
	Path  string     `json:"path,omitempty"`
	Path2 string     `json:"path2,omitempty"`
	Error *ErrorBody `json:"error,omitempty"`
}

// eventsQuery reads GET /v1/events parameters: after (absent: from now
// on) and path_prefix.
func eventsQuery(r *http.Request) (tools.WatchOptions, error) {
	o := tools.WatchOptions{After: -1, Heartbeat: heartbeat}
	for k, v := range r.URL.Query() {
		if len(v) != 1 {
			return o, apiErr(tools.CodeInvalid, "parameter %s given %d times", k, len(v))
		}
		var err error
		switch k {
		case "after":
			o.After, err = strconv.ParseInt(v[0], 10, 64)
			if err == nil && o.After < 0 {
				err = errors.New("want a sequence number, 0 or more")
			}
		case "path_prefix":
			o.PathPrefix, err = AuditPathPrefix(v[0])
		default:
			return o, apiErr(tools.CodeInvalid, "unknown parameter %q; known: after, path_prefix", k)
		}
		if err != nil {
			return o, apiErr(tools.CodeInvalid, "parameter %s: %v", k, err)
		}
	}
	return o, nil
}

// WatchFunc streams changes as tools.Service.Watch does.
type WatchFunc func(ctx context.Context, o tools.WatchOptions, emit func(ev []tools.ChangeEvent, next int64) error) (int64, error)

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ServeEvents(w, r, s.opts.WriteTimeout, s.opts.Tools.Watch, WriteError)
}

// ServeEvents answers GET /v1/events with the changes watch streams; a
// failure before the first line is answered by writeErr, a later one is
// the stream's "error" line. A client too slow to take a line within
// writeTimeout is cut off; it resumes with after=.
func ServeEvents(w http.ResponseWriter, r *http.Request, writeTimeout time.Duration, watch WatchFunc, writeErr func(http.ResponseWriter, error)) {
	o, err := eventsQuery(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	started, live := false, false
	send := func(l ChangeLine) error {
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		return enc.Encode(l)
	}
	cursor, err := watch(r.Context(), o, func(ev []tools.ChangeEvent, next int64) error {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
		for _, e := range ev {
			if err := send(ChangeLine{Type: "change", Seq: e.Seq, Time: e.Time, Actor: e.Actor, Op: e.Op, Path: e.Path, Path2: e.Path2}); err != nil {
				return err
			}
		}
		if len(ev) == 0 {
			typ := "heartbeat"
			if !live {
				typ, live = "live", true
			}
			if err := send(ChangeLine{Type: typ, Seq: next}); err != nil {
				return err
			}
		}
		return rc.Flush()
	})
	if !started {
		writeErr(w, err)
		return
	}
	if err != nil && r.Context().Err() == nil {
		b, _ := ErrorOf(err)
		_ = send(ChangeLine{Type: "error", Seq: cursor, Error: &b})
		_ = rc.Flush()
	}
}

// Events streams the workspace's changes after o.After (negative: from
// now on) under o.PathPrefix to fn, one line at a time, until ctx ends,
// fn fails or the stream does: an "error" line comes back as its error.
func (c *Client) Events(ctx context.Context, o tools.WatchOptions, fn func(ChangeLine) error) error {
	q := url.Values{}
	if o.After >= 0 {
		q.Set("after", strconv.FormatInt(o.After, 10))
	}
	if o.PathPrefix != "" {
		q.Set("path_prefix", o.PathPrefix)
	}
	resp, err := c.request(ctx, http.MethodGet, "/v1/events?"+q.Encode(), "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var l ChangeLine
		if err := dec.Decode(&l); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("change stream: %w", err)
		}
		if l.Type == "error" && l.Error != nil {
			return &tools.Error{Code: l.Error.Code, Msg: l.Error.Message}
		}
		if err := fn(l); err != nil {
			return err
		}
	}
}
