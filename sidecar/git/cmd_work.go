package git

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const defaultBranchHint = `hint: Using 'master' as the name for the initial branch. This default branch name
hint: is subject to change. To configure the initial branch name to use in all
hint: of your new repositories, which will suppress this warning, call:
hint: 
hint: 	git config --global init.defaultBranch <name>
hint: 
hint: Names commonly chosen instead of 'master' are 'main', 'trunk' and
hint: 'development'. The just-created branch can be renamed via this command:
hint: 
hint: 	git branch -m <name>
`

const (
	defaultExclude = `# git ls-files --others --exclude-from=.git/info/exclude
# Lines that start with '#' are comments.
# For a project mostly in C, the following would be a good set of
# exclude patterns (uncomment them if you want to use them):
# *.[oa]
# *~
`
	defaultDescription = "Unnamed repository; edit this file 'description' to name the repository.\n"
	// defaultConfig is what git init writes on Linux.
	defaultConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
)

func cmdInit(s *session, args []string) error {
	quiet, branch, dir := false, "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case (a == "-b" || a == "--initial-branch") && i+1 < len(args):
			i++
			branch = args[i]
		case strings.HasPrefix(a, "--initial-branch="):
			branch = strings.TrimPrefix(a, "--initial-branch=")
		case strings.HasPrefix(a, "-"):
			return unsupported("git init " + a)
		case dir == "":
			dir = a
		default:
			return unsupported("git init with several directories")
		}
	}
	root := s.dir
	if dir != "" {
		root = s.env.Abs(path.Join(s.dir, dir))
		if path.IsAbs(dir) {
			root = path.Clean(dir)
		}
		if err := s.env.FS.MkdirAll(root, 0o755); err != nil {
			return err
		}
	}
	gitDir := path.Join(root, ".git")
	if fi, err := s.env.FS.Stat(gitDir); err == nil && fi.IsDir() {
		if !quiet {
			fmt.Fprintf(s.out, "Reinitialized existing Git repository in %s/\n", gitDir)
		}
		return nil
	}
	if branch == "" {
		if v, ok := s.globalConfig("init.defaultbranch"); ok {
			branch = v
		} else {
			branch = "master"
			if !quiet {
				fmt.Fprint(s.errw, defaultBranchHint)
			}
		}
	}
	if !plumbing.NewBranchReferenceName(branch).IsBranch() || strings.ContainsAny(branch, " ~^:?*[\\") {
		return fatalf("invalid initial branch name: '%s'", branch)
	}
	wtfs := newBillyFS(s.ctx, s.env.FS, root)
	dot := newBillyFS(s.ctx, s.env.FS, gitDir)
	_, err := gogit.InitWithOptions(s.newStorage(dot).Storage, wtfs, gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)})
	if err != nil {
		return fmt.Errorf("init %s: %w", root, err)
	}
	// What real git's template adds and tools expect to find.
	for name, content := range map[string]string{"info/exclude": defaultExclude, "description": defaultDescription, "config": defaultConfig} {
		f, err := dot.Create(name)
		if err != nil {
			return err
		}
		if _, err := f.Write([]byte(content)); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if !quiet {
		fmt.Fprintf(s.out, "Initialized empty Git repository in %s/\n", gitDir)
	}
	return nil
}

// globalConfig reads a key from -c overrides and ~/.gitconfig only (for
// commands that run outside a repository).
func (s *session) globalConfig(key string) (string, bool) {
	if v, ok := s.overrides[key]; ok {
		return v, true
	}
	home := s.env.Getenv("HOME")
	if home == "" {
		return "", false
	}
	return userConfigValue(newBillyFS(s.ctx, s.env.FS, home), key)
}

