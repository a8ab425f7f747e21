package git

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"strconv"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// cmdClone clones a repository of the workspace (a path or file:// URL):
// every object and ref is copied through the fs core, then the default
// branch is checked out. The shell backend has no network, so network
// remotes get a clear error. A bundle file (git bundle create) is
// read through its header and packfile.
func cmdClone(s *session, args []string) error {
	quiet, branch, depth := false, "", 0
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--depth" && i+1 < len(args) || strings.HasPrefix(a, "--depth="):
			v, ok := strings.CutPrefix(a, "--depth=")
			if !ok {
				i++
				v = args[i]
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fatalf("depth %s is not a positive number", v)
			}
			depth = n
		case (a == "-b" || a == "--branch") && i+1 < len(args):
			i++
			branch = args[i]
		case strings.HasPrefix(a, "-"):
			return unsupported("git clone " + a)
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 || len(rest) > 2 {
		return fatalf("You must specify a repository to clone.")
	}
	src := rest[0]
	remote := isNetworkURL(src)
	srcAbs := src // what origin's url is
	if !remote {
		if depth > 0 {
			return unsupported("git clone --depth of a local repository")
		}
		src = strings.TrimPrefix(src, "file://")
		srcAbs = s.env.Abs(path.Join(s.dir, src))
		if path.IsAbs(src) {
			srcAbs = path.Clean(src)
		}
	}
	name := rest[0]
	if len(rest) == 2 {
		name = rest[1]
	} else {
		name = strings.TrimSuffix(strings.TrimSuffix(path.Base(strings.TrimSuffix(srcAbs, "/.git")), ".git"), ".bundle")
	}
	dst := s.env.Abs(path.Join(s.dir, name))
	if path.IsAbs(name) {
		dst = path.Clean(name)
	}
	if ents, err := s.env.FS.ReadDir(dst); err == nil && len(ents) > 0 {
		return fatalf("destination path '%s' already exists and is not an empty directory.", name)
	} else if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fatalf("destination path '%s' already exists and is not an empty directory.", name)
	}
	var source *cloneSource
	var err error
	if remote {
		// git names the destination before it asks the server anything.
		if !quiet {
			fmt.Fprintf(s.errw, "Cloning into '%s'...\n", name)
		}
		if source, err = s.netSource(src, depth); err != nil {
			return err
		}
	} else {
		source, err = s.cloneSource(srcAbs)
	}
	if errors.Is(err, errNotBundle) {
		return errorf(128, "error: '%s' %v\nfatal: invalid gitfile format: %s\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n", srcAbs, err, srcAbs)
	}
	if err != nil {
		return errorf(128, "fatal: repository '%s' does not exist\n", rest[0])
	}
	defer source.close()
	if !quiet && !remote {
		fmt.Fprintf(s.errw, "Cloning into '%s'...\n", name)
	}
	if source.bundle != nil && len(source.bundle.prereqs) > 0 {
		// A new repository has none of the commits a bundle builds on.
		var b strings.Builder
		b.WriteString("error: Repository lacks these prerequisite commits:\n")
		for _, h := range source.bundle.prereqs {
			fmt.Fprintf(&b, "error: %s \n", h)
		}
		b.WriteString("fatal: remote transport reported error\n")
		return errorf(128, "%s", b.String())
	}
	initBranch := "master"
	if v, ok := s.globalConfig("init.defaultbranch"); ok {
		initBranch = v
	}
	// remoteHead is the source's HEAD branch (origin/HEAD); defBranch is
	// the branch checked out.
	remoteHead := initBranch
	switch {
	case source.head == nil:
	case source.head.Type() == plumbing.SymbolicReference:
		remoteHead = source.head.Target().Short()
	default:
		if b, ok := guessHead(source.head, source.refs, initBranch); ok {
			remoteHead = b
		}
	}
	defBranch := remoteHead
	if branch != "" {
		defBranch = branch
	}
	if err := s.env.FS.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	wtfs := newBillyFS(s.ctx, s.env.FS, dst)
	dot := newBillyFS(s.ctx, s.env.FS, path.Join(dst, ".git"))
	if _, err := gogit.InitWithOptions(s.newStorage(dot).Storage, wtfs, gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(defBranch)}); err != nil {
		return err
	}
	r, err := s.openAt(dst)
	if err != nil {
		return err
	}
	if err := source.copyObjects(s, r, defBranch); err != nil {
		// Nothing half-fetched is left behind, as git removes it.
		if rerr := s.env.FS.RemoveAll(dst); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	var tip, remoteTip plumbing.Hash
	found := false
	for _, ref := range source.refs {
		switch {
		case ref.Name().IsBranch():
			if ref.Name().Short() == defBranch {
				tip, found = ref.Hash(), true
			}
			if ref.Name().Short() == remoteHead {
				remoteTip = ref.Hash()
			}
			err = r.r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", ref.Name().Short()), ref.Hash()))
		case ref.Name().IsTag():
			err = r.r.Storer.SetReference(ref)
		}
		if err != nil {
			return err
		}
	}
	cfg, err := r.r.Config()
	if err != nil {
		return err
	}
	fetch := config.RefSpec("+refs/heads/*:refs/remotes/origin/*")
	if depth > 0 {
		// --depth implies --single-branch, as in git.
		fetch = config.RefSpec("+refs/heads/" + defBranch + ":refs/remotes/origin/" + defBranch)
	}
	cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{srcAbs}, Fetch: []config.RefSpec{fetch}}
	cfg.Branches[defBranch] = &config.Branch{Name: defBranch, Remote: "origin", Merge: plumbing.NewBranchReferenceName(defBranch)}
	if !found {
		if branch != "" {
			return fatalf("Remote branch %s not found in upstream origin", branch)
		}
		if err := r.r.SetConfig(cfg); err != nil {
			return err
		}
		if source.head == nil && len(source.refs) > 0 {
			fmt.Fprintln(s.errw, "warning: remote HEAD refers to nonexistent ref, unable to checkout")
			return nil
		}
		fmt.Fprintln(s.errw, "warning: You appear to have cloned an empty repository.")
		if !quiet && !remote {
			fmt.Fprintln(s.errw, "done.")
		}
		return nil
	}
	if err := r.r.SetConfig(cfg); err != nil {
		return err
	}
	// A single-branch clone (--depth) has origin/HEAD only if HEAD's
	// branch is the one fetched.
	originHead := depth == 0 || remoteHead == defBranch
	if originHead {
		if err := r.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.NewRemoteHEADReferenceName("origin"), plumbing.NewRemoteReferenceName("origin", remoteHead))); err != nil {
			return err
		}
	}
	if err := r.r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(defBranch), tip)); err != nil {
		return err
	}
	c, err := r.r.CommitObject(tip)
	if err != nil {
		return err
	}
	if _, err := r.moveTo(&head{branch: defBranch}, c, true); err != nil {
		return err
	}
	fromMsg := "clone: from " + srcAbs
	if err := r.logHeadMove(&head{branch: defBranch}, tip, fromMsg); err != nil {
		return err
	}
	if originHead {
		if err := r.logRef(plumbing.NewRemoteHEADReferenceName("origin"), plumbing.ZeroHash, remoteTip, fromMsg); err != nil {
			return err
		}
	}
	if !quiet && source.bundle == nil && !remote {
		// Only a local clone says so.
		fmt.Fprintln(s.errw, "done.")
	}
	return nil
}

