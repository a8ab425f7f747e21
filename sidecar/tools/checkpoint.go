package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Actors of the checkpoint operations that do not come from a tool call
// or an exec (the CLI and the HTTP endpoints).
const (
	CheckpointActor = "checkpoint"
	UndoActor       = "undo"
	ForkActor       = "fork"
)

// CheckpointRetention bounds the automatic checkpoints (taken before each
// exec); zero fields turn a bound off. Named checkpoints stay until
// deleted.
type CheckpointRetention struct {
	Keep   int           // the newest Keep automatic checkpoints stay
	MaxAge time.Duration // older automatic checkpoints go
}

// DefaultCheckpointRetention is what an owner keeps unless told otherwise.
var DefaultCheckpointRetention = CheckpointRetention{Keep: 100, MaxAge: 24 * time.Hour}

// CheckpointInfo describes a checkpoint in results and the API.
type CheckpointInfo struct {
	ID      string    `json:"id"`
	Name    string    `json:"name,omitempty"`
	Created time.Time `json:"created"`
	// Auto: taken before exec Exec; retention removes it in time.
	Auto bool   `json:"auto,omitempty"`
	Exec string `json:"exec,omitempty"`
}

func (c CheckpointInfo) String() string {
	if c.Name == "" {
		return c.ID
	}
	return c.ID + " (" + c.Name + ")"
}

func checkpointInfo(c sfs.CheckpointInfo) CheckpointInfo {
	return CheckpointInfo{ID: strconv.FormatInt(c.ID, 10), Name: c.Name, Created: c.Time, Auto: c.Auto, Exec: c.ExecID}
}

// Change is one line of a checkpoint diff: Status is A, M or D as in
// git's name-status, Path a workspace path as the tools print it.
type Change struct {
	Status string `json:"status" jsonschema:"A added, M modified, D deleted"`
	Path   string `json:"path"`
}

// NameStatus renders changes as git diff --name-status does.
func NameStatus(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.Status + "\t" + c.Path + "\n")
	}
	return b.String()
}

// errNoCheckpoints is the cause when the Service has no core to take
// checkpoints of.
var errNoCheckpoints = errors.New("this workspace has no checkpoints")

func (s *Service) checkpoints() (*sfs.FS, error) {
	if s.core == nil {
		return nil, toolErr(CodeInternal, errNoCheckpoints, "%v", errNoCheckpoints)
	}
	return s.core, nil
}

// observe records one checkpoint operation in the metrics.
func observe(op string, start time.Time, err error) {
	metrics.CheckpointOp(op, time.Since(start), err)
}

// checkpointErr classifies a core error about checkpoint ref.
func (s *Service) checkpointErr(err error, ref string) error {
	var refused *sfs.RestoreRefusedError
	switch {
	case errors.Is(err, sfs.ErrCheckpointNotFound):
		return toolErr(CodeNoCheckpoint, err, "no checkpoint %q: list them with sqlfs-exec checkpoint list", ref)
	case errors.Is(err, sfs.ErrCheckpointExists):
		return toolErr(CodeExists, err, "a checkpoint named %q exists already", ref)
	case errors.Is(err, sfs.ErrBadCheckpointRef):
		return toolErr(CodeInvalid, err, "%v", err)
	case errors.As(err, &refused):
		return toolErr(CodeDenied, err, "refused by policy: it would change read-only or hidden paths: %s", strings.Join(s.displayShown(refused.Paths), ", "))
	}
	return classify(err)
}

// displayShown is display of each path the policy shows; hidden ones are
// only counted, so that no route names them.
func (s *Service) displayShown(paths []string) []string {
	out := s.shown(paths)
	if n := len(paths) - len(out); n > 0 {
		out = append(out, fmt.Sprintf("%d hidden", n))
	}
	return out
}

// shown is display of each path the policy shows.
func (s *Service) shown(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !s.hidden(p) {
			out = append(out, display(p))
		}
	}
	return out
}

// hidden says whether the policy hides workspace path p from the agent
// (fs.FS.Hidden, which redact applies to audit events).
func (s *Service) hidden(p string) bool { return s.core != nil && s.core.Hidden(p) }

// resolveCheckpoint finds checkpoint ref (an id or a name).
func (s *Service) resolveCheckpoint(ctx context.Context, ref string) (*sfs.FS, sfs.CheckpointInfo, error) {
	core, err := s.checkpoints()
	if err != nil {
		return nil, sfs.CheckpointInfo{}, err
	}
	if ref == "" {
		return nil, sfs.CheckpointInfo{}, toolErr(CodeInvalid, nil, "no checkpoint given: pass its id or name")
	}
	c, err := core.ResolveCheckpoint(ctx, ref)
	if err != nil {
		return nil, c, s.checkpointErr(err, ref)
	}
	return core, c, nil
}

