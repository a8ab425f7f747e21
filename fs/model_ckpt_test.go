package fs_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// The model of checkpoints: each one a copy of the model's tree. An
// object's identity (which inode it is) survives copying, so a restore
// can tell which open handles keep their file (restored in place) and
// which hold one the checkpoint never had (unlinked, kept while open).

type mckpt struct {
	id, name string
	paths    map[string]*mobj
}

type ckptModel struct {
	list  []mckpt
	ident map[*mobj]int // identity of objects a checkpoint holds a copy of
	idOf  map[*mobj]int // a copy's identity
	next  int
	forks int
}

// copyTree copies paths, keeping hard links shared and every object's
// identity.
func (c *ckptModel) copyTree(paths map[string]*mobj) map[string]*mobj {
	if c.ident == nil {
		c.ident, c.idOf = map[*mobj]int{}, map[*mobj]int{}
	}
	out := make(map[string]*mobj, len(paths))
	copies := map[*mobj]*mobj{}
	for p, o := range paths {
		cp := copies[o]
		if cp == nil {
			cp = &mobj{kind: o.kind, data: slices.Clone(o.data), target: o.target}
			copies[o] = cp
			id, ok := c.idOf[o]
			if !ok {
				if id, ok = c.ident[o]; !ok {
					c.next++
					id = c.next
					c.ident[o] = id
				}
			}
			c.idOf[cp] = id
		}
		out[p] = cp
	}
	return out
}

func (c *ckptModel) id(o *mobj) (int, bool) {
	if id, ok := c.idOf[o]; ok {
		return id, true
	}
	id, ok := c.ident[o]
	return id, ok
}

// maxModelCheckpoints is how many checkpoints the model test keeps.
const maxModelCheckpoints = 2

// genCheckpointOp makes a checkpoint operation now and then; Off picks
// the checkpoint (modulo how many there are).
func genCheckpointOp(r *rand.Rand, m *model) (op, bool) {
	if r.IntN(100) >= 4 {
		return op{}, false
	}
	pick := int64(r.IntN(8))
	switch k := r.IntN(10); {
	case k < 3:
		name := ""
		if r.IntN(2) == 0 {
			name = "c" + strconv.Itoa(r.IntN(4))
		}
		return op{Kind: "checkpoint", A: name}, true
	case k < 4:
		return op{Kind: "restore", Off: pick}, true
	case k < 5:
		// A path now, or one a checkpoint may have had.
		ps := slices.Sorted(maps.Keys(m.paths))
		p := ps[r.IntN(len(ps))]
		if p == "/" || r.IntN(3) == 0 { // "/" is a whole restore: op restore
			p = path.Join(p, "f"+strconv.Itoa(r.IntN(4)))
		}
		return op{Kind: "restorepaths", A: p, Off: pick}, true
	case k < 7:
		return op{Kind: "diff", Off: pick}, true
	case k < 8:
		return op{Kind: "cdelete", Off: pick}, true
	}
	return op{Kind: "fork", Off: pick - 1}, true // -1: the live tree
}

