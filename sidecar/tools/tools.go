// Package tools implements the agent tools (read, ls, find, grep, write,
// edit, delete, exec, publish, expose, and checkpoint, restore, diff_checkpoint and
// undo over the core's checkpoints) over the filesystem core and the exec
// backends. The
// HTTP API and the MCP server are thin transports over Service; every limit,
// path check and error message lives here so both behave the same.
package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/archive"
	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Options bounds what one tool call may return or write. Zero fields take
// the defaults below.
type Options struct {
	MaxReadLines  int   // lines one read returns
	MaxReadBytes  int   // bytes one read returns
	MaxLineBytes  int   // longer lines are cut with a marker
	MaxWriteBytes int   // content one write or edit may produce
	MaxPage       int   // entries, paths or matches one call may return
	MaxGrepFile   int64 // grep skips larger files and says so
	MaxWalk       int   // entries find and grep visit before stopping
	// ExecOutputBytes caps stdout+stderr of the exec tool, whose output
	// goes back to a model in one piece.
	ExecOutputBytes int64
	// DefaultBackend runs exec calls that name none.
	DefaultBackend string
	// Audit queries the audit trail (sqlstore.Store.Audit); nil leaves
	// exec results without their changed paths and Audit unavailable.
	Audit func(ctx context.Context, f sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error)
	// KeepFinished is how many finished execs stay listed.
	KeepFinished int
	// Publish makes a public link to a workspace path for actor; nil
	// makes the publish tool report that no public listener runs.
	Publish func(ctx context.Context, actor, path string, ttl time.Duration) (string, error)
	// Previews gives ports of the container preview URLs (the expose
	// tool); nil makes expose report that previews are not available.
	Previews *preview.Registry
	// Egress is the dialer of the execs' connections, under the
	// operator's network rules; exec calls that ask for allow_network are
	// refused while its current rules allow nothing (or it is nil): the
	// operator's word beats the caller's. Its rules may change while the
	// service runs (egress.Dialer.SetPolicy).
	Egress *egress.Dialer
	// AutoCheckpoint, when set, takes a checkpoint before every exec so it
	// can be undone, and bounds how many of those stay. Nil takes none.
	AutoCheckpoint *CheckpointRetention
	// Admit, when set, is asked before an exec on backend starts: an
	// error refuses it (a host's --max-containers), release ends it.
	Admit func(backend string) (release func(), err error)
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxReadLines, 2000)
	def(&o.MaxReadBytes, 256<<10)
	def(&o.MaxLineBytes, 2000)
	def(&o.MaxWriteBytes, 10<<20)
	def(&o.MaxPage, 1000)
	def(&o.MaxWalk, 200_000)
	def(&o.KeepFinished, 100)
	if o.MaxGrepFile <= 0 {
		o.MaxGrepFile = 16 << 20
	}
	if o.ExecOutputBytes <= 0 {
		o.ExecOutputBytes = 256 << 10
	}
	if o.DefaultBackend == "" {
		o.DefaultBackend = "shell"
	}
	return o
}

// Service runs tool calls against one workspace.
type Service struct {
	view func(actor string) FS
	core *sfs.FS // for checkpoints; nil without (New)
	// coreAudit: opts.Audit is core's own (flush, then read its store).
	coreAudit bool
	backends  map[string]sidecar.Backend
	opts      Options
	flushes   flushRounds // the commits the watchers ask for

	mu       sync.Mutex
	running  map[string]*execEntry
	finished []*execEntry // oldest first, at most opts.KeepFinished
}

// New returns a Service. view returns the filesystem as seen by an actor,
// whose changes the core audits under that name (fs.FS.WithActor).
func New(view func(actor string) FS, backends map[string]sidecar.Backend, opts Options) *Service {
	return &Service{
		view:     view,
		backends: backends,
		opts:     opts.withDefaults(),
		running:  map[string]*execEntry{},
	}
}

