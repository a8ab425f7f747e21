package git

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

func cmdDiff(s *session, args []string) error {
	opts, paths, dashdash := splitDashDash(args)
	var o diffOutput
	cached, quiet, exitCode, noRenames := false, false, false, false
	var revs []string
	for _, a := range opts {
		switch a {
		case "--cached", "--staged":
			cached = true
		case "--stat":
			o.stat = true
		case "--shortstat":
			o.shortstat = true
		case "--name-only":
			o.nameOnly = true
		case "--name-status":
			o.nameStatus = true
		case "--summary":
			o.summary = true
		case "-p", "-u", "--patch":
			o.patch = true
		case "--quiet":
			quiet, exitCode = true, true
		case "--exit-code":
			exitCode = true
		case "--no-renames":
			noRenames = true
		case "--no-color":
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git diff " + a)
			}
			revs = append(revs, a)
		}
	}
	if !o.any() {
		o.patch = true
	}
	r, err := s.open()
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 128 {
		return errorf(129, "warning: Not a git repository. Use --no-index to compare two paths outside a working tree\ngit diff --no-index: %v\n", errUnsupported)
	}
	if err != nil {
		return err
	}
	if !dashdash && len(revs) > 0 {
		// Arguments that are not revisions are paths, as git guesses.
		var rs []string
		for i, a := range revs {
			if _, err := r.resolve(strings.Split(a, "..")[0] + ""); err == nil || strings.Contains(a, "..") {
				rs = append(rs, a)
				continue
			}
			if _, err := r.fs.Lstat(mustRel(r, a)); err == nil {
				paths = append(paths, revs[i:]...)
				break
			}
			_, err := r.resolve(a)
			return err
		}
		revs = rs
	}
	rel := make([]string, 0, len(paths))
	for _, p := range paths {
		rp, err := r.rel(p)
		if err != nil {
			return err
		}
		rel = append(rel, rp)
	}
	if len(revs) == 1 && strings.Contains(revs[0], "..") {
		a, b, _ := strings.Cut(revs[0], "..")
		revs = []string{orHead(a), orHead(b)}
	}
	var from, to snapshot
	idx, err := r.index()
	if err != nil {
		return err
	}
	worktree := func() (snapshot, error) {
		sc := r.newScanner(idx)
		res, err := sc.scan(rel)
		if err != nil {
			return nil, err
		}
		if err := r.refresh(idx, res); err != nil {
			return nil, err
		}
		return r.worktreeSnapshot(idx, res), nil
	}
	switch {
	case len(revs) > 2 || (cached && len(revs) > 1):
		return unsupported("git diff with these revisions")
	case len(revs) == 2:
		a, err := r.resolve(revs[0])
		if err != nil {
			return err
		}
		b, err := r.resolve(revs[1])
		if err != nil {
			return err
		}
		if from, err = r.commitSnapshot(a); err != nil {
			return err
		}
		if to, err = r.commitSnapshot(b); err != nil {
			return err
		}
	case cached:
		rev := "HEAD"
		if len(revs) == 1 {
			rev = revs[0]
		}
		var err error
		if from, err = r.revSnapshot(rev); err != nil {
			return err
		}
		to = r.indexSnapshot(idx)
	case len(revs) == 1:
		c, err := r.resolve(revs[0])
		if err != nil {
			return err
		}
		if from, err = r.commitSnapshot(c); err != nil {
			return err
		}
		if to, err = worktree(); err != nil {
			return err
		}
	default:
		from = r.indexSnapshot(idx)
		if to, err = worktree(); err != nil {
			return err
		}
	}
	renames := !noRenames && (len(revs) > 0 || cached)
	cs := compare(restrict(from, rel), restrict(to, rel))
	if renames {
		if cs, err = withRenames(cs); err != nil {
			return err
		}
	}
	cs = filterChanges(cs, rel)
	if !quiet {
		if err := o.write(s.out, cs, r.abbrev); err != nil {
			return err
		}
	}
	if exitCode && len(cs) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func orHead(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}

func mustRel(r *repo, arg string) string {
	p, err := r.rel(arg)
	if err != nil {
		return "\x00"
	}
	return p
}

// restrict keeps the files of s under the paths.
func restrict(s snapshot, paths []string) snapshot {
	if len(paths) == 0 {
		return s
	}
	out := snapshot{}
	for p, b := range s {
		if underAny(p, paths) {
			out[p] = b
		}
	}
	return out
}