// CreateCheckpoint takes a checkpoint of the whole workspace, named name
// (optional, unique), in actor's name.
func (s *Service) CreateCheckpoint(ctx context.Context, actor, name string) (CheckpointInfo, error) {
	return s.checkpoint(ctx, actor, "create", sfs.CheckpointOptions{Name: name})
}

func (s *Service) checkpoint(ctx context.Context, actor, op string, o sfs.CheckpointOptions) (info CheckpointInfo, err error) {
	start := time.Now()
	defer func() { observe(op, start, err) }()
	core, err := s.checkpoints()
	if err != nil {
		return CheckpointInfo{}, err
	}
	c, err := core.WithActor(actor).Checkpoint(ctx, o)
	if err != nil {
		return CheckpointInfo{}, s.checkpointErr(err, o.Name)
	}
	return checkpointInfo(c), nil
}

// ListCheckpoints lists every checkpoint, oldest first, in actor's name.
func (s *Service) ListCheckpoints(ctx context.Context, actor string) ([]CheckpointInfo, error) {
	core, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	return listCheckpoints(core.WithActor(actor).Checkpoints(ctx))
}

func listCheckpoints(cs []sfs.CheckpointInfo, err error) ([]CheckpointInfo, error) {
	if err != nil {
		return nil, classify(err)
	}
	out := make([]CheckpointInfo, len(cs))
	for i, c := range cs {
		out[i] = checkpointInfo(c)
	}
	return out, nil
}

// RestoreCheckpoint replaces the live tree with checkpoint ref's.
func (s *Service) RestoreCheckpoint(ctx context.Context, actor, ref string) (CheckpointInfo, error) {
	return s.onCheckpoint(ctx, "restore", ref, func(core *sfs.FS, id string) error {
		return core.WithActor(actor).Restore(ctx, id)
	})
}

// onCheckpoint resolves ref and runs op on it, by id: a name could move to
// another checkpoint meanwhile.
func (s *Service) onCheckpoint(ctx context.Context, op, ref string, fn func(core *sfs.FS, id string) error) (info CheckpointInfo, err error) {
	start := time.Now()
	defer func() { observe(op, start, err) }()
	core, c, err := s.resolveCheckpoint(ctx, ref)
	if err != nil {
		return CheckpointInfo{}, err
	}
	info = checkpointInfo(c)
	if err := fn(core, info.ID); err != nil {
		return CheckpointInfo{}, s.checkpointErr(err, ref)
	}
	return info, nil
}

