package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// LsInput is the ls tool's argument.
type LsInput struct {
	Path   string `json:"path,omitempty" jsonschema:"directory to list, relative to the workspace root or under /workspace (default: the root)"`
	Offset int    `json:"offset,omitempty" jsonschema:"number of entries to skip; use next_offset of a previous call to continue"`
	Limit  int    `json:"limit,omitempty" jsonschema:"maximum entries to return (default 200, maximum 1000)"`
}

// Entry is one directory entry.
type Entry struct {
	Name   string    `json:"name"`
	Type   string    `json:"type" jsonschema:"file, dir, symlink or other"`
	Size   int64     `json:"size"`
	Mode   string    `json:"mode" jsonschema:"permission bits in octal"`
	Mtime  time.Time `json:"mtime"`
	Target string    `json:"target,omitempty" jsonschema:"where a symlink points"`
}

// LsOutput is what ls returns.
type LsOutput struct {
	Path       string  `json:"path"`
	Entries    []Entry `json:"entries"`
	Total      int     `json:"total" jsonschema:"number of entries in the directory"`
	NextOffset int     `json:"next_offset,omitempty" jsonschema:"set when more entries follow: pass it as offset"`
}

// Text is the result as a model reads it.
func (o LsOutput) Text() string {
	var b strings.Builder
	for _, e := range o.Entries {
		name := e.Name
		switch e.Type {
		case "dir":
			name += "/"
		case "symlink":
			name += " -> " + e.Target
		}
		fmt.Fprintf(&b, "%-7s %s %10d  %s  %s\n", e.Type, e.Mode, e.Size, e.Mtime.UTC().Format(time.DateTime), name)
	}
	if len(o.Entries) == 0 {
		fmt.Fprintf(&b, "[%s: no entries at this offset; %d in total]\n", o.Path, o.Total)
	} else if o.NextOffset > 0 {
		fmt.Fprintf(&b, "[%d of %d entries shown; list again with offset=%d for more]\n", len(o.Entries), o.Total, o.NextOffset)
	}
	return b.String()
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

// Ls lists a directory, sorted by name.
func (s *Service) Ls(ctx context.Context, in LsInput) (LsOutput, error) {
	out, err := s.ls(ctx, in)
	return out, classify(err)
}

func (s *Service) ls(_ context.Context, in LsInput) (LsOutput, error) {
	offset, limit, err := s.page(in.Offset, in.Limit, 200)
	if err != nil {
		return LsOutput{}, err
	}
	fsys := s.view("tool:ls")
	name, err := resolve(fsys, in.Path, true)
	if err != nil {
		return LsOutput{}, err
	}
	fi, err := fsys.Stat(name)
	if err != nil {
		return LsOutput{}, err
	}
	if !fi.IsDir() {
		return LsOutput{}, toolErr(CodeNotDir, nil, "%s is not a directory; use read to see a file", display(name))
	}
	ents, err := fsys.ReadDir(name)
	if err != nil {
		return LsOutput{}, err
	}
	out := LsOutput{Path: display(name), Total: len(ents), Entries: []Entry{}}
	end := min(len(ents), offset+limit)
	for i := min(offset, end); i < end; i++ {
		p := path.Join(name, ents[i].Name())
		info, err := fsys.Lstat(p)
		if err != nil {
			return LsOutput{}, err
		}
		e := Entry{Name: ents[i].Name(), Type: typeName(info.Mode()), Size: info.Size(),
			Mode: fmt.Sprintf("%04o", info.Mode().Perm()), Mtime: info.ModTime()}
		if e.Type == "symlink" {
			if e.Target, err = fsys.Readlink(p); err != nil {
				return LsOutput{}, err
			}
		}
		out.Entries = append(out.Entries, e)
	}
	if end < len(ents) {
		out.NextOffset = end
	}
	return out, nil
}

// FindInput is the find tool's argument.
type FindInput struct {
	Path    string   `json:"path,omitempty" jsonschema:"directory to search, relative to the workspace root or under /workspace (default: the root)"`
	Pattern string   `json:"pattern,omitempty" jsonschema:"glob matched against paths relative to path, with ** for any depth (e.g. **/*.go or src/*.ts); a pattern without / matches the base name at any depth. Default: everything"`
	Exclude []string `json:"exclude,omitempty" jsonschema:"globs of paths to skip, same syntax; a matching directory is not descended into (e.g. node_modules or .git)"`
	Type    string   `json:"type,omitempty" jsonschema:"only this kind: file, dir or symlink (default: any)"`
	Offset  int      `json:"offset,omitempty" jsonschema:"number of matches to skip; use next_offset of a previous call to continue"`
	Limit   int      `json:"limit,omitempty" jsonschema:"maximum paths to return (default 200, maximum 1000)"`
}

// FindOutput is what find returns.
type FindOutput struct {
	Paths      []string `json:"paths" jsonschema:"matching paths relative to the workspace root, sorted"`
	Total      int      `json:"total" jsonschema:"matches found"`
	NextOffset int      `json:"next_offset,omitempty" jsonschema:"set when more matches follow: pass it as offset"`
	Incomplete bool     `json:"incomplete,omitempty" jsonschema:"the walk stopped at its entry limit: narrow path or pattern"`
}

// Text is the result as a model reads it.
func (o FindOutput) Text() string {
	var b strings.Builder
	for _, p := range o.Paths {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	switch {
	case o.Total == 0:
		b.WriteString("[no matches]\n")
	case o.NextOffset > 0:
		fmt.Fprintf(&b, "[%d of %d matches shown; find again with offset=%d for more]\n", len(o.Paths), o.Total, o.NextOffset)
	}
	if o.Incomplete {
		b.WriteString("[the search stopped at its entry limit; narrow path or pattern]\n")
	}
	return b.String()
}

// globMatch matches a workspace-relative path, or only its base name when
// the pattern has no slash (like find -name).
func globMatch(pattern, rel string) bool {
	if !strings.Contains(pattern, "/") {
		rel = path.Base(rel)
	}
	ok, _ := doublestar.Match(pattern, rel) // patterns are validated up front
	return ok
}

func checkGlobs(globs ...string) error {
	for _, g := range globs {
		if !doublestar.ValidatePattern(g) {
			return toolErr(CodeInvalid, nil, "invalid glob %q", g)
		}
	}
	return nil
}

// walk visits every entry below root in name order without following
// symlinks. visit gets the workspace path and the path relative to root;
// returning skipDir for a directory skips its contents. It stops after
// limit entries and reports whether it did.
func walk(ctx context.Context, fsys FS, root string, limit int, visit func(name, rel string, d fs.DirEntry) (skip bool, err error)) (stopped bool, err error) {
	seen := 0
	var rec func(dir, rel string) error
	stop := errors.New("walk limit")
	rec = func(dir, rel string) error {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, d := range ents {
			if err := ctx.Err(); err != nil {
				return err
			}
			if seen++; seen > limit {
				return stop
			}
			name, r := path.Join(dir, d.Name()), path.Join(rel, d.Name())
			skip, err := visit(name, r, d)
			if err != nil {
				return err
			}
			if d.IsDir() && !skip {
				if err := rec(name, r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = rec(root, "")
	if errors.Is(err, stop) {
		return true, nil
	}
	return false, err
}

// Find lists paths matching a glob.
func (s *Service) Find(ctx context.Context, in FindInput) (FindOutput, error) {
	out, err := s.find(ctx, in)
	return out, classify(err)
}

func (s *Service) find(ctx context.Context, in FindInput) (FindOutput, error) {
	offset, limit, err := s.page(in.Offset, in.Limit, 200)
	if err != nil {
		return FindOutput{}, err
	}
	pattern := in.Pattern
	if pattern == "" {
		pattern = "**"
	}
	if err := checkGlobs(append([]string{pattern}, in.Exclude...)...); err != nil {
		return FindOutput{}, err
	}
	switch in.Type {
	case "", "file", "dir", "symlink":
	default:
		return FindOutput{}, toolErr(CodeInvalid, nil, "type must be file, dir or symlink, not %q", in.Type)
	}
	fsys := s.view("tool:find")
	root, err := resolve(fsys, in.Path, true)
	if err != nil {
		return FindOutput{}, err
	}
	fi, err := fsys.Stat(root)
	if err != nil {
		return FindOutput{}, err
	}
	if !fi.IsDir() {
		return FindOutput{}, toolErr(CodeNotDir, nil, "%s is not a directory", display(root))
	}
	out := FindOutput{Paths: []string{}}
	out.Incomplete, err = walk(ctx, fsys, root, s.opts.MaxWalk, func(name, rel string, d fs.DirEntry) (bool, error) {
		for _, x := range in.Exclude {
			if globMatch(x, rel) {
				return true, nil
			}
		}
		if in.Type != "" && typeName(d.Type()) != in.Type {
			return false, nil
		}
		if !globMatch(pattern, rel) {
			return false, nil
		}
		if out.Total >= offset && len(out.Paths) < limit {
			out.Paths = append(out.Paths, display(name))
		}
		out.Total++
		return false, nil
	})
	if err != nil {
		return FindOutput{}, err
	}
	if offset+len(out.Paths) < out.Total {
		out.NextOffset = offset + len(out.Paths)
	}
	return out, nil
}
