package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/aymanbagabas/go-udiff"

	"github.com/sqlfs/sqlfs/internal/diffspan"
)

// WriteInput is the write tool's argument.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"file to create or overwrite, relative to the workspace root or under /workspace; missing parent directories are created"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

// WriteOutput is what write returns.
type WriteOutput struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created" jsonschema:"true when the file did not exist before"`
}

// Text is the result as a model reads it.
func (o WriteOutput) Text() string {
	verb := "overwrote"
	if o.Created {
		verb = "created"
	}
	return fmt.Sprintf("%s %s (%d bytes)\n", verb, o.Path, o.Bytes)
}

// Write creates or replaces a file.
func (s *Service) Write(ctx context.Context, in WriteInput) (WriteOutput, error) {
	out, err := s.write(ctx, in)
	return out, classify(err)
}

func (s *Service) write(_ context.Context, in WriteInput) (WriteOutput, error) {
	if len(in.Content) > s.opts.MaxWriteBytes {
		return WriteOutput{}, toolErr(CodeTooLarge, nil, "content is %d bytes, over the %d-byte write limit; write smaller files or use exec", len(in.Content), s.opts.MaxWriteBytes)
	}
	fsys := s.view("tool:write")
	name, err := resolve(fsys, in.Path, true)
	if err != nil {
		return WriteOutput{}, err
	}
	if name == "/" {
		return WriteOutput{}, toolErr(CodeIsDir, nil, "the workspace root is a directory; give a file path")
	}
	fi, err := fsys.Stat(name)
	created := errors.Is(err, fs.ErrNotExist)
	switch {
	case created:
		if err := fsys.MkdirAll(path.Dir(name), 0o755); err != nil {
			return WriteOutput{}, err
		}
	case err != nil:
		return WriteOutput{}, err
	case fi.IsDir():
		return WriteOutput{}, toolErr(CodeIsDir, nil, "%s is a directory; give a file path", display(name))
	}
	if err := fsys.WriteFile(name, []byte(in.Content), 0o644); err != nil {
		if created {
			// A refused write (quota) must not leave an empty new file.
			_ = fsys.Remove(name)
		}
		return WriteOutput{}, err
	}
	return WriteOutput{Path: display(name), Bytes: len(in.Content), Created: created}, nil
}

// Replacement is one edit of a batch.
type Replacement struct {
	OldText    string `json:"old_text" jsonschema:"exact text to replace, including whitespace and indentation; it must occur exactly once in the file unless replace_all is set, so include enough surrounding lines to make it unique"`
	NewText    string `json:"new_text" jsonschema:"text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_text instead of requiring exactly one"`
}

// EditInput is the edit tool's argument.
type EditInput struct {
	Path  string        `json:"path" jsonschema:"file to edit, relative to the workspace root or under /workspace"`
	Edits []Replacement `json:"edits" jsonschema:"replacements applied in order, each to the result of the previous one; if any fails none is applied"`
}

// EditOutput is what edit returns.
type EditOutput struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements" jsonschema:"occurrences replaced in total"`
	Diff         string `json:"diff" jsonschema:"unified diff of the change, cut at 256 KiB; a change spanning over 1 MiB of lines is one line naming them instead"`
}

// Text is the result as a model reads it.
func (o EditOutput) Text() string {
	return fmt.Sprintf("edited %s: %d replacement(s)\n%s", o.Path, o.Replacements, o.Diff)
}

// Edit applies a batch of exact replacements to one file, all or nothing.
func (s *Service) Edit(ctx context.Context, in EditInput) (EditOutput, error) {
	out, err := s.edit(ctx, in)
	return out, classify(err)
}

