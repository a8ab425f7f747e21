package shell

import (
	"context"
	"io/fs"
	"path"
	"runtime"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// globWalk is what a run remembers of the `**` walks of the command being
// expanded: the symlinks they listed, which they must not enter. bash's
// `**` lists a symlink to a directory but never descends through it (only
// an explicit start such as `l/**` is followed); the interpreter's walk
// follows every one, which loops through `self -> .` and reaches the
// whole tree through `r -> /`.
type globWalk struct {
	mu       sync.Mutex
	symlinks map[string]bool
}

func (w *globWalk) reset() {
	w.mu.Lock()
	w.symlinks = nil
	w.mu.Unlock()
}

func (w *globWalk) isListedSymlink(p string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.symlinks[p]
}

func (w *globWalk) listed(dir string, ents []fs.DirEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 {
			if w.symlinks == nil {
				w.symlinks = map[string]bool{}
			}
			w.symlinks[path.Join(dir, e.Name())] = true
		}
	}
}

// readDirHandler reads directories for globbing. It stops at cancellation
// (the interpreter's walk has no context of its own and ignores errors, so
// each of its reads must fail fast), counts entries against
// MaxGlobMatches, and keeps `**` out of symlinked directories.
func (r *run) readDirHandler(ctx context.Context, name string) ([]fs.DirEntry, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	hc := interp.HandlerCtx(ctx)
	p := absPath(hc.Dir, name)
	starWalk := fromGlobStarWalk()
	if starWalk && r.glob.isListedSymlink(p) {
		return nil, pathErr("readdir", name, syscall.ENOTDIR)
	}
	ents, err := r.fs.ReadDir(p)
	if err != nil {
		return nil, err
	}
	if n := r.globSeen.Add(int64(len(ents))); n > int64(r.limits.MaxGlobMatches) {
		return nil, r.stop("max_glob_matches", "glob expansion limit of %d paths exceeded", r.limits.MaxGlobMatches)
	}
	if starWalk {
		r.glob.listed(p, ents)
	}
	return ents, nil
}

// fromGlobStarWalk reports whether the running ReadDir is the `**` walk of
// mvdan.cc/sh/v3/expand listing a directory it entered. The expander
// gives no other sign of it, so the call sites are learnt once by running
// it against a probe (globStarSite) and compared with the caller's stack.
func fromGlobStarWalk() bool {
	site := globStarSite()
	if site == (callSite{}) {
		return false
	}
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var prev uintptr
	for {
		f, more := frames.Next()
		if prev == site.globDir && f.PC == site.glob {
			return true
		}
		prev = f.PC
		if !more {
			return false
		}
	}
}

// callSite is the program counters of expand's globDir at its directory
// listing and of its caller, glob, in the `**` branch.
type callSite struct{ globDir, glob uintptr }

const (
	expandGlobDir = "mvdan.cc/sh/v3/expand.(*Config).globDir"
	expandGlob    = "mvdan.cc/sh/v3/expand.(*Config).glob"
)

var globStarSite = sync.OnceValue(func() callSite {
	var site callSite
	probe := &expand.Config{GlobStar: true, ReadDir2: func(string) ([]fs.DirEntry, error) {
		if site != (callSite{}) {
			return nil, syscall.ENOENT
		}
		var pcs [32]uintptr
		n := runtime.Callers(2, pcs[:])
		frames := runtime.CallersFrames(pcs[:n])
		var prev runtime.Frame
		for {
			f, more := frames.Next()
			if prev.Function == expandGlobDir && f.Function == expandGlob {
				site = callSite{globDir: prev.PC, glob: f.PC}
				break
			}
			prev = f
			if !more {
				break
			}
		}
		return nil, syscall.ENOENT
	}}
	_, _ = expand.Fields(probe, &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: "/**/x"}}})
	return site
})