// cloneSource is what a clone copies: a repository of the workspace or a
// bundle file.
type cloneSource struct {
	head   *plumbing.Reference   // symbolic, or by hash in a bundle; nil if none
	refs   []*plumbing.Reference // by hash
	repo   *gogit.Repository
	bundle *bundle
	net    *netSource
}

func (s *session) cloneSource(p string) (*cloneSource, error) {
	if fi, err := s.env.FS.Stat(p); err == nil && fi.Mode().IsRegular() {
		f, err := newBillyFS(s.ctx, s.env.FS, path.Dir(p)).Open(path.Base(p))
		if err != nil {
			return nil, err
		}
		b, err := readBundle(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		src := &cloneSource{bundle: b}
		for _, ref := range b.refs {
			if ref.Name() == plumbing.HEAD {
				src.head = ref
			} else {
				src.refs = append(src.refs, ref)
			}
		}
		return src, nil
	}
	repo, err := s.openSource(p)
	if err != nil {
		return nil, err
	}
	src := &cloneSource{repo: repo}
	if src.head, err = repo.Reference(plumbing.HEAD, false); err != nil {
		return nil, err
	}
	refs, err := repo.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			src.refs = append(src.refs, ref)
		}
		return nil
	})
	return src, err
}

func (src *cloneSource) close() {
	if src.bundle != nil {
		src.bundle.file.Close()
	}
}

// copyObjects stores the source's objects in r: a bundle's packfile is
// indexed and kept as a pack, as git does; a repository's objects are
// copied one by one; a network remote's are fetched as a pack (with
// --depth, only branch's history to that depth, and the tags it reaches).
// A received pack must hold everything its refs reach (checkConnected).
func (src *cloneSource) copyObjects(s *session, r *repo, branch string) error {
	if src.net != nil || src.bundle != nil {
		if err := src.receive(s, r, branch); err != nil {
			return err
		}
		tips := make([]plumbing.Hash, len(src.refs))
		for i, ref := range src.refs {
			tips[i] = ref.Hash()
		}
		return r.checkConnected(tips, nil, 128, "fatal: remote did not send all necessary objects\n")
	}
	objs, err := src.repo.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return err
	}
	return objs.ForEach(func(o plumbing.EncodedObject) error {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		_, err := r.r.Storer.SetEncodedObject(o)
		return err
	})
}

