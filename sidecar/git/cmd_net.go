package git

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// netSource is a clone's network remote.
type netSource struct {
	url   string
	auth  *execTransport
	depth int
}

// listRemote is the refs a network remote advertises (HEAD symbolic when
// the server says where it points), sorted as git prints them.
func (s *session) listRemote(url string, auth *execTransport, peeled bool) ([]*plumbing.Reference, error) {
	rem := gogit.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{url}})
	opt := gogit.IgnorePeeled
	if peeled {
		opt = gogit.AppendPeeled
	}
	refs, err := rem.ListContext(s.ctx, &gogit.ListOptions{Auth: auth, PeelingOption: opt})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, nil
	}
	if err != nil {
		return nil, s.netError(url, err)
	}
	key := func(r *plumbing.Reference) string {
		if r.Name() == plumbing.HEAD {
			return ""
		}
		n, p := strings.CutSuffix(r.Name().String(), "^{}")
		if p {
			return n + "\x01"
		}
		return n
	}
	slices.SortFunc(refs, func(a, b *plumbing.Reference) int { return strings.Compare(key(a), key(b)) })
	return refs, nil
}

// remoteRefs is the refs a network remote advertises, and the transport
// that reached it.
func (s *session) remoteRefs(url string, peeled bool) ([]*plumbing.Reference, *execTransport, error) {
	auth, err := s.network(url)
	if err != nil {
		return nil, nil, err
	}
	refs, err := s.listRemote(url, auth, peeled)
	return refs, auth, err
}

func (s *session) netSource(url string, depth int) (*cloneSource, error) {
	refs, auth, err := s.remoteRefs(url, false)
	if err != nil {
		return nil, err
	}
	src := &cloneSource{net: &netSource{url: url, auth: auth, depth: depth}}
	for _, ref := range refs {
		switch {
		case ref.Name() == plumbing.HEAD:
			src.head = ref
		case ref.Type() == plumbing.HashReference:
			src.refs = append(src.refs, ref)
		}
	}
	return src, nil
}

// fetch brings a network source's objects into r as one pack.
func (src *cloneSource) fetch(s *session, r *repo, branch string) error {
	n := src.net
	if len(src.refs) == 0 {
		return nil
	}
	specs := []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
	tags := gogit.NoTags
	if n.depth > 0 {
		found := false
		for _, ref := range src.refs {
			found = found || ref.Name() == plumbing.NewBranchReferenceName(branch)
		}
		if !found {
			return nil // clone says the branch is not there
		}
		specs = []config.RefSpec{config.RefSpec("+refs/heads/" + branch + ":refs/remotes/origin/" + branch)}
		tags = gogit.TagFollowing
	}
	rem := r.remoteFor("origin", n.url, specs)
	err := rem.FetchContext(s.ctx, &gogit.FetchOptions{RemoteName: "origin", RefSpecs: specs, Depth: n.depth, Auth: n.auth, Tags: tags})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return s.fetchError(n.url, err)
	}
	if n.depth > 0 {
		if err := src.followTags(s, r, rem); err != nil {
			return err
		}
		// Only what was fetched is set up locally.
		kept := src.refs[:0]
		for _, ref := range src.refs {
			if ref.Name() == plumbing.NewBranchReferenceName(branch) || ref.Name().IsTag() && r.r.Storer.HasEncodedObject(ref.Hash()) == nil {
				kept = append(kept, ref)
			}
		}
		src.refs = kept
	}
	return nil
}

// fetchError is git's message for a failed fetch: a pack cut short ends
// as git's fetch-pack and index-pack report it.
func (s *session) fetchError(url string, err error) error {
	var bad *badPackError
	switch {
	case s.ctx.Err() != nil:
	case errors.As(err, &bad):
		return errorf(128, "fatal: %s\nfatal: fetch-pack: invalid index-pack output\n", bad.msg)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(128, "fetch-pack: unexpected disconnect while reading sideband packet\nfatal: early EOF\nfatal: fetch-pack: invalid index-pack output\n")
	}
	return s.netError(url, err)
}

