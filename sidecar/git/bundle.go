package git

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// bundle is the header of a file written by git bundle create (format v2
// or v3); the packfile follows it in pack.
type bundle struct {
	prereqs []plumbing.Hash
	refs    []*plumbing.Reference // in the bundle's order; HEAD among them if bundled
	pack    *bufio.Reader
	file    io.Closer
}

var errNotBundle = errors.New("does not look like a v2 or v3 bundle file")

// readBundle parses a bundle's header: the signature, v3 capabilities,
// prerequisites ("-<id> comment") and refs ("<id> <name>"), up to the blank
// line before the packfile.
func readBundle(r io.ReadCloser) (*bundle, error) {
	br := bufio.NewReader(r)
	sig, err := br.ReadString('\n')
	if err != nil {
		return nil, errNotBundle
	}
	v3 := sig == "# v3 git bundle\n"
	if !v3 && sig != "# v2 git bundle\n" {
		return nil, errNotBundle
	}
	b := &bundle{pack: br, file: r}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("bundle header: %w", io.ErrUnexpectedEOF)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return b, nil
		}
		if v3 && strings.HasPrefix(line, "@") {
			// Only sha1 objects and unfiltered packs are understood.
			if line != "@object-format=sha1" {
				return nil, unsupported("bundle capability " + line[1:])
			}
			continue
		}
		prereq := strings.HasPrefix(line, "-")
		line = strings.TrimPrefix(line, "-")
		id, name, _ := strings.Cut(line, " ")
		if len(id) != 40 || strings.Trim(id, "0123456789abcdef") != "" {
			return nil, errNotBundle
		}
		if prereq {
			b.prereqs = append(b.prereqs, plumbing.NewHash(id))
			continue
		}
		b.refs = append(b.refs, plumbing.NewHashReference(plumbing.ReferenceName(name), plumbing.NewHash(id)))
	}
}

// guessHead is the branch a clone checks out for a source that names its
// HEAD by commit only, as git's guess_remote_head: the default branch if
// it points there, else master, else the first branch that does.
func guessHead(head *plumbing.Reference, refs []*plumbing.Reference, defBranch string) (string, bool) {
	for _, want := range []string{defBranch, "master"} {
		for _, ref := range refs {
			if ref.Name() == plumbing.NewBranchReferenceName(want) && ref.Hash() == head.Hash() {
				return want, true
			}
		}
	}
	for _, ref := range refs {
		if ref.Name().IsBranch() && ref.Hash() == head.Hash() {
			return ref.Name().Short(), true
		}
	}
	return "", false
}
