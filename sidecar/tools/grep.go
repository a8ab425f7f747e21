package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"unicode/utf8"
)

// GrepInput is the grep tool's argument.
type GrepInput struct {
	Pattern    string   `json:"pattern" jsonschema:"RE2 regular expression (Go syntax) searched in each line, or a literal string when fixed is true"`
	Path       string   `json:"path,omitempty" jsonschema:"file or directory to search, relative to the workspace root or under /workspace (default: the root)"`
	Fixed      bool     `json:"fixed,omitempty" jsonschema:"treat pattern as a literal string, not a regular expression"`
	IgnoreCase bool     `json:"ignore_case,omitempty" jsonschema:"match regardless of case"`
	Include    []string `json:"include,omitempty" jsonschema:"only search files matching one of these globs (e.g. *.go or src/**/*.ts); a glob without / matches the base name"`
	Exclude    []string `json:"exclude,omitempty" jsonschema:"skip paths matching these globs; a matching directory is not descended into (e.g. node_modules)"`
	Context    int      `json:"context,omitempty" jsonschema:"lines of context to show before and after each match (0-10)"`
	Offset     int      `json:"offset,omitempty" jsonschema:"number of matches to skip; use next_offset of a previous call to continue"`
	Limit      int      `json:"limit,omitempty" jsonschema:"maximum matching lines to return (default 100, maximum 1000)"`
}

// Match is one matching line.
type Match struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty" jsonschema:"context lines before the match"`
	After  []string `json:"after,omitempty" jsonschema:"context lines after the match"`
}

// GrepOutput is what grep returns.
type GrepOutput struct {
	Matches    []Match  `json:"matches"`
	NextOffset int      `json:"next_offset,omitempty" jsonschema:"set when more matches follow: pass it as offset"`
	Skipped    []string `json:"skipped,omitempty" jsonschema:"files not searched, with the reason"`
	Incomplete bool     `json:"incomplete,omitempty" jsonschema:"the walk stopped at its entry limit: narrow path or include"`
}

// Text is the result as a model reads it, in grep -n style: path:line:text
// for matches, path-line-text for context.
func (o GrepOutput) Text() string {
	var b strings.Builder
	for i, m := range o.Matches {
		if i > 0 && (len(m.Before) > 0 || len(o.Matches[i-1].After) > 0) {
			b.WriteString("--\n")
		}
		for j, l := range m.Before {
			fmt.Fprintf(&b, "%s-%d-%s\n", m.Path, m.Line-len(m.Before)+j, l)
		}
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
		for j, l := range m.After {
			fmt.Fprintf(&b, "%s-%d-%s\n", m.Path, m.Line+1+j, l)
		}
	}
	if len(o.Matches) == 0 {
		b.WriteString("[no matches]\n")
	} else if o.NextOffset > 0 {
		fmt.Fprintf(&b, "[more matches follow: grep again with offset=%d]\n", o.NextOffset)
	}
	for _, s := range o.Skipped {
		fmt.Fprintf(&b, "[skipped %s]\n", s)
	}
	if o.Incomplete {
		b.WriteString("[the search stopped at its entry limit; narrow path or include]\n")
	}
	return b.String()
}

const maxContext = 10

// Grep searches file contents.
func (s *Service) Grep(ctx context.Context, in GrepInput) (GrepOutput, error) {
	out, err := s.grep(ctx, in)
	return out, classify(err)
}

