package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Conn is a workspace as the sqlfs-exec commands use it: either the owner
// process over its socket (Client) or a store opened in-process (Local).
// Both give the same results and the same *tools.Error failures.
type Conn interface {
	// Exec runs a command, streaming its output to stdout and stderr.
	Exec(ctx context.Context, in tools.ExecInput, stdout, stderr io.Writer) (tools.ExecResult, error)
	// Call runs a tool with JSON arguments, decoded strictly.
	Call(ctx context.Context, tool string, args []byte) (Result, error)
	Execs(ctx context.Context) ([]tools.ExecInfo, error)
	Kill(ctx context.Context, id string) (tools.ExecInfo, error)
	Changes(ctx context.Context, execID string) ([]string, error)
	Audit(ctx context.Context, f sqlstore.AuditFilter) ([]AuditEvent, error)
	// Import unpacks a tar stream below dest; Export writes src as one.
	Import(ctx context.Context, dest string, tar io.Reader, opts tools.ImportOptions) (tools.ImportStats, error)
	Export(ctx context.Context, src string, tar io.Writer) error
	// The checkpoint operations; ref is a checkpoint's id or name.
	CreateCheckpoint(ctx context.Context, name string) (tools.CheckpointInfo, error)
	Checkpoints(ctx context.Context) ([]tools.CheckpointInfo, error)
	Restore(ctx context.Context, ref string) (tools.CheckpointInfo, error)
	// Diff compares checkpoint from with checkpoint to, or with the live
	// tree when to is "".
	Diff(ctx context.Context, from, to string) ([]tools.Change, error)
	DeleteCheckpoint(ctx context.Context, ref string) (tools.CheckpointInfo, error)
	// Fork writes a new store at dst, an absolute path on the owner's
	// host, from checkpoint ref or the live tree when ref is "".
	Fork(ctx context.Context, ref, dst string) error
	Undo(ctx context.Context, execID string) (tools.UndoResult, error)
	// Previews lists the live preview URLs; RevokePreview ends one by its
	// id (not its secret token).
	Previews(ctx context.Context) ([]preview.Preview, error)
	RevokePreview(ctx context.Context, id string) error
}

// Local is a Conn over an in-process Service.
type Local struct{ S *tools.Service }

var _ Conn = Local{}

func (l Local) Exec(ctx context.Context, in tools.ExecInput, stdout, stderr io.Writer) (tools.ExecResult, error) {
	return l.S.Exec(ctx, in, stdout, stderr, nil)
}

func (l Local) Call(ctx context.Context, name string, args []byte) (Result, error) {
	t, ok := findTool(name)
	if !ok {
		return Result{}, apiErr(codeUnknownTool, "no tool %q; tools: %v", name, ToolNames())
	}
	return t.call(ctx, l.S, args)
}

func (l Local) Execs(context.Context) ([]tools.ExecInfo, error) { return l.S.Execs(), nil }
func (l Local) Kill(_ context.Context, id string) (tools.ExecInfo, error) {
	return l.S.Kill(id)
}
func (l Local) Changes(ctx context.Context, id string) ([]string, error) {
	return l.S.Changes(ctx, id)
}
func (l Local) Audit(ctx context.Context, f sqlstore.AuditFilter) ([]AuditEvent, error) {
	ev, err := l.S.Audit(ctx, f)
	return toAPIEvents(ev), err
}
func (l Local) Import(ctx context.Context, dest string, r io.Reader, opts tools.ImportOptions) (tools.ImportStats, error) {
	return l.S.Import(ctx, dest, r, opts)
}
func (l Local) Export(ctx context.Context, src string, w io.Writer) error {
	return l.S.Export(ctx, src, w)
}