// receive stores a network remote's or a bundle's pack in r.
func (src *cloneSource) receive(s *session, r *repo, branch string) error {
	if src.net != nil {
		return src.fetch(s, r, branch)
	}
	err := packfile.UpdateObjectStorage(r.r.Storer, src.bundle.pack)
	var bad *badPackError
	if errors.As(err, &bad) {
		return errorf(128, "fatal: %s\nerror: index-pack died\nfatal: remote transport reported error\n", bad.msg)
	} else if err != nil {
		return fmt.Errorf("bundle packfile: %w", err)
	}
	return nil
}

// openSource opens a repository to clone from: a worktree with .git, or a
// bare repository.
func (s *session) openSource(dir string) (*gogit.Repository, error) {
	gitDir := dir
	if fi, err := s.env.FS.Stat(path.Join(dir, ".git")); err == nil && fi.IsDir() {
		gitDir = path.Join(dir, ".git")
	}
	if _, err := s.env.FS.Stat(path.Join(gitDir, "HEAD")); err != nil {
		return nil, err
	}
	return gogit.Open(s.newStorage(newBillyFS(s.ctx, s.env.FS, gitDir)), nil)
}

// upstream is the branch's configured upstream and how far apart they are.
type upstream struct {
	name          string // e.g. origin/master
	ahead, behind int
	gone          bool
	unborn        bool // the local branch has no commits yet
}

func (r *repo) upstream(h *head) (*upstream, error) {
	if h.branch == "" {
		return nil, nil
	}
	cfg, err := r.r.Config()
	if err != nil {
		return nil, err
	}
	b, ok := cfg.Branches[h.branch]
	if !ok || b.Remote == "" || !b.Merge.IsBranch() {
		return nil, nil
	}
	up := &upstream{name: b.Remote + "/" + b.Merge.Short()}
	ref, ok, err := r.ref(plumbing.NewRemoteReferenceName(b.Remote, b.Merge.Short()))
	if err != nil {
		return nil, err
	}
	if !ok || h.commit == nil {
		up.gone = true
		up.unborn = h.commit == nil
		return up, nil
	}
	other, err := r.r.CommitObject(ref.Hash())
	if err != nil {
		return nil, err
	}
	mine, err := r.reachable([]*object.Commit{h.commit})
	if err != nil {
		return nil, err
	}
	theirs, err := r.reachable([]*object.Commit{other})
	if err != nil {
		return nil, err
	}
	for c := range mine {
		if !theirs[c] {
			up.ahead++
		}
	}
	for c := range theirs {
		if !mine[c] {
			up.behind++
		}
	}
	return up, nil
}

func commits(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "commit", "commits")) }

// longText is the tracking paragraph of git status.
func (u *upstream) longText() string {
	switch {
	case u.gone:
		return fmt.Sprintf("Your branch is based on '%s', but the upstream is gone.\n  (use \"git branch --unset-upstream\" to fixup)\n", u.name)
	case u.ahead > 0 && u.behind > 0:
		return fmt.Sprintf("Your branch and '%s' have diverged,\nand have %d and %d different commits each, respectively.\n  (use \"git pull\" to merge the remote branch into yours)\n", u.name, u.ahead, u.behind)
	case u.ahead > 0:
		return fmt.Sprintf("Your branch is ahead of '%s' by %s.\n  (use \"git push\" to publish your local commits)\n", u.name, commits(u.ahead))
	case u.behind > 0:
		return fmt.Sprintf("Your branch is behind '%s' by %s, and can be fast-forwarded.\n  (use \"git pull\" to update your local branch)\n", u.name, commits(u.behind))
	}
	return fmt.Sprintf("Your branch is up to date with '%s'.\n", u.name)
}

// shortText is the "...upstream [ahead N]" part of status -b.
func (u *upstream) shortText() string {
	s := "..." + u.name
	switch {
	case u.gone:
		s += " [gone]"
	case u.ahead > 0 && u.behind > 0:
		s += fmt.Sprintf(" [ahead %d, behind %d]", u.ahead, u.behind)
	case u.ahead > 0:
		s += fmt.Sprintf(" [ahead %d]", u.ahead)
	case u.behind > 0:
		s += fmt.Sprintf(" [behind %d]", u.behind)
	}
	return s
}