// followTags fetches the annotated tags of a shallow clone whose commits
// it has, as git's tag auto-following does in a second round.
func (src *cloneSource) followTags(s *session, r *repo, rem *gogit.Remote) error {
	n := src.net
	peeled, err := s.listRemote(n.url, n.auth, true)
	if err != nil {
		return err
	}
	have := map[string]bool{} // tags whose object is already here
	for _, ref := range peeled {
		have[ref.Name().String()] = r.r.Storer.HasEncodedObject(ref.Hash()) == nil
	}
	var specs []config.RefSpec
	for _, ref := range peeled {
		tag, ok := strings.CutSuffix(ref.Name().String(), "^{}")
		if ok && !have[tag] && have[ref.Name().String()] {
			specs = append(specs, config.RefSpec("+"+tag+":"+tag))
		}
	}
	if len(specs) == 0 {
		return nil
	}
	err = rem.FetchContext(s.ctx, &gogit.FetchOptions{RemoteName: "origin", RefSpecs: specs, Auth: n.auth, Tags: gogit.NoTags})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return s.fetchError(n.url, err)
	}
	return nil
}

// cmdLsRemote lists a network remote's refs.
func cmdLsRemote(s *session, args []string) error {
	var heads, tags, refsOnly, quiet bool
	rest, err := flags("ls-remote", args, map[string]*bool{"--heads": &heads, "-h": &heads, "--tags": &tags, "-t": &tags, "--refs": &refsOnly, "-q": &quiet, "--quiet": &quiet})
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return unsupported("git ls-remote with patterns")
	}
	url := ""
	if len(rest) == 1 && isNetworkURL(rest[0]) {
		url = rest[0]
	} else {
		r, err := s.open()
		if err != nil {
			return err
		}
		name := "origin"
		if len(rest) == 1 {
			name = rest[0]
		}
		var ok bool
		if url, ok, err = r.remoteURL(name); err != nil {
			return err
		} else if !ok && len(rest) == 0 {
			return fatalf("No remote configured to list refs from.")
		}
		if !isNetworkURL(url) {
			return unsupported("git ls-remote of a repository in the workspace")
		}
	}
	refs, _, err := s.remoteRefs(url, true)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		fmt.Fprintf(s.errw, "From %s\n", url)
	}
	byName := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, ref := range refs {
		if ref.Type() == plumbing.HashReference {
			byName[ref.Name()] = ref.Hash()
		}
	}
	for _, ref := range refs {
		name := ref.Name().String()
		h := ref.Hash()
		if ref.Type() == plumbing.SymbolicReference {
			h = byName[ref.Target()]
		}
		switch {
		case (heads || tags) && !(heads && ref.Name().IsBranch() || tags && strings.HasPrefix(name, "refs/tags/")):
			continue
		case refsOnly && (ref.Name() == plumbing.HEAD || strings.HasSuffix(name, "^{}")):
			continue
		case h.IsZero():
			continue
		}
		fmt.Fprintf(s.out, "%s\t%s\n", h, name)
	}
	return nil
}

// refUpdate is one ref a fetch or push changed, printed as git does.
type refUpdate struct {
	flag     byte   // ' ', '*', '+', '!'
	summary  string // "[new branch]", "a..b", ...
	from, to string
	suffix   string // " (forced update)", ...
}

func printUpdates(w io.Writer, header string, ups []refUpdate, pad bool) {
	if len(ups) == 0 {
		return
	}
	fmt.Fprintln(w, header)
	width := 0
	if pad {
		width = 10
		for _, u := range ups {
			width = max(width, len(u.from))
		}
	}
	for _, u := range ups {
		fmt.Fprintf(w, " %c %-17s %-*s -> %s%s\n", u.flag, u.summary, width, u.from, u.to, u.suffix)
	}
}

