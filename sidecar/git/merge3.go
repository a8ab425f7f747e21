package git

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk replaces base lines [start, end) with lines.
type hunk struct {
	start, end int
	lines      []string
}

// lineHunks are the changes from base to side, line by line.
func lineHunks(base, side string) []hunk {
	var out []hunk
	pos := 0
	var cur *hunk
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, d := range diff.Do(base, side) {
		lines := splitLines(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			pos += len(lines)
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &hunk{start: pos, end: pos}
			}
			pos += len(lines)
			cur.end = pos
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &hunk{start: pos, end: pos}
			}
			cur.lines = append(cur.lines, lines...)
		}
	}
	flush()
	return out
}

// apply is base[start:end) with hs (inside it, in order) applied.
func apply(base []string, start, end int, hs []hunk) string {
	var b strings.Builder
	pos := start
	for _, h := range hs {
		b.WriteString(strings.Join(base[pos:h.start], ""))
		b.WriteString(strings.Join(h.lines, ""))
		pos = h.end
	}
	b.WriteString(strings.Join(base[pos:end], ""))
	return b.String()
}

// merge3 merges the line changes base→ours and base→theirs as git's
// three-way merge does: changes apart are both taken; changes that
// overlap or touch (no unchanged line between them) are a conflict, ok
// false, unless both sides made the same one. Binary content (a NUL in
// git's first 8000 bytes) is never merged.
func merge3(base, ours, theirs []byte) (merged []byte, ok bool) {
	for _, b := range [][]byte{base, ours, theirs} {
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			return nil, false
		}
	}
	baseLines := splitLines(string(base))
	a, t := lineHunks(string(base), string(ours)), lineHunks(string(base), string(theirs))
	var out strings.Builder
	pos := 0
	for len(a) > 0 || len(t) > 0 {
		// A group starts at the first hunk of either side and takes every
		// hunk that starts before or where the group ends.
		var ga, gt []hunk
		start, end := -1, -1
		take := func(side *[]hunk, g *[]hunk) bool {
			if len(*side) == 0 || (start >= 0 && (*side)[0].start > end) {
				return false
			}
			h := (*side)[0]
			*side = (*side)[1:]
			*g = append(*g, h)
			if start < 0 || h.start < start {
				start = h.start
			}
			end = max(end, h.end)
			return true
		}
		if len(t) == 0 || (len(a) > 0 && a[0].start <= t[0].start) {
			take(&a, &ga)
		} else {
			take(&t, &gt)
		}
		for take(&a, &ga) || take(&t, &gt) {
		}
		out.WriteString(strings.Join(baseLines[pos:start], ""))
		switch oursText, theirsText := apply(baseLines, start, end, ga), apply(baseLines, start, end, gt); {
		case len(gt) == 0:
			out.WriteString(oursText)
		case len(ga) == 0, oursText == theirsText:
			out.WriteString(theirsText)
		default:
			return nil, false
		}
		pos = end
	}
	out.WriteString(strings.Join(baseLines[pos:], ""))
	return []byte(out.String()), true
}

// mergeTrees applies the changes from base to theirs onto ours, merging
// files changed on both sides line by line (contentMerge). A conflict
// prints git's lines and is refused with nothing changed; notDone says
// what was not done ("the merge was not made"). The merged files' blobs
// are for the caller to store.
func (r *repo) mergeTrees(base, ours, theirs snapshot, notDone string) (result snapshot, notes []string, blobs map[string][]byte, err error) {
	result, both := applyChanges(ours, compare(base, theirs))
	slices.Sort(both)
	notes, conflict, blobs, err := contentMerge(base, ours, theirs, result, both)
	if err != nil {
		return nil, nil, nil, err
	}
	if conflict {
		for _, n := range notes {
			fmt.Fprintln(r.out, n)
		}
		return nil, nil, nil, errorf(1, "error: the built-in git writes no conflicts to resolve: %s and nothing changed (resolve it with git in the container backend)\n", notDone)
	}
	return result, notes, blobs, nil
}

// contentMerge merges the files of both (changed on both sides from base
// to ours and to theirs) into result, as git's ort strategy does: each
// regular file all three sides have whose line changes do not collide is
// merged and its blob put in blobs for the caller to store once the whole
// merge is clean; every other one is a conflict. notes are git's lines
// about them, in its order (Auto-merging P, then its CONFLICT line).
func contentMerge(base, ours, theirs, result snapshot, both []string) (notes []string, conflict bool, blobs map[string][]byte, err error) {
	blobs = map[string][]byte{}
	for _, p := range both {
		b, o, t := base[p], ours[p], theirs[p]
		switch {
		case o != nil && t != nil && b == nil:
			notes, conflict = append(notes, "Auto-merging "+p, "CONFLICT (add/add): Merge conflict in "+p), true
			continue
		case b == nil || o == nil || t == nil || !regular(b) || !regular(o) || !regular(t):
			return nil, false, nil, unsupported("git merge of " + p + ", deleted, a symlink or a submodule on one side and changed on the other")
		}
		mode := o.mode
		if mode == b.mode {
			mode = t.mode
		} else if t.mode != b.mode && t.mode != o.mode {
			return nil, false, nil, unsupported("git merge of " + p + ", whose mode changed differently on both sides")
		}
		var data [3][]byte
		for i, x := range []*blobRef{b, o, t} {
			if data[i], err = x.load(); err != nil {
				return nil, false, nil, err
			}
		}
		notes = append(notes, "Auto-merging "+p)
		merged, ok := merge3(data[0], data[1], data[2])
		if !ok {
			notes, conflict = append(notes, "CONFLICT (content): Merge conflict in "+p), true
			continue
		}
		blobs[p] = merged
		result[p] = &blobRef{path: p, mode: mode, hash: plumbing.ComputeHash(plumbing.BlobObject, merged), load: func() ([]byte, error) { return merged, nil }}
	}
	return notes, conflict, blobs, nil
}

func regular(b *blobRef) bool { return b.mode == filemode.Regular || b.mode == filemode.Executable }