// applyCheckpointOp runs a checkpoint operation on both sides.
func (h *harness) applyCheckpointOp(o op) (got error, want syscall.Errno, msg string) {
	ctx := h.t.Context()
	ck := &h.ck
	var cp *mckpt
	if len(ck.list) > 0 && o.Off >= 0 {
		cp = &ck.list[int(o.Off)%len(ck.list)]
	}
	if o.Kind != "checkpoint" && o.Kind != "fork" && cp == nil {
		// No checkpoint yet: an unknown one must be refused as such.
		var err error
		switch o.Kind {
		case "restore":
			err = h.f.Restore(ctx, "999")
		case "restorepaths":
			err = h.f.RestorePaths(ctx, "999", []string{o.A})
		case "diff":
			_, err = h.f.Diff(ctx, "999", "")
		case "cdelete":
			err = h.f.DeleteCheckpoint(ctx, "nope")
		}
		if !errors.Is(err, sfs.ErrCheckpointNotFound) {
			return nil, 0, fmt.Sprintf("%s of an unknown checkpoint: %v, want ErrCheckpointNotFound", o.Kind, err)
		}
		return nil, 0, ""
	}
	ref := func() string {
		if cp.name != "" && o.Off%2 == 0 {
			return cp.name
		}
		return cp.id
	}
	switch o.Kind {
	case "checkpoint":
		if len(ck.list) >= maxModelCheckpoints {
			// Check's cost grows with the checkpoints: keep a few.
			if err := h.f.DeleteCheckpoint(ctx, ck.list[0].id); err != nil {
				return nil, 0, fmt.Sprintf("delete checkpoint %s: %v", ck.list[0].id, err)
			}
			ck.list = ck.list[1:]
		}
		ci, err := h.f.Checkpoint(ctx, sfs.CheckpointOptions{Name: o.A})
		taken := o.A != "" && slices.ContainsFunc(ck.list, func(c mckpt) bool { return c.name == o.A })
		if taken {
			if !errors.Is(err, sfs.ErrCheckpointExists) {
				return nil, 0, fmt.Sprintf("checkpoint named %q twice: %v, want ErrCheckpointExists", o.A, err)
			}
			break
		}
		if err != nil {
			return nil, 0, fmt.Sprintf("checkpoint: %v", err)
		}
		ck.list = append(ck.list, mckpt{id: strconv.FormatInt(ci.ID, 10), name: ci.Name, paths: ck.copyTree(h.m.paths)})
	case "restore":
		if err := h.f.Restore(ctx, ref()); err != nil {
			return nil, 0, fmt.Sprintf("restore %s: %v", ref(), err)
		}
		h.m.paths = ck.copyTree(cp.paths)
		byID := map[int]*mobj{}
		for _, o := range h.m.paths {
			byID[ck.idOf[o]] = o
		}
		for _, hd := range h.handles {
			if id, ok := ck.id(hd.obj); ok && byID[id] != nil {
				hd.obj = byID[id] // restored in place
			}
		}
	case "restorepaths":
		err := h.f.RestorePaths(ctx, ref(), []string{o.A})
		want := h.m.restorePaths(cp.paths, o.A)
		if errnoOf(err) != want {
			return nil, 0, fmt.Sprintf("restore %s of %s: %v, model says %v", ref(), o.A, err, want)
		}
	case "diff":
		d, err := h.f.Diff(ctx, ref(), "")
		if err != nil {
			return nil, 0, fmt.Sprintf("diff %s: %v", ref(), err)
		}
		if msg := h.checkDiff(cp.paths, h.m.paths, d); msg != "" {
			return nil, 0, fmt.Sprintf("diff %s: %s", ref(), msg)
		}
	case "cdelete":
		if err := h.f.DeleteCheckpoint(ctx, ref()); err != nil {
			return nil, 0, fmt.Sprintf("delete checkpoint %s: %v", ref(), err)
		}
		if _, err := h.f.Store().CollectGarbage(ctx); err != nil {
			return nil, 0, fmt.Sprintf("collect garbage: %v", err)
		}
		ck.list = slices.DeleteFunc(ck.list, func(c mckpt) bool { return c.id == cp.id })
	case "fork":
		ck.forks++
		dst := filepath.Join(filepath.Dir(h.store), fmt.Sprintf("fork%d.db", ck.forks))
		want, r := h.m.paths, ""
		if cp != nil {
			want, r = cp.paths, ref()
		}
		if err := h.f.Fork(ctx, r, dst); err != nil {
			return nil, 0, fmt.Sprintf("fork %q: %v", r, err)
		}
		f, err := sfs.Open(ctx, dst, sfs.Options{ChunkSize: modelChunk, CommitInterval: 5 * time.Millisecond, NoAudit: true})
		if err != nil {
			return nil, 0, fmt.Sprintf("open fork: %v", err)
		}
		msg := compareTree(f, &model{paths: want})
		if msg == "" {
			msg = checkStore(ctx, f)
		}
		if cps, err := f.Checkpoints(ctx); err != nil || len(cps) > 0 {
			msg += fmt.Sprintf("; the fork has checkpoints %v (%v)", cps, err)
		}
		if err := f.Close(); err != nil {
			msg += fmt.Sprintf("; close fork: %v", err)
		}
		if msg != "" {
			return nil, 0, "fork: " + msg
		}
	}
	if err := h.f.Sync(ctx); err != nil {
		return nil, 0, fmt.Sprintf("sync: %v", err)
	}
	return nil, 0, checkStore(ctx, h.f)
}