// pathspecs maps user path arguments to repository paths, refusing glob
// patterns (not supported) and paths outside the repository.
func (r *repo) pathspecs(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if strings.ContainsAny(a, "*?[") || strings.HasPrefix(a, ":") {
			return nil, unsupported("pathspec patterns ('" + a + "')")
		}
		p, err := r.rel(a)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// splitDashDash separates options from paths at "--".
func splitDashDash(args []string) (opts, paths []string, dashdash bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

func cmdAdd(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	all, update, force, verbose, dryRun := false, false, false, false, false
	var rest []string
	for _, a := range opts {
		switch a {
		case "-A", "--all":
			all = true
		case "-u", "--update":
			update = true
		case "-f", "--force":
			force = true
		case "-v", "--verbose":
			verbose = true
		case "-n", "--dry-run":
			dryRun = true
		default:
			if strings.HasPrefix(a, "-") && a != "-" {
				return unsupported("git add " + a)
			}
			rest = append(rest, a)
		}
	}
	paths = append(rest, paths...)
	r, err := s.open()
	if err != nil {
		return err
	}
	if len(paths) == 0 && !all && !update {
		fmt.Fprint(s.errw, "Nothing specified, nothing added.\nhint: Maybe you wanted to say 'git add .'?\nhint: Turn this message off by running\nhint: \"git config advice.addEmptyPathspec false\"\n")
		return nil
	}
	rel, err := r.pathspecs(paths)
	if err != nil {
		return err
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	sc := r.newScanner(idx)
	sc.allUntracked = true
	var ignoredArgs []string
	var forced []*wtFile
	for i, p := range rel {
		// What a symlink in the worktree leads to is not the repository's
		// to add: it would be committed under a path the worktree lacks.
		if d := r.leadingNonDir(p); d != "" {
			if fi, err := r.fs.Lstat(d); err == nil && fi.Mode()&iofs.ModeSymlink != 0 {
				return fatalf("pathspec '%s' is beyond a symbolic link", paths[i])
			}
		}
		fi, err := r.fs.Lstat(p)
		tracked := underIndex(idx, p)
		if err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		if err != nil && !tracked {
			return fatalf("pathspec '%s' did not match any files", paths[i])
		}
		if err == nil && !tracked && p != "" && r.isIgnored(p, fi.IsDir()) {
			if force {
				if mode, ok := fileMode(fi); ok {
					forced = append(forced, &wtFile{path: p, fi: fi, mode: mode})
				}
				continue
			}
			ignoredArgs = append(ignoredArgs, paths[i])
		}
	}
	res, err := sc.scan(rel)
	if err != nil {
		return err
	}
	var names []string
	changed := false
	for _, p := range res.modified {
		names = append(names, "add '"+p+"'")
		if !dryRun {
			if err := r.stage(idx, res.files[p]); err != nil {
				return err
			}
		}
		changed = true
	}
	for _, p := range res.deleted {
		names = append(names, "remove '"+p+"'")
		if !dryRun {
			idx.remove(p)
		}
		changed = true
	}
	if !update {
		for _, p := range res.untracked {
			names = append(names, "add '"+p+"'")
			if !dryRun {
				if err := r.stage(idx, res.files[p]); err != nil {
					return err
				}
			}
			changed = true
		}
		for _, f := range forced {
			names = append(names, "add '"+f.path+"'")
			if !dryRun {
				if err := r.stage(idx, f); err != nil {
					return err
				}
			}
			changed = true
		}
	}
	if !dryRun && len(res.stale) > 0 {
		for _, p := range res.stale {
			if e, ok := idx.entry(p); ok {
				setStat(e, res.files[p])
			}
		}
		changed = true
	}
	if verbose || dryRun {
		for _, n := range names {
			fmt.Fprintln(s.out, n)
		}
	}
	if changed && !dryRun {
		if err := r.setIndex(idx); err != nil {
			return err
		}
	}
	if len(ignoredArgs) > 0 {
		return errorf(1, "The following paths are ignored by one of your .gitignore files:\n%s\nhint: Use -f if you really want to add them.\nhint: Turn this message off by running\nhint: \"git config advice.addIgnoredFile false\"\n", strings.Join(ignoredArgs, "\n"))
	}
	return nil
}

// underIndex reports whether the index tracks p or anything below it.
func underIndex(idx *gitIndex, p string) bool {
	for _, e := range idx.Entries {
		if p == "" || e.Name == p || strings.HasPrefix(e.Name, p+"/") {
			return true
		}
	}
	return false
}

func cmdRm(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	cached, recursive, force, quiet := false, false, false, false
	var rest []string
	for _, a := range opts {
		switch a {
		case "--cached":
			cached = true
		case "-r":
			recursive = true
		case "-f", "--force":
			force = true
		case "-q", "--quiet":
			quiet = true
		case "-rf", "-fr":
			recursive, force = true, true
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git rm " + a)
			}
			rest = append(rest, a)
		}
	}
	paths = append(rest, paths...)
	r, err := s.open()
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errorf(129, "usage: git rm [<options>] [--] <file>...\n")
	}
	rel, err := r.pathspecs(paths)
	if err != nil {
		return err
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	headSnap, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	var targets []string
	for i, p := range rel {
		var matched []string
		for _, e := range idx.Entries {
			if e.Name == p || p == "" || strings.HasPrefix(e.Name, p+"/") {
				matched = append(matched, e.Name)
			}
		}
		if len(matched) == 0 {
			return fatalf("pathspec '%s' did not match any files", paths[i])
		}
		if !recursive && (len(matched) > 1 || matched[0] != p) {
			return fatalf("not removing '%s' recursively without -r", paths[i])
		}
		targets = append(targets, matched...)
	}
	if !force {
		sc := r.newScanner(idx)
		res, err := sc.scan(targets)
		if err != nil {
			return err
		}
		modified := map[string]bool{}
		for _, p := range res.modified {
			modified[p] = true
		}
		var both, stagedOnly, localOnly []string
		for _, p := range targets {
			e, _ := idx.entry(p)
			hb, inHead := headSnap[p]
			stagedDiff := !inHead || hb.hash != e.Hash || hb.mode != e.Mode
			switch {
			case stagedDiff && modified[p]:
				both = append(both, p)
			case stagedDiff && !cached && inHead:
				stagedOnly = append(stagedOnly, p)
			case stagedDiff && !cached:
				stagedOnly = append(stagedOnly, p)
			case modified[p] && !cached:
				localOnly = append(localOnly, p)
			}
		}
		var msg strings.Builder
		list := func(what string, ps []string, hint string) {
			if len(ps) == 0 {
				return
			}
			fmt.Fprintf(&msg, "error: the following %s:\n", fmt.Sprintf(what, plural(len(ps), "file has", "files have")))
			for _, p := range ps {
				fmt.Fprintf(&msg, "    %s\n", p)
			}
			msg.WriteString(hint)
		}
		list("%s staged content different from both the\nfile and the HEAD", both, "(use -f to force removal)\n")
		list("%s changes staged in the index", stagedOnly, "(use --cached to keep the file, or -f to force removal)\n")
		list("%s local modifications", localOnly, "(use --cached to keep the file, or -f to force removal)\n")
		if msg.Len() > 0 {
			return errorf(1, "%s", msg.String())
		}
	}
	for _, p := range targets {
		if !quiet {
			fmt.Fprintf(s.out, "rm '%s'\n", p)
		}
		idx.remove(p)
		if !cached {
			if err := r.fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
				return err
			}
			removeEmptyParents(r.fs, p)
		}
	}
	return r.setIndex(idx)
}

// removeEmptyParents removes the directories above p that are now empty,
// as git does when it deletes a file.
func removeEmptyParents(b *billyFS, p string) {
	for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if b.Remove(d) != nil {
			return
		}
	}
}