// Backends lists the registered backend names.
func (s *Service) Backends() []string {
	names := make([]string, 0, len(s.backends))
	for n := range s.backends {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ErrNoAudit is returned by the audit queries when the Service has none.
var ErrNoAudit = errors.New("no audit trail configured")

// Audit returns the audit events f selects, oldest first, as the agent may
// see them: redact blanks hidden paths and leaves out events with nothing
// else to show. A page is filled past the events left out, so one shorter
// than f.Limit (default 1000) is the end of the trail, and the next page
// goes on after the last event's Seq.
func (s *Service) Audit(ctx context.Context, f sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error) {
	if f.Limit <= 0 {
		f.Limit = 1000 // sqlstore's default, which the filling must know
	}
	var out []sqlstore.AuditEvent
	for {
		ev, err := s.rawAudit(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, e := range ev {
			if e, ok := s.redact(e); ok {
				out = append(out, e)
				if len(out) == f.Limit {
					return out, nil
				}
			}
		}
		if len(ev) < f.Limit {
			return out, nil
		}
		f.AfterSeq = ev[len(ev)-1].Seq
	}
}

// rawAudit reads the audit trail unredacted, for what the Service works out
// from it (an exec's changes, undo's conflicts); what it tells the agent
// goes through redact.
func (s *Service) rawAudit(ctx context.Context, f sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error) {
	if s.opts.Audit == nil {
		return nil, ErrNoAudit
	}
	ev, err := s.opts.Audit(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return ev, nil
}

// Changes lists the workspace paths an exec changed, sorted: every path
// named by a successful audited operation of its actor, except the names
// tar -x wrote a member under and then renamed away (or removed on
// failure). A file left under such a name is listed: the name alone must
// not hide a change.
func (s *Service) Changes(ctx context.Context, execID string) ([]string, error) {
	return s.changesFrom(ctx, s.rawAudit, execID)
}

// execResultChanges is Changes for an exec's result. When nothing of the
// exec but bookkeeping (its automatic checkpoint's event) waits to be
// committed, the store already holds every change it made, and the list
// is read without forcing a commit: an exec that changed nothing then
// costs none.
func (s *Service) execResultChanges(ctx context.Context, execID string) ([]string, error) {
	if s.coreAudit && !s.core.Unflushed(Actor(execID), recordOnly) {
		return s.changesFrom(ctx, s.core.Store().Audit, execID)
	}
	return s.Changes(ctx, execID)
}

func (s *Service) changesFrom(ctx context.Context, audit auditFunc, execID string) ([]string, error) {
	ch, err := changes(ctx, audit, execID)
	if err != nil {
		return nil, err
	}
	paths := s.shown(ch.paths)
	slices.Sort(paths)
	return paths, nil
}

// recordOnly are the audited operations that change no path (fs.FS.Record
// and the checkpoint bookkeeping): not an exec's changes.
var recordOnly = map[string]bool{"publish": true, "download": true, "checkpoint": true, "checkpoint-delete": true, "checkpoint-list": true, "checkpoint-diff": true, "fork": true, "connect": true}

// changedPaths are the workspace paths a successful audit event changed:
// none for recordOnly operations, and a restore names its checkpoint in
// Path2.
func changedPaths(e sqlstore.AuditEvent) []string {
	switch {
	case e.Result != "ok" || recordOnly[e.Op]:
		return nil
	case e.Op == "restore" || e.Path2 == "":
		return []string{e.Path}
	}
	return []string{e.Path, e.Path2}
}

// execChanges is what the audit trail says an exec changed.
type execChanges struct {
	paths []string // workspace paths, sorted
	first int64    // sequence number of its first event, 0 without any
}

func changes(ctx context.Context, audit auditFunc, execID string) (execChanges, error) {
	var ch execChanges
	seen := map[string]bool{}
	tempGone := map[string]bool{} // temporary name → renamed away or removed by now
	f := sqlstore.AuditFilter{Actor: Actor(execID), Limit: 10_000}
	for {
		ev, err := audit(ctx, f)
		if err != nil {
			return ch, err
		}
		for _, e := range ev {
			if ch.first == 0 {
				ch.first = e.Seq
			}
			f.AfterSeq = e.Seq
			for i, p := range changedPaths(e) {
				if archive.IsTempName(p) {
					tempGone[p] = i == 0 && (e.Op == "rename" || e.Op == "unlink" || e.Op == "remove")
					continue
				}
				seen[p] = true
			}
		}
		if len(ev) < f.Limit {
			break
		}
	}
	for p, gone := range tempGone {
		if !gone {
			seen[p] = true
		}
	}
	ch.paths = make([]string, 0, len(seen))
	for p := range seen {
		ch.paths = append(ch.paths, p)
	}
	slices.Sort(ch.paths)
	return ch, nil
}

// page clamps a caller's offset and limit.
func (s *Service) page(offset, limit, def int) (int, int, error) {
	if offset < 0 || limit < 0 {
		return 0, 0, toolErr(CodeInvalid, nil, "offset and limit must not be negative")
	}
	if limit == 0 {
		limit = def
	}
	limit = min(limit, s.opts.MaxPage)
	// Past every page either way, and offset+limit cannot overflow into a
	// negative slice bound or next_offset.
	return min(offset, math.MaxInt-limit), limit, nil
}