func checkStore(ctx context.Context, f *sfs.FS) string {
	problems, err := f.Store().Check(ctx)
	if err != nil || len(problems) > 0 {
		return fmt.Sprintf("store check: %v\n%s", err, sqlstore.FormatProblems(problems))
	}
	return ""
}

// checkDiff holds a diff from old to new to the model: A and D exactly; M
// for every path whose object is another or holds other data, and only
// for paths on both sides (the core also reports files rewritten with the
// same bytes, which the model cannot tell).
func (h *harness) checkDiff(old, new map[string]*mobj, got []sfs.DiffEntry) string {
	if !slices.IsSortedFunc(got, func(a, b sfs.DiffEntry) int { return cmpStr(a.Path, b.Path) }) {
		return fmt.Sprintf("not sorted: %v", got)
	}
	status := map[string]byte{}
	for _, e := range got {
		status[e.Path] = e.Status
	}
	for p, o := range new {
		if p == "/" {
			continue
		}
		was := old[p]
		switch {
		case was == nil:
			if status[p] != 'A' {
				return fmt.Sprintf("%s added, diff says %q", p, status[p])
			}
		case h.differs(was, o):
			if status[p] != 'M' {
				return fmt.Sprintf("%s modified, diff says %q", p, status[p])
			}
		case status[p] != 0 && status[p] != 'M':
			return fmt.Sprintf("%s on both sides, diff says %q", p, status[p])
		}
	}
	for p := range old {
		if new[p] == nil && status[p] != 'D' {
			return fmt.Sprintf("%s deleted, diff says %q", p, status[p])
		}
	}
	for p, s := range status {
		if (s == 'M') != (old[p] != nil && new[p] != nil) {
			return fmt.Sprintf("diff says %c %s, which the model has on one side", s, p)
		}
	}
	return ""
}

func (h *harness) differs(a, b *mobj) bool {
	ia, oka := h.ck.id(a)
	ib, okb := h.ck.id(b)
	if a.kind != b.kind || oka != okb || ia != ib || !oka {
		return true
	}
	return a.kind == 'f' && !bytes.Equal(a.data, b.data) || a.target != b.target
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// downgradeToV3 takes a store's schema back to before checkpoints (schema
// 3), as older programs made it; the schema version is left to the caller.
func downgradeToV3(db *sql.DB) error {
	q := `DROP TABLE totals; DROP INDEX inodes_unlinked;
		DROP TABLE checkpoints; DELETE FROM meta WHERE k IN ('gen', 'gc_pending');`
	for _, t := range []string{"inodes", "dentries", "chunks", "xattrs"} {
		q += fmt.Sprintf("DROP TABLE %[1]s_hist; DROP INDEX %[1]s_born; ALTER TABLE %[1]s DROP COLUMN born;", t)
	}
	_, err := db.Exec(q)
	return err
}

// restorePaths puts back p as old had it: what is at p now goes, and
// old's objects at p and below come back as new objects (new inodes), with
// the directories above p that are missing.
func (m *model) restorePaths(old map[string]*mobj, p string) syscall.Errno {
	if old[p] != nil {
		for _, a := range ancestors(path.Dir(p)) {
			if o := m.paths[a]; o != nil && o.kind != 'd' {
				return syscall.ENOTDIR
			}
		}
	}
	for q := range m.paths {
		if q == p || under(q, p) {
			delete(m.paths, q)
		}
	}
	if old[p] == nil {
		return 0
	}
	for _, a := range ancestors(path.Dir(p)) {
		if m.paths[a] == nil {
			m.paths[a] = &mobj{kind: 'd'}
		}
	}
	copies := map[*mobj]*mobj{}
	for q, o := range old {
		if q != p && !under(q, p) {
			continue
		}
		if copies[o] == nil {
			copies[o] = &mobj{kind: o.kind, data: slices.Clone(o.data), target: o.target}
		}
		m.paths[q] = copies[o]
	}
	return 0
}