func cmdMv(s *session, args []string) error {
	opts, paths, _ := splitDashDash(args)
	var rest []string
	for _, a := range opts {
		if strings.HasPrefix(a, "-") {
			return unsupported("git mv " + a)
		}
		rest = append(rest, a)
	}
	paths = append(rest, paths...)
	if len(paths) != 2 {
		return unsupported("git mv with other than one source and one destination")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	rel, err := r.pathspecs(paths)
	if err != nil {
		return err
	}
	src, dst := rel[0], rel[1]
	if fi, err := r.fs.Stat(dst); err == nil && fi.IsDir() {
		dst = path.Join(dst, path.Base(src))
	}
	bad := func(what string) error {
		return fatalf("%s, source=%s, destination=%s", what, src, dst)
	}
	sfi, err := r.fs.Lstat(src)
	if err != nil {
		return bad("bad source")
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	var moved []*index.Entry
	for _, e := range idx.Entries {
		if e.Name == src || (sfi.IsDir() && strings.HasPrefix(e.Name, src+"/")) {
			moved = append(moved, e)
		}
	}
	if len(moved) == 0 {
		return bad("not under version control")
	}
	if _, err := r.fs.Lstat(dst); err == nil {
		return bad("destination exists")
	}
	if err := r.fs.Rename(src, dst); err != nil {
		return err
	}
	for _, e := range moved {
		e.Name = dst + strings.TrimPrefix(e.Name, src)
	}
	return r.setIndex(idx)
}

func cmdCommit(s *session, args []string) error {
	var msgs []string
	all, amend, allowEmpty, quiet, noEdit := false, false, false, false, false
	msgFile := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			i++
			msgs = append(msgs, args[i])
		case strings.HasPrefix(a, "--message="):
			msgs = append(msgs, strings.TrimPrefix(a, "--message="))
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			msgs = append(msgs, a[2:])
		case (a == "-F" || a == "--file") && i+1 < len(args):
			i++
			msgFile = args[i]
		case a == "-a" || a == "--all":
			all = true
		case a == "-am" && i+1 < len(args):
			all = true
			i++
			msgs = append(msgs, args[i])
		case a == "--amend":
			amend = true
		case a == "--allow-empty":
			allowEmpty = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--no-edit":
			noEdit = true
		default:
			return unsupported("git commit " + a)
		}
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	if msgFile != "" {
		data, err := readAll(newBillyFS(s.ctx, s.env.FS, "/"), s.env.Abs(path.Join(s.dir, msgFile)))
		if err != nil {
			return fatalf("could not read log file '%s': %v", msgFile, err)
		}
		msgs = append(msgs, string(data))
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	if amend && h.commit == nil {
		return fatalf("You have nothing to amend.")
	}
	msg := ""
	switch {
	case len(msgs) > 0:
		msg = cleanupMessage(strings.Join(msgs, "\n\n"))
	case amend && noEdit:
		msg = h.commit.Message
	case amend:
		return unsupported("git commit --amend without -m or --no-edit (no editor)")
	default:
		return unsupported("git commit without -m or -F (no editor)")
	}
	if msg == "" {
		return errorf(1, "Aborting commit due to empty commit message.\n")
	}
	idx, err := r.index()
	if err != nil {
		return err
	}
	if all {
		sc := r.newScanner(idx)
		res, err := sc.scan(nil)
		if err != nil {
			return err
		}
		for _, p := range res.modified {
			if err := r.stage(idx, res.files[p]); err != nil {
				return err
			}
		}
		for _, p := range res.deleted {
			idx.remove(p)
		}
		if len(res.modified)+len(res.deleted) > 0 {
			if err := r.setIndex(idx); err != nil {
				return err
			}
		}
	}
	// What is staged decides; the worktree is scanned only to explain
	// why there is nothing to commit.
	headSnap, err := r.commitSnapshot(h.commit)
	if err != nil {
		return err
	}
	idxSnap := r.indexSnapshot(idx)
	staged, err := withRenames(compare(headSnap, idxSnap))
	if err != nil {
		return err
	}
	if len(staged) == 0 && !allowEmpty && !amend {
		st, err := r.state(false)
		if err != nil {
			return err
		}
		r.statusLong(s.out, st, "Initial commit")
		return &exitError{code: 1}
	}
	author, committer, err := r.identities()
	if err != nil {
		return err
	}
	if amend {
		a := h.commit.Author
		author = &a
	}
	hash, err := r.wt.Commit(msg, &gogit.CommitOptions{
		Author: author, Committer: committer, AllowEmptyCommits: true, Amend: amend,
	})
	if err != nil {
		return err
	}
	c, err := r.r.CommitObject(hash)
	if err != nil {
		return err
	}
	kind := "commit"
	switch {
	case amend:
		kind = "commit (amend)"
	case h.commit == nil:
		kind = "commit (initial)"
	}
	firstLine, _, _ := strings.Cut(msg, "\n")
	if err := r.logHeadMove(h, hash, kind+": "+firstLine); err != nil {
		return err
	}
	// The new tree is the index: remember it flattened for the next
	// status.
	files := make([]treeFile, 0, len(idxSnap))
	for _, b := range idxSnap {
		files = append(files, treeFile{path: b.path, mode: b.mode, hash: b.hash})
	}
	cacheTree(c.TreeHash, files)
	if quiet {
		return nil
	}
	if amend {
		if staged, err = r.commitChanges(c); err != nil {
			return err
		}
	}
	return r.printCommitSummary(c, h, staged, amend)
}

// printCommitSummary is the "[branch hash] subject" block git commit
// prints, with --shortstat --summary of the change; showDate adds the
// author date, as amend, cherry-pick and revert print it.
func (r *repo) printCommitSummary(c *object.Commit, before *head, cs []change, showDate bool) error {
	where := before.branch
	if where == "" {
		where = "detached HEAD"
	}
	if before.commit == nil {
		where += " (root-commit)"
	}
	fmt.Fprintf(r.out, "[%s %s] %s\n", where, r.abbrev(c.Hash), subject(c.Message))
	if c.Author.Name != c.Committer.Name || c.Author.Email != c.Committer.Email {
		fmt.Fprintf(r.out, " Author: %s <%s>\n", c.Author.Name, c.Author.Email)
	}
	if showDate {
		fmt.Fprintf(r.out, " Date: %s\n", gitDate(c.Author.When))
	}
	return diffOutput{shortstat: true, summary: true}.write(r.out, cs, r.abbrev)
}

// commitChanges is what a commit changed against its first parent.
func (r *repo) commitChanges(c *object.Commit) ([]change, error) {
	var parent *object.Commit
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		parent = p
	}
	a, err := r.commitSnapshot(parent)
	if err != nil {
		return nil, err
	}
	b, err := r.commitSnapshot(c)
	if err != nil {
		return nil, err
	}
	return withRenames(compare(a, b))
}

// cleanupMessage is git's default "strip" cleanup: trailing whitespace
// and leading/trailing blank lines removed, runs of blank lines collapsed,
// # comments kept (with -m git keeps them too), one final newline.
func cleanupMessage(m string) string {
	lines := strings.Split(m, "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

// subject is the first paragraph of a message joined into one line.
func subject(m string) string {
	para, _, _ := strings.Cut(strings.TrimLeft(m, "\n"), "\n\n")
	lines := strings.Split(strings.TrimRight(para, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}
