package fs

import (
	"errors"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// Policy limits what callers may see and change, for every frontend alike.
// Globs use doublestar syntax over workspace paths without the leading
// slash ("secrets/**", "*.pem"); a rule on a directory covers what is below.
type Policy struct {
	ReadOnly   []string // changes get EROFS
	Hidden     []string // invisible: ENOENT
	QuotaBytes int64    // file data beyond this gets ENOSPC
}

// Validate reports a malformed glob.
func (p Policy) Validate() error {
	for _, g := range append(append([]string(nil), p.ReadOnly...), p.Hidden...) {
		if !doublestar.ValidatePattern(strings.TrimPrefix(g, "/")) {
			return errors.New("bad policy glob: " + g)
		}
	}
	if p.QuotaBytes < 0 {
		return errors.New("negative quota")
	}
	return nil
}

func (p *Policy) hasHidden() bool { return len(p.Hidden) > 0 }

// refusesChanges reports whether any rule can refuse a change.
func (p *Policy) refusesChanges() bool { return len(p.Hidden) > 0 || len(p.ReadOnly) > 0 }

// refuse names the rule that forbids touching p ("hidden" or, for a
// change, "readonly"), or returns "".
func (p *Policy) refuse(clean string, change bool) string {
	if len(p.Hidden) == 0 && (!change || len(p.ReadOnly) == 0) {
		return ""
	}
	if matchAny(p.Hidden, clean) {
		return "hidden"
	}
	if change && matchAny(p.ReadOnly, clean) {
		return "readonly"
	}
	return ""
}

func (p *Policy) errno(rule string) error {
	switch rule {
	case "hidden":
		return syscall.ENOENT
	case "quota":
		return syscall.ENOSPC
	}
	return syscall.EROFS
}

// matchAny reports whether p or any directory above it matches a glob.
func matchAny(globs []string, p string) bool {
	rel := strings.TrimPrefix(p, "/")
	for rel != "" {
		for _, g := range globs {
			if ok, _ := doublestar.Match(strings.TrimPrefix(g, "/"), rel); ok {
				return true
			}
		}
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			break
		}
		rel = rel[:i]
	}
	return false
}

func isErrno(err error, e syscall.Errno) bool { return errors.Is(err, e) }