// snapshotRefs is the refs under prefix by name.
func (r *repo) snapshotRefs(prefixes ...string) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	it, err := r.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	out := map[plumbing.ReferenceName]plumbing.Hash{}
	err = it.ForEach(func(ref *plumbing.Reference) error {
		for _, p := range prefixes {
			if ref.Type() == plumbing.HashReference && strings.HasPrefix(ref.Name().String(), p) {
				out[ref.Name()] = ref.Hash()
			}
		}
		return nil
	})
	return out, err
}

// openRemote opens the repository and names the remote a command talks
// to: the argument, else the current branch's upstream remote, else
// origin.
func (s *session) openRemote(args []string) (*repo, string, error) {
	r, err := s.open()
	if err != nil {
		return nil, "", err
	}
	if len(args) > 0 {
		return r, args[0], nil
	}
	h, err := r.head()
	if err != nil {
		return nil, "", err
	}
	if h.branch != "" {
		cfg, err := r.r.Config()
		if err != nil {
			return nil, "", err
		}
		if b, ok := cfg.Branches[h.branch]; ok && b.Remote != "" {
			return r, b.Remote, nil
		}
	}
	return r, "origin", nil
}

// fetchRemote fetches a configured network remote with its refspecs and
// prints what changed, as git fetch does.
func (r *repo) fetchRemote(name string, quiet bool, how string) error {
	cfg, err := r.r.Config()
	if err != nil {
		return err
	}
	rc, ok := cfg.Remotes[name]
	if !ok || len(rc.URLs) == 0 {
		if isNetworkURL(name) {
			return unsupported("git fetch of a URL that is not a configured remote")
		}
		return errorf(128, "fatal: '%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n", name)
	}
	url := rc.URLs[0]
	if !isNetworkURL(url) {
		return unsupported("git fetch from a repository in the workspace")
	}
	auth, err := r.network(url)
	if err != nil {
		return err
	}
	// All refs: what they reach is already there (checkConnected).
	before, err := r.snapshotRefs("refs/")
	if err != nil {
		return err
	}
	packs, err := r.packNames()
	if err != nil {
		return err
	}
	rem := r.remoteFor(name, url, rc.Fetch)
	err = rem.FetchContext(r.ctx, &gogit.FetchOptions{RemoteName: name, RefSpecs: rc.Fetch, Auth: auth, Tags: gogit.TagFollowing, Force: true})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return r.fetchError(url, err)
	}
	after, err := r.snapshotRefs("refs/remotes/"+name+"/", "refs/tags/")
	if err != nil {
		return err
	}
	if err := r.checkFetched(url, before, after, packs); err != nil {
		return err
	}
	names := make([]plumbing.ReferenceName, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b plumbing.ReferenceName) int {
		// git lists branches before tags, each in the remote's order.
		return cmp.Or(cmp.Compare(btoi(a.IsTag()), btoi(b.IsTag())), strings.Compare(a.String(), b.String()))
	})
	var ups []refUpdate
	for _, n := range names {
		old, had := before[n]
		h := after[n]
		if had && old == h {
			continue
		}
		short := strings.TrimPrefix(n.String(), "refs/remotes/"+name+"/")
		u := refUpdate{flag: ' ', from: short, to: name + "/" + short}
		msg := how + ": fast-forward"
		switch {
		case n.IsTag():
			u = refUpdate{flag: '*', summary: "[new tag]", from: n.Short(), to: n.Short()}
		case !had:
			u.flag, u.summary = '*', "[new branch]"
			msg = how + ": storing head"
		default:
			ff, err := r.isAncestorHash(old, h)
			if err != nil {
				return err
			}
			if ff {
				u.summary = r.abbrev(old) + ".." + r.abbrev(h)
			} else {
				u.flag, u.summary, u.suffix = '+', r.abbrev(old)+"..."+r.abbrev(h), "  (forced update)"
				msg = how + ": forced-update"
			}
		}
		if !n.IsTag() {
			if err := r.logRef(n, old, h, msg); err != nil {
				return err
			}
		}
		ups = append(ups, u)
	}
	if !quiet {
		// git shows the URL without a trailing .git here.
		printUpdates(r.errw, "From "+strings.TrimSuffix(url, ".git"), ups, true)
	}
	return nil
}