// DiffCheckpoints lists what changed from checkpoint from to checkpoint
// to, or to the live tree when to is "", sorted by path, in actor's name.
func (s *Service) DiffCheckpoints(ctx context.Context, actor, from, to string) (changes []Change, err error) {
	start := time.Now()
	defer func() { observe("diff", start, err) }()
	core, err := s.checkpoints()
	if err != nil {
		return nil, err
	}
	if from == "" {
		return nil, toolErr(CodeInvalid, nil, "no checkpoint given to diff from: pass its id or name")
	}
	ds, err := core.WithActor(actor).Diff(ctx, from, to)
	if err != nil {
		// Name the side that failed.
		ref := from
		if _, rerr := core.ResolveCheckpoint(ctx, from); rerr == nil {
			ref = to
		}
		return nil, s.checkpointErr(err, ref)
	}
	changes = make([]Change, len(ds))
	for i, d := range ds {
		changes[i] = Change{Status: string(d.Status), Path: display(d.Path)}
	}
	// display drops the leading "/": sort what is printed.
	slices.SortFunc(changes, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return changes, nil
}

// DeleteCheckpoint removes checkpoint ref; the data only it kept is freed
// in the background.
func (s *Service) DeleteCheckpoint(ctx context.Context, actor, ref string) (CheckpointInfo, error) {
	return s.onCheckpoint(ctx, "delete", ref, func(core *sfs.FS, id string) error {
		return core.WithActor(actor).DeleteCheckpoint(ctx, id)
	})
}

// Fork writes a new, independent store at dst (an absolute host path that
// must not exist) holding checkpoint ref's tree, or the live tree when ref
// is "".
func (s *Service) Fork(ctx context.Context, actor, ref, dst string) (err error) {
	start := time.Now()
	defer func() { observe("fork", start, err) }()
	core, err := s.checkpoints()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(dst) {
		return toolErr(CodeInvalid, nil, "fork target %q is not an absolute path", dst)
	}
	if err := core.WithActor(actor).Fork(ctx, ref, dst); err != nil {
		return s.checkpointErr(err, ref)
	}
	return nil
}

// autoCheckpoint takes the checkpoint before exec id. A failure is logged
// and leaves the exec without one (it runs, but cannot be undone): the
// command matters more than its safety net. fresh is false when the core
// gave the newest checkpoint again (nothing changed since it), so that
// retention has nothing new to prune.
func (s *Service) autoCheckpoint(ctx context.Context, id string) (ref string, fresh bool) {
	info, err := s.checkpoint(ctx, Actor(id), "auto", sfs.CheckpointOptions{Auto: true, ExecID: id})
	if err != nil {
		slog.Warn("automatic checkpoint before exec failed; it cannot be undone", "exec", id, "err", err)
		return "", false
	}
	return info.ID, info.Exec == id
}

// pruneCheckpoints deletes the automatic checkpoints retention no longer
// keeps: beyond the newest Keep, or older than MaxAge.
func (s *Service) pruneCheckpoints(ctx context.Context) {
	r := s.opts.AutoCheckpoint
	// Retention's own listing is bookkeeping, not an operation to audit.
	all, err := listCheckpoints(s.core.Store().Checkpoints(ctx))
	if err != nil {
		slog.Warn("checkpoint retention", "err", err)
		return
	}
	var auto []CheckpointInfo
	for _, c := range all {
		if c.Auto {
			auto = append(auto, c)
		}
	}
	now := time.Now()
	for i, c := range auto {
		young := r.MaxAge <= 0 || now.Sub(c.Created) <= r.MaxAge
		fits := r.Keep <= 0 || len(auto)-i <= r.Keep
		if young && fits {
			break // auto is oldest first: the rest stay too
		}
		if _, err := s.DeleteCheckpoint(ctx, CheckpointActor, c.ID); err != nil && !errors.Is(err, sfs.ErrCheckpointNotFound) {
			slog.Warn("checkpoint retention", "checkpoint", c.ID, "err", err)
		}
	}
}

// execCheckpoint finds the automatic checkpoint taken before exec id: the
// audit's checkpoint event of the exec names it (several execs in a row
// that changed nothing share one).
func (s *Service) execCheckpoint(ctx context.Context, id string) (CheckpointInfo, error) {
	missing := toolErr(CodeNoCheckpoint, nil, "exec %q has no checkpoint to undo it from: it never ran here, ran without automatic checkpoints, or its checkpoint was removed by retention (--checkpoint-keep, --checkpoint-max-age)", id)
	ev, err := s.rawAudit(ctx, sqlstore.AuditFilter{Actor: Actor(id), Op: "checkpoint", Limit: 1})
	if err != nil {
		return CheckpointInfo{}, err
	}
	if len(ev) == 0 || ev[0].Result != "ok" {
		return CheckpointInfo{}, missing
	}
	ref, ok := strings.CutPrefix(ev[0].Path2, "checkpoint:")
	if !ok {
		return CheckpointInfo{}, missing
	}
	core, err := s.checkpoints()
	if err != nil {
		return CheckpointInfo{}, err
	}
	c, err := core.ResolveCheckpoint(ctx, ref)
	if errors.Is(err, sfs.ErrCheckpointNotFound) {
		return CheckpointInfo{}, missing
	}
	if err != nil {
		return CheckpointInfo{}, s.checkpointErr(err, ref)
	}
	return checkpointInfo(c), nil
}

// UndoResult is what undo put back.
type UndoResult struct {
	Exec       string   `json:"exec"`
	Checkpoint string   `json:"checkpoint" jsonschema:"the automatic checkpoint taken before the exec, which the paths were restored from"`
	Restored   []string `json:"restored" jsonschema:"the paths the exec changed, now as they were before it"`
}

// Text is the result as a model reads it.
func (u UndoResult) Text() string {
	if len(u.Restored) == 0 {
		return fmt.Sprintf("exec %s changed nothing: nothing to undo\n", u.Exec)
	}
	return fmt.Sprintf("undid exec %s: restored %d path(s) from checkpoint %s: %s\n", u.Exec, len(u.Restored), u.Checkpoint, strings.Join(u.Restored, ", "))
}

// Undo puts back exactly the paths exec id changed as they were before it,
// from the automatic checkpoint taken before it. It refuses, naming them,
// when anyone else changed one of those paths (or a path above or below
// one) since that checkpoint: their work would be lost.
func (s *Service) Undo(ctx context.Context, actor, id string) (res UndoResult, err error) {
	start := time.Now()
	defer func() { observe("undo", start, err) }()
	res.Exec = id
	core, err := s.checkpoints()
	if err != nil {
		return res, err
	}
	if id == "" {
		return res, toolErr(CodeInvalid, nil, "no exec id given")
	}
	if info, err := s.ExecInfo(id); err == nil && info.Running {
		return res, toolErr(CodeConflict, nil, "exec %s is still running: kill it or wait for it to end before undoing it", id)
	}
	c, err := s.execCheckpoint(ctx, id)
	if err != nil {
		return res, err
	}
	res.Checkpoint = c.ID
	ch, err := changes(ctx, s.rawAudit, id)
	if err != nil {
		return res, err
	}
	if len(ch.paths) == 0 {
		return res, nil
	}
	// The events up to now are read beside the workspace; those after,
	// within the restore's own step, so none can land unseen between the
	// check and the restore.
	var seen int64
	check := func(ctx context.Context, audit auditFunc) error {
		conflicts, last, err := laterChanges(ctx, audit, ch, Actor(id), max(seen, ch.first), s.hidden)
		seen = last
		if err != nil {
			return err
		}
		if len(conflicts) > 0 {
			return toolErr(CodeConflict, nil, "exec %s cannot be undone: its paths were changed after it by others, whose work undo would lose: %s",
				id, strings.Join(conflicts, ", "))
		}
		return nil
	}
	if err := check(ctx, s.rawAudit); err != nil {
		return res, err
	}
	if err := core.WithActor(actor).RestorePathsIf(ctx, c.ID, ch.paths, func(ctx context.Context) error {
		return check(ctx, core.Store().Audit)
	}); err != nil {
		return res, s.checkpointErr(err, c.ID)
	}
	res.Restored = s.shown(ch.paths)
	return res, nil
}

// auditFunc reads audit events.
type auditFunc func(context.Context, sqlstore.AuditFilter) ([]sqlstore.AuditEvent, error)

// laterChanges lists, as "path (actor)", the changes other actors than
// self made after event after to a path of ch, or above or below one:
// undoing ch would overwrite them. last is the newest event read.
func laterChanges(ctx context.Context, audit auditFunc, ch execChanges, self string, after int64, hidden func(string) bool) (conflicts []string, last int64, err error) {
	mine := make(map[string]bool, len(ch.paths))
	for _, p := range ch.paths {
		mine[p] = true
	}
	related := func(p string) bool {
		for a := p; ; a = path.Dir(a) {
			if mine[a] {
				return true // p is one of ch's paths or below one
			}
			if a == "/" {
				break
			}
		}
		// Above one: the first path sorting after p+"/" starts with it.
		below := strings.TrimSuffix(p, "/") + "/"
		i, _ := slices.BinarySearch(ch.paths, below)
		return i < len(ch.paths) && strings.HasPrefix(ch.paths[i], below)
	}
	found := map[string]bool{}
	f := sqlstore.AuditFilter{AfterSeq: after, Limit: 10_000}
	for {
		ev, err := audit(ctx, f)
		if err != nil {
			return nil, f.AfterSeq, err
		}
		for _, e := range ev {
			f.AfterSeq = e.Seq
			if e.Actor == self {
				continue
			}
			for _, p := range changedPaths(e) {
				switch {
				case !related(p):
				case hidden(p): // still a conflict, but not one to name
					found["a hidden path ("+e.Actor+")"] = true
				default:
					found[display(p)+" ("+e.Actor+")"] = true
				}
			}
		}
		if len(ev) < f.Limit {
			break
		}
	}
	conflicts = make([]string, 0, len(found))
	for p := range found {
		conflicts = append(conflicts, p)
	}
	slices.Sort(conflicts)
	return conflicts, f.AfterSeq, nil
}

// CheckpointInput is the checkpoint tool's argument.
type CheckpointInput struct {
	Name string `json:"name,omitempty" jsonschema:"optional unique name to find the checkpoint by later (any id argument takes it too)"`
}

// CheckpointOutput is the checkpoint tool's result.
type CheckpointOutput struct {
	CheckpointInfo
}

// Text is the result as a model reads it.
func (o CheckpointOutput) Text() string {
	return fmt.Sprintf("created checkpoint %s: restore it to go back to the workspace as it is now\n", o.CheckpointInfo)
}

// CheckpointTool runs the checkpoint tool.
func (s *Service) CheckpointTool(ctx context.Context, in CheckpointInput) (CheckpointOutput, error) {
	info, err := s.CreateCheckpoint(ctx, "tool:checkpoint", in.Name)
	return CheckpointOutput{info}, err
}

// RestoreInput is the restore tool's argument.
type RestoreInput struct {
	Checkpoint string `json:"checkpoint" jsonschema:"id or name of the checkpoint to restore"`
}

// RestoreOutput is the restore tool's result.
type RestoreOutput struct {
	Restored CheckpointInfo `json:"restored"`
}

// Text is the result as a model reads it.
func (o RestoreOutput) Text() string {
	return fmt.Sprintf("restored the whole workspace to checkpoint %s\n", o.Restored)
}

// RestoreTool runs the restore tool.
func (s *Service) RestoreTool(ctx context.Context, in RestoreInput) (RestoreOutput, error) {
	info, err := s.RestoreCheckpoint(ctx, "tool:restore", in.Checkpoint)
	return RestoreOutput{info}, err
}

// DiffInput is the diff_checkpoint tool's argument.
type DiffInput struct {
	From   string `json:"from" jsonschema:"id or name of the checkpoint to compare from"`
	To     string `json:"to,omitempty" jsonschema:"id or name of the checkpoint to compare to (default: the workspace as it is now)"`
	Offset int    `json:"offset,omitempty" jsonschema:"changes to skip, for the next page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"changes to return (default and maximum 1000)"`
}

// DiffOutput is the diff_checkpoint tool's result.
type DiffOutput struct {
	Changes    []Change `json:"changes"`
	Total      int      `json:"total"`
	NextOffset int      `json:"next_offset,omitempty" jsonschema:"offset of the next page, when there is one"`
}

// Text is the result as a model reads it.
func (o DiffOutput) Text() string {
	if o.Total == 0 {
		return "no changes\n"
	}
	text := NameStatus(o.Changes)
	if o.NextOffset > 0 {
		text += fmt.Sprintf("[%d of %d changes; pass offset %d for more]\n", len(o.Changes), o.Total, o.NextOffset)
	}
	return text
}

// DiffTool runs the diff_checkpoint tool.
func (s *Service) DiffTool(ctx context.Context, in DiffInput) (DiffOutput, error) {
	offset, limit, err := s.page(in.Offset, in.Limit, s.opts.MaxPage)
	if err != nil {
		return DiffOutput{}, err
	}
	all, err := s.DiffCheckpoints(ctx, "tool:diff_checkpoint", in.From, in.To)
	if err != nil {
		return DiffOutput{}, err
	}
	out := DiffOutput{Total: len(all), Changes: all[min(offset, len(all)):min(offset+limit, len(all))]}
	if offset+limit < len(all) {
		out.NextOffset = offset + limit
	}
	return out, nil
}

// UndoInput is the undo tool's argument.
type UndoInput struct {
	Exec string `json:"exec_id" jsonschema:"id of the exec to undo, as its result gave it"`
}

// UndoTool runs the undo tool.
func (s *Service) UndoTool(ctx context.Context, in UndoInput) (UndoResult, error) {
	return s.Undo(ctx, "tool:undo", in.Exec)
}

// CheckpointOp runs a checkpoint operation with JSON arguments and result,
// for callers across a process or language boundary (sqlfs:checkpoint in
// the js backend): create {name}, list {}, restore {checkpoint}, diff
// {from, to}, delete {checkpoint} and undo {exec_id}, in actor's name.
func (s *Service) CheckpointOp(ctx context.Context, actor, op string, args []byte) ([]byte, error) {
	var in struct {
		Name       string `json:"name"`
		Checkpoint string `json:"checkpoint"`
		From       string `json:"from"`
		To         string `json:"to"`
		Exec       string `json:"exec_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, toolErr(CodeInvalid, err, "%s: arguments: %v", op, err)
	}
	var out any
	var err error
	switch op {
	case "create":
		out, err = s.CreateCheckpoint(ctx, actor, in.Name)
	case "list":
		out, err = s.ListCheckpoints(ctx, actor)
	case "restore":
		out, err = s.RestoreCheckpoint(ctx, actor, in.Checkpoint)
	case "diff":
		out, err = s.DiffCheckpoints(ctx, actor, in.From, in.To)
	case "delete":
		out, err = s.DeleteCheckpoint(ctx, actor, in.Checkpoint)
	case "undo":
		out, err = s.Undo(ctx, actor, in.Exec)
	default:
		return nil, toolErr(CodeInvalid, nil, "no checkpoint operation %q", op)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