func (s *Service) grep(ctx context.Context, in GrepInput) (GrepOutput, error) {
	offset, limit, err := s.page(in.Offset, in.Limit, 100)
	if err != nil {
		return GrepOutput{}, err
	}
	if in.Pattern == "" {
		return GrepOutput{}, toolErr(CodeInvalid, nil, "pattern is required")
	}
	if in.Context < 0 || in.Context > maxContext {
		return GrepOutput{}, toolErr(CodeInvalid, nil, "context must be between 0 and %d", maxContext)
	}
	expr := in.Pattern
	if in.Fixed {
		expr = regexp.QuoteMeta(expr)
	}
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return GrepOutput{}, toolErr(CodeInvalid, err, "invalid regular expression: %v (set fixed=true to search for a literal string)", err)
	}
	if err := checkGlobs(append(append([]string{}, in.Include...), in.Exclude...)...); err != nil {
		return GrepOutput{}, err
	}
	fsys := s.view("tool:grep")
	root, err := resolve(fsys, in.Path, true)
	if err != nil {
		return GrepOutput{}, err
	}
	fi, err := fsys.Stat(root)
	if err != nil {
		return GrepOutput{}, err
	}
	g := &grepper{s: s, fsys: fsys, re: re, ctxLines: in.Context, skip: offset, limit: limit,
		out: GrepOutput{Matches: []Match{}}}
	if !fi.IsDir() {
		if err := g.file(ctx, root, fi.Size()); err != nil && !errors.Is(err, errEnough) {
			return GrepOutput{}, err
		}
		return g.out, nil
	}
	g.out.Incomplete, err = walk(ctx, fsys, root, s.opts.MaxWalk, func(name, rel string, d fs.DirEntry) (bool, error) {
		for _, x := range in.Exclude {
			if globMatch(x, rel) {
				return true, nil
			}
		}
		if !d.Type().IsRegular() {
			return false, nil
		}
		if len(in.Include) > 0 && !matchesAny(in.Include, rel) {
			return false, nil
		}
		info, err := d.Info()
		if err != nil {
			return false, err
		}
		return false, g.file(ctx, name, info.Size())
	})
	if errors.Is(err, errEnough) {
		return g.out, nil
	}
	if err != nil {
		return GrepOutput{}, err
	}
	return g.out, nil
}

func matchesAny(globs []string, rel string) bool {
	for _, g := range globs {
		if globMatch(g, rel) {
			return true
		}
	}
	return false
}

// errEnough ends the search once a page is full and one more match proved
// that the results continue.
var errEnough = errors.New("page full")

type grepper struct {
	s        *Service
	fsys     FS
	re       *regexp.Regexp
	ctxLines int
	skip     int // matches still to skip for the offset
	limit    int
	seen     int // matches found, skipped ones included
	out      GrepOutput
}

func (g *grepper) file(ctx context.Context, name string, size int64) error {
	if size > g.s.opts.MaxGrepFile {
		g.out.Skipped = append(g.out.Skipped, fmt.Sprintf("%s: %d bytes, over the %d-byte grep limit", display(name), size, g.s.opts.MaxGrepFile))
		return nil
	}
	f, err := g.fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	head, err := r.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	if isBinary(head) {
		return nil // like grep -I: binary files are not searched
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), int(g.s.opts.MaxGrepFile))
	var before []string
	var open *Match // the last match, still collecting after-context
	for n := 1; sc.Scan(); n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line := g.s.cutLine(sc.Text(), len(sc.Bytes()))
		matched := g.re.Match(sc.Bytes())
		if open != nil && !matched && len(open.After) < g.ctxLines {
			open.After = append(open.After, line)
		}
		if matched {
			g.seen++
			if g.seen <= g.skip {
				open = nil
			} else {
				if len(g.out.Matches) == g.limit {
					g.out.NextOffset = g.skip + g.limit
					return errEnough
				}
				m := Match{Path: display(name), Line: n, Text: line}
				// Context lines already shown after the previous match are
				// not repeated before this one.
				if k := len(before); k > 0 {
					if open != nil {
						k = min(k, n-open.Line-1-len(open.After))
					}
					m.Before = append([]string(nil), before[len(before)-max(k, 0):]...)
				}
				g.out.Matches = append(g.out.Matches, m)
				open = &g.out.Matches[len(g.out.Matches)-1]
			}
		}
		if g.ctxLines > 0 {
			before = append(before, line)
			if len(before) > g.ctxLines {
				before = before[1:]
			}
		}
	}
	return sc.Err()
}

// cutLine shortens a line past MaxLineBytes, keeping UTF-8 intact; full is
// the line's whole length when line holds only its start.
func (s *Service) cutLine(line string, full int) string {
	if len(line) <= s.opts.MaxLineBytes {
		return line
	}
	cut := s.opts.MaxLineBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [line cut: %d bytes]", line[:cut], full)
}
