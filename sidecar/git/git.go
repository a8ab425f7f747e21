// Package git is git for the shell backend, over the fs core: go-git with a
// go-billy filesystem over the exec's view of the store (no FUSE, no temp
// copies), and the everyday porcelain with git 2.39's output. Repositories
// it writes are ordinary git repositories; it reads what real git wrote
// (index versions 2-4, loose objects and packs, packed refs).
//
// What it does not support it says so, with exit status 1, rather than
// give an answer that differs from git's.
package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/sqlfs/sqlfs/sidecar/shell/builtin"
)

// errUnsupported marks a form this git does not implement.
var errUnsupported = errors.New("not supported by the shell backend's git")

// exitError is a failure with git's own message and exit status.
type exitError struct {
	code int
	msg  string // printed to stderr as is; "" prints nothing
}

func (e *exitError) Error() string { return e.msg }

func fatalf(format string, args ...any) error {
	return &exitError{code: 128, msg: "fatal: " + fmt.Sprintf(format, args...) + "\n"}
}

func errorf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

func unsupported(what string) error {
	return fmt.Errorf("%s: %w (use the container backend)", what, errUnsupported)
}

// session is one git invocation.
type session struct {
	ctx  context.Context
	env  *builtin.Env
	out  io.Writer
	errw io.Writer
	dir  string // working directory, absolute in the view
	// config overrides from -c
	overrides map[string]string
	// storages is every repository storage opened, closed when the
	// command ends (they keep pack files open).
	storages []storage
}

type command func(s *session, args []string) error

var commands map[string]command

func init() {
	commands = map[string]command{
		"init":        cmdInit,
		"add":         cmdAdd,
		"rm":          cmdRm,
		"mv":          cmdMv,
		"commit":      cmdCommit,
		"status":      cmdStatus,
		"log":         cmdLog,
		"show":        cmdShow,
		"diff":        cmdDiff,
		"branch":      cmdBranch,
		"checkout":    cmdCheckout,
		"switch":      cmdSwitch,
		"restore":     cmdRestore,
		"reset":       cmdReset,
		"tag":         cmdTag,
		"merge":       cmdMerge,
		"rev-parse":   cmdRevParse,
		"rev-list":    cmdRevList,
		"remote":      cmdRemote,
		"ls-files":    cmdLsFiles,
		"config":      cmdConfig,
		"clone":       cmdClone,
		"ls-remote":   cmdLsRemote,
		"fetch":       cmdFetch,
		"pull":        cmdPull,
		"push":        cmdPush,
		"cherry-pick": cmdCherryPick,
		"revert":      cmdRevert,
		"grep":        cmdGrep,
		"stash":       cmdStash,
		"blame":       cmdBlame,
	}
}

// Main runs `git ARGS...` in the shell backend.
func Main(ctx context.Context, env *builtin.Env, args []string) int {
	s := &session{ctx: ctx, env: env, out: env.Stdout, errw: env.Stderr, dir: env.Dir, overrides: map[string]string{}}
	args = args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-C" && len(args) > 1:
			s.dir = path.Join(s.dir, args[1])
			if path.IsAbs(args[1]) {
				s.dir = path.Clean(args[1])
			}
			args = args[2:]
		case args[0] == "-c" && len(args) > 1:
			k, v, ok := strings.Cut(args[1], "=")
			if !ok {
				v = "true"
			}
			s.overrides[strings.ToLower(k)] = v
			args = args[2:]
		case args[0] == "--no-pager" || args[0] == "--no-optional-locks" || args[0] == "-P":
			args = args[1:]
		case args[0] == "--version":
			fmt.Fprintln(s.out, "git version 2.39.5 (sqlfs shell backend)")
			return 0
		default:
			fmt.Fprintf(s.errw, "unknown option: %s\n", args[0])
			return 129
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(s.errw, "usage: git [-C <path>] [-c <name>=<value>] <command> [<args>]")
		return 1
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(s.errw, "git: '%s' is %v (use the container backend)\n", args[0], errUnsupported)
		return 1
	}
	err := cmd(s, args[1:])
	for _, st := range s.storages {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return s.report(err)
}

// report writes err's message to the exec's stderr, not s.errw, which -q
// silences: git's --quiet keeps its errors.
func (s *session) report(err error) int {
	errw := s.env.Stderr
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		io.WriteString(errw, ee.msg)
		return ee.code
	case errors.Is(err, errUnsupported):
		fmt.Fprintf(errw, "git: %v\n", err)
		return 1
	case s.ctx.Err() != nil:
		// Stopped: by the exec's end or limit, which the shell reports, or
		// by a reader that went away (`git log | head`), where git dies of
		// SIGPIPE without a word.
		return 128
	}
	fmt.Fprintf(errw, "fatal: %v\n", err)
	return 128
}

// repo is an open repository with its worktree.
type repo struct {
	*session
	r    *gogit.Repository
	wt   *gogit.Worktree
	root string // worktree top, absolute in the view
	fs   *billyFS
	dot  *billyFS
	abbr *abbrevs // read on first use
	// shallow is the commits whose parents a shallow clone lacks, read
	// on first use.
	shallow map[plumbing.Hash]bool
	// printed is set once log has printed a commit (for separators).
	printed bool
}

// findRoot walks up from dir to the directory holding .git.
func (s *session) findRoot() (string, error) {
	for d := s.dir; ; d = path.Dir(d) {
		fi, err := s.env.FS.Stat(path.Join(d, ".git"))
		if err == nil && fi.IsDir() {
			return d, nil
		}
		if err != nil && !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, iofs.ErrPermission) {
			return "", err
		}
		if err == nil {
			return "", unsupported(".git files (worktrees, submodules)")
		}
		if d == "/" {
			return "", fatalf("not a git repository (or any of the parent directories): .git")
		}
	}
}

func (s *session) open() (*repo, error) {
	root, err := s.findRoot()
	if err != nil {
		return nil, err
	}
	return s.openAt(root)
}

func (s *session) openAt(root string) (*repo, error) {
	wtfs := newBillyFS(s.ctx, s.env.FS, root)
	dot := newBillyFS(s.ctx, s.env.FS, path.Join(root, ".git"))
	r, err := gogit.Open(s.newStorage(dot), wtfs)
	if err != nil {
		return nil, fmt.Errorf("open repository at %s: %w", root, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	return &repo{session: s, r: r, wt: wt, root: root, fs: wtfs, dot: dot}, nil
}

// rel is the repository path for a user argument (relative to the working
// directory), or an error for a path outside the repository.
func (r *repo) rel(arg string) (string, error) {
	p := path.Join(r.dir, arg)
	if path.IsAbs(arg) {
		p = path.Clean(arg)
	}
	if !isInside(r.root, p) {
		return "", fatalf("%s: '%s' is outside repository at '%s'", arg, arg, r.root)
	}
	if p == r.root {
		return "", nil
	}
	return strings.TrimPrefix(p, r.root+"/"), nil
}

// show is how a repository path is printed relative to the working
// directory, as status and ls-files do.
func (r *repo) show(p string) string {
	cwd := strings.TrimPrefix(strings.TrimPrefix(r.dir, r.root), "/")
	if cwd == "" {
		return p
	}
	up := ""
	for c := cwd; ; {
		if p == c || strings.HasPrefix(p, c+"/") {
			rest := strings.TrimPrefix(strings.TrimPrefix(p, c), "/")
			if rest == "" {
				rest = "./"
				if up != "" {
					return up
				}
			}
			return up + rest
		}
		up += "../"
		if !strings.Contains(c, "/") {
			return up + p
		}
		c = path.Dir(c)
	}
}
