package shell

import (
	"context"
	"io/fs"
	"path"
	"runtime"
	"sync"
	"syscall"

	"github.com/sqlfs/sqlfs/sidecar"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// globWalk is what a run remembers of the `**` walks of the command being
// expanded. bash's `**` never descends through a symlink to a directory
// (an explicit start such as `l/**` is followed); the interpreter's walk
// follows every one, which loops through `self -> .` and reaches the whole
// tree through `r -> /`. So the symlinks a walk lists are recorded and it
// may not list them in turn; it may still check that they are directories,
// so `**/` shows them as bash does. bash 5.2 then takes them as bases for
// the pattern's next part only when the pattern has a directory prefix
// (`g/**/*.txt` finds g/link/y.txt, `**/*.txt` does not): a walk that
// started at the working directory marks the command fromCwd.
// (`./**/*.txt` is taken for `**/*.txt`: the expander gives both the same
// start.)
type globWalk struct {
	mu       sync.Mutex
	symlinks map[string]bool
	started  bool // a walk listed its first directory
	fromCwd  bool // and that was the working directory
}

func (w *globWalk) reset() {
	w.mu.Lock()
	w.symlinks, w.started, w.fromCwd = nil, false, false
	w.mu.Unlock()
}

// refuses reports whether a glob read of p must find nothing: p is a
// symlink a walk listed, and the read is the walk's listing of it or,
// after a walk from the working directory, the next part's listing of it
// or a look inside it for a literal part (`**/e/f`).
func (w *globWalk) refuses(p string, call globCall) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch call {
	case starListing:
		return w.symlinks[p]
	case partListing:
		return w.fromCwd && w.symlinks[p]
	}
	return w.fromCwd && w.symlinks[path.Dir(p)]
}

// listed records a walk's listing of dir.
func (w *globWalk) listed(dir, cwd string, ents []fs.DirEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		// The first walk of the command decides; `./**` counts as
		// starting at the working directory (bash: as a prefix).
		w.started, w.fromCwd = true, dir == cwd
	}
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
	call := globCaller()
	if r.glob.refuses(p, call) {
		if call == otherRead {
			return nil, pathErr("readdir", name, syscall.ENOENT)
		}
		// Nothing to match in it. Not an error: glob would fail the
		// whole word for a part's listing.
		return nil, nil
	}
	ents, err := r.fs.ReadDir(p)
	if err != nil {
		return nil, err
	}
	if n := r.globSeen.Add(int64(len(ents))); n > int64(r.limits.MaxGlobMatches) {
		return nil, r.stop(sidecar.LimitMaxGlobMatches, "glob expansion limit of %d paths exceeded", r.limits.MaxGlobMatches)
	}
	if call == starListing {
		r.glob.listed(p, hc.Dir, ents)
	}
	return ents, nil
}

// globCall is which read of mvdan.cc/sh/v3/expand's glob a ReadDir is.
type globCall int

const (
	otherRead   globCall = iota // a check for a directory, a literal part
	starListing                 // the ** walk lists a directory it entered
	partListing                 // another part of the pattern lists a base
)

// globCaller tells the reads of expand's glob apart. The expander gives no
// sign of them, so the two call sites that matter (globDir's listing, and
// glob's call of globDir for `**`) are learnt once by running it against a
// probe (globSites) and looked for on the caller's stack.
func globCaller() globCall {
	sites := globSites()
	if sites == (globSite{}) {
		return otherRead
	}
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var prev runtime.Frame
	for {
		f, more := frames.Next()
		if prev.Function == expandGlobDir && f.Function == expandGlob {
			switch {
			case prev.PC != sites.listing:
				return otherRead // globDir's check that an entry is a directory
			case f.PC == sites.star:
				return starListing
			default:
				return partListing
			}
		}
		prev = f
		if !more {
			return otherRead
		}
	}
}

const (
	expandGlobDir = "mvdan.cc/sh/v3/expand.(*Config).globDir"
	expandGlob    = "mvdan.cc/sh/v3/expand.(*Config).glob"
)

// globSite is where globDir lists a directory, and where glob's `**`
// branch calls globDir.
type globSite struct{ listing, star uintptr }

var globSites = sync.OnceValue(func() globSite {
	var site globSite
	probe := &expand.Config{GlobStar: true, ReadDir2: func(string) ([]fs.DirEntry, error) {
		if site != (globSite{}) {
			return nil, syscall.ENOENT
		}
		var pcs [32]uintptr
		n := runtime.Callers(2, pcs[:])
		frames := runtime.CallersFrames(pcs[:n])
		var prev runtime.Frame
		for {
			f, more := frames.Next()
			if prev.Function == expandGlobDir && f.Function == expandGlob {
				site = globSite{listing: prev.PC, star: f.PC}
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