func (l Local) CreateCheckpoint(ctx context.Context, name string) (tools.CheckpointInfo, error) {
	return l.S.CreateCheckpoint(ctx, tools.CheckpointActor, name)
}
func (l Local) Checkpoints(ctx context.Context) ([]tools.CheckpointInfo, error) {
	return l.S.ListCheckpoints(ctx, tools.CheckpointActor)
}
func (l Local) Restore(ctx context.Context, ref string) (tools.CheckpointInfo, error) {
	return l.S.RestoreCheckpoint(ctx, tools.CheckpointActor, ref)
}
func (l Local) Diff(ctx context.Context, from, to string) ([]tools.Change, error) {
	return l.S.DiffCheckpoints(ctx, tools.CheckpointActor, from, to)
}
func (l Local) DeleteCheckpoint(ctx context.Context, ref string) (tools.CheckpointInfo, error) {
	return l.S.DeleteCheckpoint(ctx, tools.CheckpointActor, ref)
}
func (l Local) Fork(ctx context.Context, ref, dst string) error {
	return l.S.Fork(ctx, tools.ForkActor, ref, dst)
}
func (l Local) Undo(ctx context.Context, id string) (tools.UndoResult, error) {
	return l.S.Undo(ctx, tools.UndoActor, id)
}
func (l Local) Previews(context.Context) ([]preview.Preview, error) { return l.S.Previews(), nil }
func (l Local) RevokePreview(_ context.Context, id string) error {
	return l.S.RevokePreview(previewActor, id)
}

// Client talks to an owner's API.
type Client struct {
	hc     *http.Client
	base   string
	token  string
	prefix string // "/v1/workspaces/ID" for a workspace of a host
}

var _ Conn = (*Client)(nil)

// DialWait is how long a Client's connection (the first, Dial's, and any
// later one) waits for a Unix socket that is not there yet or refuses
// connections: an owner names its socket when it takes the store and
// serves it only once the store is open and mounted, so a client started
// beside it must not fail in between.
const DialWait = 5 * time.Second

// Dial connects to an owner at addr: "unix:PATH", a socket path, or
// HOST:PORT (token then required), and checks that it answers.
func Dial(ctx context.Context, addr, token string) (*Client, error) {
	return DialWorkspace(ctx, addr, "", token)
}

// DialWorkspace connects to workspace id of the host at addr (sqlfs-exec
// serve --workspaces), whose routes are those of a single-store owner
// under /v1/workspaces/ID; an empty id is Dial. A host URL may start with
// http://.
func DialWorkspace(ctx context.Context, addr, id, token string) (*Client, error) {
	tr := &http.Transport{MaxIdleConns: 4, IdleConnTimeout: time.Minute}
	c := &Client{hc: &http.Client{Transport: tr}, token: token}
	if id != "" {
		c.prefix = "/v1/workspaces/" + url.PathEscape(id)
	}
	if tcp, ok := strings.CutPrefix(addr, "http://"); ok {
		c.base = "http://" + tcp
	} else if sock, ok := unixPath(addr); ok {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialUnix(ctx, sock)
		}
		c.base = "http://sqlfs"
	} else {
		c.base = "http://" + addr
	}
	var h Health
	if err := c.do(ctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
		return nil, fmt.Errorf("owner at %s: %w", addr, err)
	}
	return c, nil
}

// dialUnix connects to socket sock, waiting up to DialWait for it to
// appear and accept.
func dialUnix(ctx context.Context, sock string) (net.Conn, error) {
	var d net.Dialer
	deadline := time.Now().Add(DialWait)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		conn, err := d.DialContext(ctx, "unix", sock)
		starting := errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
		left := time.Until(deadline)
		if err == nil || !starting || left <= 0 {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(min(pause, left)):
		}
	}
}

// unixPath says whether addr names a Unix socket and which.
func unixPath(addr string) (string, bool) {
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		return p, true
	}
	// A bare name is a socket path too unless it is HOST:PORT: "ws.db.sock"
	// must never turn into a DNS lookup.
	return addr, strings.ContainsRune(addr, '/') || !strings.ContainsRune(addr, ':')
}

// Close drops idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

