package git

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// grepFlags are the git grep options that mean what they mean to grep,
// which searches for it (the shell's own grep, so patterns are read as
// git reads them: basic regular expressions unless -E or -F).
var grepFlags = map[string]bool{
	"-n": true, "--line-number": true, "-i": true, "--ignore-case": true, "-v": true, "--invert-match": true,
	"-w": true, "--word-regexp": true, "-x": true, "--line-regexp": true, "-l": true, "--files-with-matches": true,
	"-L": true, "--files-without-match": true, "-c": true, "--count": true, "-E": true, "--extended-regexp": true,
	"-F": true, "--fixed-strings": true, "-G": true, "--basic-regexp": true, "-q": true, "--quiet": true,
	"-h": true, "-H": true, "-o": true, "--only-matching": true,
}

// grepArgFlags take a value, as the next argument or after "=".
var grepArgFlags = map[string]bool{"-e": true, "-A": true, "-B": true, "-C": true, "--after-context": true, "--before-context": true, "--context": true, "-m": true, "--max-count": true}

// cmdGrep is git grep over the worktree's tracked files below the working
// directory (or the pathspecs), printed relative to it. A revision,
// --cached and binary files that match are refused.
func cmdGrep(s *session, args []string) error {
	opts, paths, dashdash := splitDashDash(args)
	grep := []string{"grep"}
	var count, patternGiven bool
	var rest []string
	for i := 0; i < len(opts); i++ {
		a := opts[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case grepFlags[a]:
			grep = append(grep, a)
			count = count || a == "-c" || a == "--count"
		case grepArgFlags[name] && hasValue:
			grep = append(grep, a)
			patternGiven = patternGiven || name == "-e"
		case grepArgFlags[a] && i+1 < len(opts):
			grep = append(grep, a, opts[i+1])
			patternGiven = patternGiven || a == "-e"
			i++
		case len(a) > 2 && a[0] == '-' && a[1] != '-' && (a[1] == 'A' || a[1] == 'B' || a[1] == 'C' || a[1] == 'm' || a[1] == 'e'):
			grep = append(grep, a) // -C2, -efoo
			patternGiven = patternGiven || a[1] == 'e'
		case strings.HasPrefix(a, "-") && a != "-":
			return unsupported("git grep " + a)
		default:
			rest = append(rest, a)
		}
	}
	if !patternGiven {
		if len(rest) == 0 {
			return fatalf("no pattern given")
		}
		grep = append(grep, "-e", rest[0])
		rest = rest[1:]
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		// Without --, git takes them as paths when the worktree has them.
		for _, a := range rest {
			if _, err := r.fs.Lstat(mustRel(r, a)); dashdash || err != nil {
				return unsupported("git grep in a revision")
			}
		}
		paths = rest
	}
	cwd, err := r.rel(".")
	if err != nil {
		return err
	}
	specs := []string{cwd}
	if len(paths) > 0 {
		if specs, err = r.pathspecs(paths); err != nil {
			return err
		}
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	var files, binary []string
	for _, e := range idx.Entries {
		if !slices.ContainsFunc(specs, func(p string) bool { return p == "" || e.Name == p || strings.HasPrefix(e.Name, p+"/") }) {
			continue
		}
		head, ok := r.head8k(e.Name)
		switch {
		case !ok: // deleted in the worktree, or not a regular file
		case bytes.IndexByte(head, 0) >= 0:
			binary = append(binary, r.show(e.Name))
		default:
			files = append(files, r.show(e.Name))
		}
	}
	run, ok := builtin.Lookup("grep")
	if !ok {
		return unsupported("git grep without the shell's grep")
	}
	env := *s.env
	env.Stdin = strings.NewReader("")
	if len(binary) > 0 {
		env.Stdout, env.Stderr = io.Discard, io.Discard
		if run(s.ctx, &env, append(append(slices.Clone(grep), "-q", "-a", "--"), binary...)) == 0 {
			return unsupported("git grep matching a binary file")
		}
	}
	if len(files) == 0 {
		return &exitError{code: 1}
	}
	env.Stdout, env.Stderr = s.out, s.errw
	var counts *dropZeroCounts
	if count {
		counts = &dropZeroCounts{w: s.out}
		env.Stdout = counts
	}
	code := run(s.ctx, &env, append(append(grep, "-H", "--"), files...))
	if counts != nil {
		counts.flush()
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// head8k is the start of a worktree file, where git looks for a NUL to
// call it binary; ok is false when it is not a regular file there.
func (r *repo) head8k(p string) ([]byte, bool) {
	fi, err := r.fs.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	f, err := r.fs.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	buf := make([]byte, 8000)
	n, _ := io.ReadFull(f, buf)
	return buf[:n], true
}

// dropZeroCounts passes grep -c's lines on but those of files without a
// match, which git grep -c leaves out.
type dropZeroCounts struct {
	w    io.Writer
	line []byte
}

func (d *dropZeroCounts) Write(p []byte) (int, error) {
	for _, c := range p {
		d.line = append(d.line, c)
		if c == '\n' {
			d.flush()
		}
	}
	return len(p), nil
}

func (d *dropZeroCounts) flush() {
	if len(d.line) > 0 && !bytes.HasSuffix(d.line, []byte(":0\n")) {
		_, _ = d.w.Write(d.line)
	}
	d.line = d.line[:0]
}