func (s *Service) edit(_ context.Context, in EditInput) (EditOutput, error) {
	if len(in.Edits) == 0 {
		return EditOutput{}, toolErr(CodeInvalid, nil, "edits is empty; give at least one {old_text, new_text}")
	}
	fsys := s.view("tool:edit")
	name, err := resolve(fsys, in.Path, true)
	if err != nil {
		return EditOutput{}, err
	}
	fi, err := fsys.Stat(name)
	if err != nil {
		return EditOutput{}, err
	}
	if fi.IsDir() {
		return EditOutput{}, toolErr(CodeIsDir, nil, "%s is a directory; edit changes files", display(name))
	}
	// The file, its edited copy and their diff are all held at once.
	if fi.Size() > int64(s.opts.MaxWriteBytes) {
		return EditOutput{}, toolErr(CodeTooLarge, nil, "%s is %d bytes, over the %d-byte edit limit; no edit was applied. Use exec (sed -i) for large files", display(name), fi.Size(), s.opts.MaxWriteBytes)
	}
	data, err := fsys.ReadFile(name)
	if err != nil {
		return EditOutput{}, err
	}
	if isBinary(data[:min(len(data), sniffLen)]) {
		return EditOutput{}, binaryErr(name, data[:min(len(data), sniffLen)], int64(len(data)))
	}
	before := string(data)
	after := before
	total := 0
	for i, e := range in.Edits {
		n := i + 1
		if e.OldText == "" {
			return EditOutput{}, toolErr(CodeInvalid, nil, "edit %d: old_text is empty; to write a whole file use write", n)
		}
		if e.OldText == e.NewText {
			return EditOutput{}, toolErr(CodeInvalid, nil, "edit %d: old_text and new_text are the same", n)
		}
		count := strings.Count(after, e.OldText)
		switch {
		case count == 0:
			return EditOutput{}, toolErr(CodeNoMatch, nil, "edit %d: old_text not found in %s%s; no edit was applied. Read the file again and copy the text exactly, whitespace included",
				n, display(name), laterHint(i))
		case count > 1 && !e.ReplaceAll:
			return EditOutput{}, toolErr(CodeAmbiguous, nil, "edit %d: old_text occurs %d times in %s; no edit was applied. Include more surrounding lines to make it unique, or set replace_all",
				n, count, display(name))
		}
		// Sized from the counts before it is built: a short old_text
		// matching often, with a long new_text, would otherwise allocate
		// far past the limit (count*len(new_text) fits an int: both are
		// bounded by the limit and the request body).
		if size := len(after) + count*(len(e.NewText)-len(e.OldText)); size > s.opts.MaxWriteBytes {
			return EditOutput{}, toolErr(CodeTooLarge, nil, "the edited file would be %d bytes, over the %d-byte limit; no edit was applied", size, s.opts.MaxWriteBytes)
		}
		after = strings.ReplaceAll(after, e.OldText, e.NewText)
		total += count
	}
	if err := fsys.WriteFile(name, []byte(after), fi.Mode().Perm()); err != nil {
		return EditOutput{}, err
	}
	return EditOutput{Path: display(name), Replacements: total, Diff: editDiff(display(name), before, after)}, nil
}

// maxDiffBytes bounds the diff an edit answers with, and maxDiffSpan the
// changed span (the lines from the first changed one to the last, both
// sides) diffed line by line, past which the answer is one line saying
// which lines changed: a line diff of a 9 MB edit changing every line took
// 3 s and 690 MB.
const (
	maxDiffBytes = 256 << 10
	maxDiffSpan  = 1 << 20
)

// editDiff is the unified diff from before to after, with three lines of
// context, cut at maxDiffBytes. Only the changed span is diffed (the
// common prefix and suffix, widened to whole lines, are left out), so the
// time and memory it takes follow the change, not the file; a span past
// maxDiffSpan is summed up in one line.
func editDiff(name, before, after string) string {
	pre, suf := diffspan.Common(len(before), len(after), func(i, j int) bool { return before[i] == after[j] })
	if pre == len(before) && pre == len(after) {
		return ""
	}
	// Whole lines: back to the start of the first changed one, on to the
	// end of the last (the suffix is common, so both sides move alike).
	start := strings.LastIndexByte(before[:pre], '\n') + 1
	bEnd, aEnd := len(before)-suf, len(after)-suf
	ext := suf
	if i := strings.IndexByte(before[bEnd:], '\n'); i >= 0 {
		ext = i + 1
	}
	bEnd, aEnd = bEnd+ext, aEnd+ext
	if bEnd-start+aEnd-start > maxDiffSpan {
		first := strings.Count(before[:start], "\n") + 1
		return fmt.Sprintf("[no diff: the change spans lines %s of the old file and %s of the new one, %d and %d bytes, over the %d-byte bound on a diffed change; read the file to see it]\n",
			lineRange(first, before[start:bEnd]), lineRange(first, after[start:aEnd]), bEnd-start, aEnd-start, maxDiffSpan)
	}
	// The diff is made of a window of the old file, the span and its
	// context lines, and its hunks numbered from the window's first line:
	// udiff splits all it is given into lines, 87 MB for a 9 MB file.
	cs, ce := start, bEnd
	for range udiff.DefaultContextLines {
		if cs > 0 {
			cs = strings.LastIndexByte(before[:cs-1], '\n') + 1
		}
		if i := strings.IndexByte(before[ce:], '\n'); i >= 0 {
			ce += i + 1
		} else {
			ce = len(before)
		}
	}
	edits := udiff.Lines(before[start:bEnd], after[start:aEnd])
	for i := range edits {
		edits[i].Start += start - cs
		edits[i].End += start - cs
	}
	d, err := udiff.ToUnified("a/"+name, "b/"+name, before[cs:ce], edits, udiff.DefaultContextLines)
	if err != nil {
		return "" // the edits are consistent by construction
	}
	return cutDiff(renumber(d, strings.Count(before[:cs], "\n")))
}