// checkFetched checks that the objects the refs a fetch changed (before
// and after it) reach are all there, not past what the refs before it
// reached, as git's fetch does before it updates a ref. go-git has already
// updated them: a fetch that fails puts them back as they were and
// removes the packs it received (packs is what objects/pack held before),
// whose objects would otherwise count as had in the next fetch's
// negotiation and never be asked for again.
func (r *repo) checkFetched(url string, before, after map[plumbing.ReferenceName]plumbing.Hash, packs map[string]bool) error {
	haves := make(map[plumbing.Hash]bool, len(before)+1)
	for _, h := range before {
		haves[h] = true
	}
	if head, err := r.r.Head(); err == nil {
		haves[head.Hash()] = true // a detached HEAD
	}
	var tips []plumbing.Hash // in the refs' order, as git reports the first missing
	for _, n := range slices.Sorted(maps.Keys(after)) {
		if old, had := before[n]; !had || old != after[n] {
			tips = append(tips, after[n])
		}
	}
	err := r.checkConnected(tips, haves, 1, "error: "+url+" did not send all necessary objects\n\n")
	if err == nil {
		return nil
	}
	for n, h := range after {
		old, had := before[n]
		var rerr error
		switch {
		case !had:
			rerr = r.r.Storer.RemoveReference(n)
		case old != h:
			rerr = r.r.Storer.SetReference(plumbing.NewHashReference(n, old))
		}
		if rerr != nil {
			return errors.Join(err, fmt.Errorf("restore %s: %w", n, rerr))
		}
	}
	if rerr := r.dropPacks(packs); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// packNames is the names of the files in objects/pack.
func (r *repo) packNames() (map[string]bool, error) {
	fis, err := r.dot.ReadDir(path.Join("objects", "pack"))
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, err
	}
	names := make(map[string]bool, len(fis))
	for _, fi := range fis {
		names[fi.Name()] = true
	}
	return names, nil
}

// dropPacks removes the packs not in keep, each .pack before its .idx (a
// reader never finds a pack without its index), and forgets their objects.
func (r *repo) dropPacks(keep map[string]bool) error {
	now, err := r.packNames()
	if err != nil {
		return err
	}
	for _, ext := range []string{".pack", ".idx"} {
		for name := range now {
			if !keep[name] && strings.HasSuffix(name, ext) {
				if err := r.dot.Remove(path.Join("objects", "pack", name)); err != nil {
					return err
				}
			}
		}
	}
	if st, ok := r.r.Storer.(storage); ok {
		st.Reindex()
		st.objects.Clear()
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r *repo) isAncestorHash(a, b plumbing.Hash) (bool, error) {
	ca, err := r.r.CommitObject(a)
	if err != nil {
		return false, err
	}
	cb, err := r.r.CommitObject(b)
	if err != nil {
		return false, err
	}
	return r.isAncestor(ca, cb)
}

func cmdFetch(s *session, args []string) error {
	var quiet bool
	rest, err := flags("fetch", args, map[string]*bool{"-q": &quiet, "--quiet": &quiet})
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return unsupported("git fetch with refspecs")
	}
	r, name, err := s.openRemote(rest)
	if err != nil {
		return err
	}
	return r.fetchRemote(name, quiet, "fetch")
}