func (c *Client) request(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	if c.prefix != "" {
		path = c.prefix + strings.TrimPrefix(path, "/v1")
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

// readError turns an error response back into the *tools.Error the server
// had, so callers test codes the same way for Local and Client.
func readError(resp *http.Response) error {
	var e struct {
		Error ErrorBody `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		return fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return &tools.Error{Code: e.Error.Code, Msg: e.Error.Message}
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	ct := ""
	if body != nil {
		ct = "application/json"
	}
	resp, err := c.request(ctx, method, path, ct, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// Exec runs a command on the owner, streaming its output as it comes.
// Cancelling ctx disconnects, which makes the owner cancel the command.
func (c *Client) Exec(ctx context.Context, in tools.ExecInput, stdout, stderr io.Writer) (tools.ExecResult, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return tools.ExecResult{}, err
	}
	resp, err := c.request(ctx, http.MethodPost, "/v1/exec", "application/json", bytes.NewReader(b))
	if err != nil {
		return tools.ExecResult{}, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev Event
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return tools.ExecResult{}, ctx.Err()
			}
			return tools.ExecResult{}, fmt.Errorf("exec stream ended before the exit event: %w", err)
		}
		switch ev.Type {
		case "stdout", "stderr":
			w := stdout
			if ev.Type == "stderr" {
				w = stderr
			}
			if w == nil {
				continue
			}
			data := ev.DataB64
			if data == nil {
				data = []byte(ev.Data)
			}
			if _, err := w.Write(data); err != nil {
				return tools.ExecResult{}, fmt.Errorf("exec %s output: %w", ev.Type, err)
			}
		case "exit":
			if ev.ExecResult == nil {
				return tools.ExecResult{}, errors.New("exec exit event without a result")
			}
			res := *ev.ExecResult
			res.ID = ev.ID // the event's id shadows the result's in JSON
			return res, nil
		case "error":
			if ev.Error == nil {
				return tools.ExecResult{}, errors.New("exec error event without an error")
			}
			return tools.ExecResult{}, &tools.Error{Code: ev.Error.Code, Msg: ev.Error.Message}
		}
	}
}

// Call runs a tool on the owner.
func (c *Client) Call(ctx context.Context, name string, args []byte) (Result, error) {
	resp, err := c.request(ctx, http.MethodPost, "/v1/tools/"+url.PathEscape(name), "application/json", bytes.NewReader(args))
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close()
	var r Result
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return Result{}, fmt.Errorf("tool %s: decoding the answer: %w", name, err)
	}
	return r, nil
}

func (c *Client) Execs(ctx context.Context) ([]tools.ExecInfo, error) {
	var out struct {
		Execs []tools.ExecInfo `json:"execs"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/execs", nil, &out)
	return out.Execs, err
}

func (c *Client) Kill(ctx context.Context, id string) (tools.ExecInfo, error) {
	var out tools.ExecInfo
	err := c.do(ctx, http.MethodPost, "/v1/execs/"+url.PathEscape(id)+"/kill", nil, &out)
	return out, err
}

func (c *Client) Changes(ctx context.Context, id string) ([]string, error) {
	var out struct {
		Changed []string `json:"changed"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/execs/"+url.PathEscape(id)+"/changes", nil, &out)
	return out.Changed, err
}

func (c *Client) Audit(ctx context.Context, f sqlstore.AuditFilter) ([]AuditEvent, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("actor", f.Actor)
	set("actor_prefix", f.ActorPrefix)
	set("op", f.Op)
	// The API takes tool paths; the filter holds a workspace path.
	set("path_prefix", f.PathPrefix)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	if f.AfterSeq > 0 {
		q.Set("after_seq", strconv.FormatInt(f.AfterSeq, 10))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out struct {
		Events []AuditEvent `json:"events"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/audit?"+q.Encode(), nil, &out)
	return out.Events, err
}

func (c *Client) Import(ctx context.Context, dest string, r io.Reader, opts tools.ImportOptions) (tools.ImportStats, error) {
	var st tools.ImportStats
	q := url.Values{"dest": {dest}}
	if opts.SkipSpecial {
		q.Set("skip_special", "true")
	}
	resp, err := c.request(ctx, http.MethodPost, "/v1/import?"+q.Encode(), "application/x-tar", r)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("import: decoding the answer: %w", err)
	}
	return st, nil
}

func (c *Client) Export(ctx context.Context, src string, w io.Writer) error {
	resp, err := c.request(ctx, http.MethodGet, "/v1/export?"+url.Values{"src": {src}}.Encode(), "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	// The trailer is only readable after the body.
	if msg := resp.Trailer.Get(trailerErr); msg != "" {
		code, text, _ := strings.Cut(msg, ": ")
		return &tools.Error{Code: tools.Code(code), Msg: text}
	}
	return nil
}

// checkpointPath is the endpoint of checkpoint ref; a name may hold any
// byte, "/" included.
func checkpointPath(ref, op string) (string, error) {
	if ref == "" {
		return "", &tools.Error{Code: tools.CodeInvalid, Msg: "no checkpoint given: pass its id or name"}
	}
	return "/v1/checkpoints/" + url.PathEscape(ref) + op, nil
}

func (c *Client) CreateCheckpoint(ctx context.Context, name string) (tools.CheckpointInfo, error) {
	var out tools.CheckpointInfo
	err := c.do(ctx, http.MethodPost, "/v1/checkpoints", tools.CheckpointInput{Name: name}, &out)
	return out, err
}

func (c *Client) Checkpoints(ctx context.Context) ([]tools.CheckpointInfo, error) {
	var out struct {
		Checkpoints []tools.CheckpointInfo `json:"checkpoints"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/checkpoints", nil, &out)
	return out.Checkpoints, err
}

func (c *Client) Restore(ctx context.Context, ref string) (tools.CheckpointInfo, error) {
	var out tools.RestoreOutput
	p, err := checkpointPath(ref, "/restore")
	if err == nil {
		err = c.do(ctx, http.MethodPost, p, nil, &out)
	}
	return out.Restored, err
}

func (c *Client) Diff(ctx context.Context, from, to string) ([]tools.Change, error) {
	var out struct {
		Changes []tools.Change `json:"changes"`
	}
	p, err := checkpointPath(from, "/diff")
	if err == nil {
		if to != "" {
			p += "?" + url.Values{"to": {to}}.Encode()
		}
		err = c.do(ctx, http.MethodGet, p, nil, &out)
	}
	return out.Changes, err
}

func (c *Client) DeleteCheckpoint(ctx context.Context, ref string) (tools.CheckpointInfo, error) {
	var out tools.CheckpointInfo
	p, err := checkpointPath(ref, "")
	if err == nil {
		err = c.do(ctx, http.MethodDelete, p, nil, &out)
	}
	return out, err
}

// ForkInput is the body of POST /v1/fork.
type ForkInput struct {
	Checkpoint string `json:"checkpoint,omitempty"`
	Store      string `json:"store"`
}

func (c *Client) Fork(ctx context.Context, ref, dst string) error {
	var out ForkInput
	return c.do(ctx, http.MethodPost, "/v1/fork", ForkInput{Checkpoint: ref, Store: dst}, &out)
}

func (c *Client) Undo(ctx context.Context, id string) (tools.UndoResult, error) {
	var out tools.UndoResult
	err := c.do(ctx, http.MethodPost, "/v1/execs/"+url.PathEscape(id)+"/undo", nil, &out)
	return out, err
}

func (c *Client) Previews(ctx context.Context) ([]preview.Preview, error) {
	var out struct {
		Previews []preview.Preview `json:"previews"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/previews", nil, &out)
	return out.Previews, err
}

func (c *Client) RevokePreview(ctx context.Context, id string) error {
	resp, err := c.request(ctx, http.MethodDelete, "/v1/previews/"+url.PathEscape(id), "", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