func cmdRevParse(s *session, args []string) error {
	short, abbrevRef, verify, quiet := false, false, false, false
	shortLen := -1
	var revs []string
	var r *repo
	openRepo := func() error {
		if r != nil {
			return nil
		}
		var err error
		r, err = s.open()
		return err
	}
	for _, a := range args {
		switch {
		case a == "--short":
			short = true
		case strings.HasPrefix(a, "--short="):
			short = true
			fmt.Sscanf(strings.TrimPrefix(a, "--short="), "%d", &shortLen)
		case a == "--abbrev-ref":
			abbrevRef = true
		case a == "--verify":
			verify = true
		case a == "-q" || a == "--quiet": // meaningful with --verify only
			quiet = true
		case a == "--show-toplevel":
			if err := openRepo(); err != nil {
				return err
			}
			fmt.Fprintln(s.out, r.root)
		case a == "--git-dir":
			if err := openRepo(); err != nil {
				return err
			}
			if r.dir == r.root {
				fmt.Fprintln(s.out, ".git")
			} else {
				fmt.Fprintln(s.out, r.root+"/.git")
			}
		case a == "--is-inside-work-tree":
			if err := openRepo(); err != nil {
				return err
			}
			fmt.Fprintln(s.out, "true")
		case a == "--is-bare-repository":
			if err := openRepo(); err != nil {
				return err
			}
			fmt.Fprintln(s.out, "false")
		case a == "--show-prefix":
			if err := openRepo(); err != nil {
				return err
			}
			if p := strings.TrimPrefix(strings.TrimPrefix(r.dir, r.root), "/"); p != "" {
				fmt.Fprintln(s.out, p+"/")
			} else {
				fmt.Fprintln(s.out)
			}
		case strings.HasPrefix(a, "-"):
			return unsupported("git rev-parse " + a)
		default:
			revs = append(revs, a)
		}
	}
	for _, rev := range revs {
		if err := openRepo(); err != nil {
			return err
		}
		if abbrevRef {
			named, ok, err := r.expandPrevious(rev)
			if err != nil {
				return err
			} else if ok && named != rev {
				fmt.Fprintln(s.out, named)
				continue
			}
			if rev == "HEAD" {
				h, err := r.head()
				if err != nil {
					return err
				}
				if h.branch != "" {
					fmt.Fprintln(s.out, h.branch)
					continue
				}
			}
			fmt.Fprintln(s.out, rev)
			continue
		}
		h, err := r.lookup(rev)
		var pe *peelError
		var pathErr *pathError
		switch {
		case err == nil:
		case verify && errors.As(err, &pe) && quiet:
			return errorf(1, "%s", pe.msg[:len(pe.msg)/2])
		case verify && errors.As(err, &pe):
			return errorf(128, "%sfatal: Needed a single revision\n", pe.msg[:len(pe.msg)/2])
		case verify && quiet && (errors.Is(err, errNoRevision) || errors.As(err, &pathErr)):
			return errorf(1, "") // git --verify -q says nothing
		case verify && (errors.Is(err, errNoRevision) || errors.As(err, &pathErr)):
			return fatalf("Needed a single revision")
		case errors.As(err, &pathErr):
			fmt.Fprintln(s.out, rev)
			return errorf(128, "%s", pathErr.msg)
		case errors.Is(err, errNoRevision) || errors.As(err, &pe):
			fmt.Fprintln(s.out, rev)
			msg := ""
			if pe != nil {
				msg = pe.msg
			}
			return errorf(128, "%sfatal: ambiguous argument '%s': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n", msg, rev)
		default:
			return err
		}
		if short {
			fmt.Fprintln(s.out, r.abbrevTo(h, shortLen))
		} else {
			fmt.Fprintln(s.out, h.String())
		}
	}
	return nil
}

func cmdLsFiles(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	stage, others, excludeStd := false, false, false
	for _, a := range opts {
		switch a {
		case "-s", "--stage":
			stage = true
		case "-c", "--cached":
		case "-o", "--others":
			others = true
		case "--exclude-standard":
			excludeStd = true
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git ls-files " + a)
			}
			paths = append(paths, a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	rel, err := r.pathspecs(paths)
	if err != nil {
		return err
	}
	cwd := strings.TrimPrefix(strings.TrimPrefix(r.dir, r.root), "/")
	if len(rel) == 0 {
		rel = []string{cwd}
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	if others {
		if !excludeStd {
			return unsupported("git ls-files -o without --exclude-standard")
		}
		sc := r.newScanner(idx)
		sc.allUntracked = true
		res, err := sc.scan(rel)
		if err != nil {
			return err
		}
		for _, p := range res.untracked {
			fmt.Fprintln(s.out, r.quote(r.show(p)))
		}
		return nil
	}
	names := make([]string, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if underAny(e.Name, rel) {
			names = append(names, e.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		e, _ := idx.entry(n)
		if stage {
			fmt.Fprintf(s.out, "%06o %s %d\t%s\n", uint32(e.Mode), e.Hash, e.Stage, r.quote(r.show(n)))
		} else {
			fmt.Fprintln(s.out, r.quote(r.show(n)))
		}
	}
	return nil
}