// cmdPull fetches the current branch's upstream remote and fast-forwards
// the branch to its upstream.
func cmdPull(s *session, args []string) error {
	var quiet, ffOnly, ff, noRebase bool
	rest, err := flags("pull", args, map[string]*bool{"-q": &quiet, "--quiet": &quiet, "--ff-only": &ffOnly, "--ff": &ff, "--no-rebase": &noRebase})
	if err != nil {
		return err
	} else if len(rest) > 0 {
		return unsupported("git pull with a remote or branch")
	}
	r, err := s.open()
	if err != nil {
		return err
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	if h.branch == "" {
		return unsupported("git pull on a detached HEAD")
	}
	cfg, err := r.r.Config()
	if err != nil {
		return err
	}
	b, ok := cfg.Branches[h.branch]
	if !ok || b.Remote == "" || !b.Merge.IsBranch() {
		return errorf(1, "There is no tracking information for the current branch.\nPlease specify which branch you want to merge with.\nSee git-pull(1) for details.\n\n    git pull <remote> <branch>\n\nIf you wish to set tracking information for this branch you can do so with:\n\n    git branch --set-upstream-to=<remote>/<branch> %s\n\n", h.branch)
	}
	if err := r.fetchRemote(b.Remote, quiet, "pull"); err != nil {
		return err
	}
	upName := "refs/remotes/" + b.Remote + "/" + b.Merge.Short()
	up, err := r.resolve(upName)
	if err != nil {
		return fatalf("couldn't find remote ref %s", b.Merge)
	}
	if quiet {
		r.out = io.Discard
	}
	url, _, err := r.remoteURL(b.Remote)
	if err != nil {
		return err
	}
	o := mergeOpts{cmd: "pull", ffOnly: ffOnly, reflog: strings.Join(append([]string{"pull"}, args...), " "),
		message: "Merge branch '" + b.Merge.Short() + "' of " + strings.TrimSuffix(url, ".git") + into(h.branch)}
	rebase, rebaseSet := r.configValue("pull.rebase")
	pullFF, ffSet := r.configValue("pull.ff")
	switch {
	case rebaseSet && rebase != "false" && !noRebase && !ffOnly:
		return unsupported("git pull with pull.rebase")
	case pullFF == "only" && !noRebase && !ff:
		o.ffOnly = true
	case !noRebase && !ff && !ffOnly && !rebaseSet && !ffSet:
		o.divergent = pullHint
	}
	return r.mergeTo(h, up, o)
}

// cmdPush updates a network remote's branches from local ones.
func cmdPush(s *session, args []string) error {
	var quiet, setUp, force bool
	rest, err := flags("push", args, map[string]*bool{"-q": &quiet, "--quiet": &quiet, "-u": &setUp, "--set-upstream": &setUp, "-f": &force, "--force": &force})
	if err != nil {
		return err
	}
	r, name, err := s.openRemote(rest)
	if err != nil {
		return err
	}
	h, err := r.head()
	if err != nil {
		return err
	}
	cfg, err := r.r.Config()
	if err != nil {
		return err
	}
	rc, ok := cfg.Remotes[name]
	if !ok || len(rc.URLs) == 0 {
		return errorf(128, "fatal: '%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n", name)
	}
	url := rc.URLs[0]
	if !isNetworkURL(url) {
		return unsupported("git push to a repository in the workspace")
	}
	var srcs []string
	if len(rest) > 1 {
		srcs = rest[1:]
	} else {
		if h.branch == "" {
			return fatalf("You are not currently on a branch.\nTo push the history leading to the current (detached HEAD)\nstate now, use\n\n    git push %s HEAD:<name-of-remote-branch>\n", name)
		}
		b, ok := cfg.Branches[h.branch]
		if !setUp && (!ok || b.Remote == "" || !b.Merge.IsBranch()) {
			return fatalf("The current branch %s has no upstream branch.\nTo push the current branch and set the remote as upstream, use\n\n    git push --set-upstream %s %s\n\nTo have this happen automatically for branches without a tracking\nupstream, see 'push.autoSetupRemote' in 'git help config'.\n", h.branch, name, h.branch)
		}
		srcs = []string{h.branch}
	}
	remoteRefs, auth, err := s.remoteRefs(url, false)
	if err != nil {
		return err
	}
	theirs := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, ref := range remoteRefs {
		theirs[ref.Name()] = ref.Hash()
	}
	type target struct {
		local, remote plumbing.ReferenceName
		hash          plumbing.Hash
	}
	var targets []target
	for _, spec := range srcs {
		src, dst, _ := strings.Cut(spec, ":")
		dst = cmp.Or(dst, src)
		ref, err := storer.ResolveReference(r.r.Storer, plumbing.NewBranchReferenceName(src))
		if err != nil {
			return errorf(1, "error: src refspec %s does not match any\nerror: failed to push some refs to '%s'\n", src, url)
		}
		targets = append(targets, target{ref.Name(), plumbing.NewBranchReferenceName(strings.TrimPrefix(dst, "refs/heads/")), ref.Hash()})
	}
	var ups []refUpdate
	var specs []config.RefSpec
	rejected := false
	for _, t := range targets {
		old, had := theirs[t.remote]
		u := refUpdate{flag: ' ', from: t.local.Short(), to: t.remote.Short()}
		switch {
		case !had:
			u.flag, u.summary = '*', "[new branch]"
		case old == t.hash:
			continue
		default:
			ff := false
			if r.r.Storer.HasEncodedObject(old) == nil {
				if ff, err = r.isAncestorHash(old, t.hash); err != nil {
					return err
				}
			}
			switch {
			case ff:
				u.summary = r.abbrev(old) + ".." + r.abbrev(t.hash)
			case force:
				u.flag, u.summary, u.suffix = '+', r.abbrev(old)+"..."+r.abbrev(t.hash), " (forced update)"
			case r.r.Storer.HasEncodedObject(old) != nil:
				u.flag, u.summary, u.suffix = '!', "[rejected]", " (fetch first)"
				rejected = true
			default:
				u.flag, u.summary, u.suffix = '!', "[rejected]", " (non-fast-forward)"
				rejected = true
			}
		}
		ups = append(ups, u)
		if u.flag != '!' {
			spec := t.local.String() + ":" + t.remote.String()
			if force {
				spec = "+" + spec
			}
			specs = append(specs, config.RefSpec(spec))
		}
	}
	if len(ups) == 0 {
		if !quiet {
			fmt.Fprintln(r.errw, "Everything up-to-date")
		}
		return nil
	}
	// go-git moves the remote-tracking refs itself; their reflog needs
	// where they were.
	tracking, err := r.snapshotRefs("refs/remotes/" + name + "/")
	if err != nil {
		return err
	}
	if len(specs) > 0 {
		rem := r.remoteFor(name, url, rc.Fetch)
		err := rem.PushContext(r.ctx, &gogit.PushOptions{RemoteName: name, RefSpecs: specs, Auth: auth, Force: force})
		if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
			return r.netError(url, err)
		}
	}
	if !quiet || rejected {
		printUpdates(r.errw, "To "+url, ups, false)
	}
	if rejected {
		return errorf(1, "error: failed to push some refs to '%s'\n", url)
	}
	for _, t := range targets {
		track := plumbing.NewRemoteReferenceName(name, t.remote.Short())
		oldHash := tracking[track]
		if err := r.r.Storer.SetReference(plumbing.NewHashReference(track, t.hash)); err != nil {
			return err
		}
		if err := r.logRef(track, oldHash, t.hash, "update by push"); err != nil {
			return err
		}
		if setUp {
			b := cfg.Branches[t.local.Short()]
			if b == nil {
				b = &config.Branch{Name: t.local.Short()}
				cfg.Branches[b.Name] = b
			}
			b.Remote, b.Merge = name, t.remote
			if !quiet {
				fmt.Fprintf(r.out, "branch '%s' set up to track '%s/%s'.\n", t.local.Short(), name, t.remote.Short())
			}
		}
	}
	if setUp {
		return r.r.SetConfig(cfg)
	}
	return nil
}

// flags sets the boolean options of a command found in set and returns
// the other arguments; any other option is not supported.
func flags(cmd string, args []string, set map[string]*bool) ([]string, error) {
	var rest []string
	for _, a := range args {
		if p, ok := set[a]; ok {
			*p = true
		} else if strings.HasPrefix(a, "-") {
			return nil, unsupported("git " + cmd + " " + a)
		} else {
			rest = append(rest, a)
		}
	}
	return rest, nil
}