// renumber adds by to the line numbers of every hunk header of d. A hunk
// numbered 0 (an empty file's) starts a window at the file's start, by 0.
func renumber(d string, by int) string {
	if by == 0 {
		return d
	}
	var b strings.Builder
	b.Grow(len(d) + 64)
	for rest := d; rest != ""; {
		line, tail, _ := strings.Cut(rest, "\n")
		rest = tail
		if h, ok := strings.CutPrefix(line, "@@ "); ok {
			b.WriteString("@@")
			for _, f := range strings.Fields(strings.TrimSuffix(h, " @@")) {
				num, count, hasCount := strings.Cut(f[1:], ",")
				n, _ := strconv.Atoi(num) // udiff writes numbers there
				fmt.Fprintf(&b, " %c%d", f[0], n+by)
				if hasCount {
					b.WriteString("," + count)
				}
			}
			b.WriteString(" @@\n")
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// lineRange names the lines of seg, which starts at line first: "3-9",
// "3", or "none" for an empty seg.
func lineRange(first int, seg string) string {
	n := strings.Count(seg, "\n")
	if seg != "" && seg[len(seg)-1] != '\n' {
		n++
	}
	switch n {
	case 0:
		return "none"
	case 1:
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, first+n-1)
}

// cutDiff cuts diff d at a line boundary within maxDiffBytes.
func cutDiff(d string) string {
	if len(d) <= maxDiffBytes {
		return d
	}
	cut := strings.LastIndexByte(d[:maxDiffBytes], '\n') + 1
	return fmt.Sprintf("%s[diff cut at %d of %d bytes]\n", d[:cut], cut, len(d))
}

// laterHint notes that an edit after the first sees the earlier edits.
func laterHint(i int) string {
	if i == 0 {
		return ""
	}
	return " (after the earlier edits of this batch)"
}

// DeleteInput is the delete tool's argument.
type DeleteInput struct {
	Path      string `json:"path" jsonschema:"file, symlink or directory to delete, relative to the workspace root or under /workspace; a symlink itself is deleted, not its target"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"required to delete a non-empty directory and everything below it"`
}

// DeleteOutput is what delete returns.
type DeleteOutput struct {
	Path string `json:"path"`
	Type string `json:"type" jsonschema:"what was deleted: file, dir, symlink or other"`
}

// Text is the result as a model reads it.
func (o DeleteOutput) Text() string { return fmt.Sprintf("deleted %s %s\n", o.Type, o.Path) }

// Delete removes a path.
func (s *Service) Delete(ctx context.Context, in DeleteInput) (DeleteOutput, error) {
	out, err := s.delete(ctx, in)
	return out, classify(err)
}

func (s *Service) delete(_ context.Context, in DeleteInput) (DeleteOutput, error) {
	fsys := s.view("tool:delete")
	name, err := resolve(fsys, in.Path, false)
	if err != nil {
		return DeleteOutput{}, err
	}
	if name == "/" {
		return DeleteOutput{}, toolErr(CodeInvalid, nil, "refusing to delete the workspace root")
	}
	fi, err := fsys.Lstat(name)
	if err != nil {
		return DeleteOutput{}, err
	}
	out := DeleteOutput{Path: display(name), Type: typeName(fi.Mode())}
	if fi.IsDir() && in.Recursive {
		if err := fsys.RemoveAll(name); err != nil {
			return DeleteOutput{}, err
		}
		return out, nil
	}
	if err := fsys.Remove(name); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) {
			return DeleteOutput{}, toolErr(CodeNotEmpty, err, "%s is a directory that is not empty; pass recursive=true to delete it with everything in it", display(name))
		}
		return DeleteOutput{}, err
	}
	return out, nil
}
