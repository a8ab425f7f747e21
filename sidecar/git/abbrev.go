package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// abbrevs finds git's abbreviation of an object name: the shortest prefix,
// at least as long as the minimum, that names no other object in the
// repository (find_unique_abbrev in git's object-name.c).
type abbrevs struct {
	min   int
	packs []packIndex              // the sorted names of each pack index
	loose map[byte][]plumbing.Hash // loose objects by first byte, read on demand
}

// abbrev is h abbreviated as git prints it.
func (r *repo) abbrev(h plumbing.Hash) string { return r.abbrevTo(h, -1) }

// abbrevTo is h abbreviated to at least min hex digits (min < 0: core.abbrev
// or git's automatic length).
func (r *repo) abbrevTo(h plumbing.Hash, minLen int) string {
	a := r.abbrevState()
	if minLen < 0 {
		minLen = a.min
	}
	n := max(minLen, 4)
	if h.IsZero() {
		return strings.Repeat("0", n)
	}
	for _, p := range a.packs {
		n = max(n, p.uniqueLen(h))
	}
	for _, o := range a.looseWith(r, h[0]) {
		if o != h {
			n = max(n, commonHexPrefix(o, h)+1)
		}
	}
	return h.String()[:min(n, len(h)*2)]
}

func (r *repo) abbrevState() *abbrevs {
	if r.abbr != nil {
		return r.abbr
	}
	a := &abbrevs{loose: map[byte][]plumbing.Hash{}}
	r.abbr = a
	if ents, err := r.dot.ReadDir("objects/pack"); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".idx") {
				continue
			}
			if names, err := packNames(r, "objects/pack/"+e.Name()); err == nil {
				a.packs = append(a.packs, names)
			}
		}
	}
	a.min = autoAbbrev(a.packedCount())
	if v, ok := r.configValue("core.abbrev"); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 4 && n <= 40 {
			a.min = n
		}
	}
	return a
}

// autoAbbrev is git's default length for a repository with count packed
// objects (loose ones are not counted, as in git's
// approximate_object_count): enough hex digits that two random names
// collide rarely, never fewer than 7.
func autoAbbrev(count int) int {
	return max(7, (bits.Len(uint(count))+1)/2)
}

func (a *abbrevs) packedCount() int {
	n := 0
	for _, p := range a.packs {
		n += len(p) / 20
	}
	return n
}

func (a *abbrevs) looseWith(r *repo, first byte) []plumbing.Hash {
	if hs, ok := a.loose[first]; ok {
		return hs
	}
	var hs []plumbing.Hash
	dir := "objects/" + plumbing.Hash{first}.String()[:2]
	if ents, err := r.dot.ReadDir(dir); err == nil {
		for _, e := range ents {
			if len(e.Name()) == 38 {
				hs = append(hs, plumbing.NewHash(dir[8:]+e.Name()))
			}
		}
	}
	a.loose[first] = hs
	return hs
}

// packNames reads the sorted object names of a version 2 pack index.
func packNames(r *repo, name string) (packIndex, error) {
	data, err := readAll(r.dot, name)
	if err != nil {
		return nil, err
	}
	const fanout = 8 + 256*4
	if len(data) < fanout || !bytes.Equal(data[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, errNotPackIndex
	}
	n := int(binary.BigEndian.Uint32(data[fanout-4:]))
	if len(data) < fanout+n*20 {
		return nil, errNotPackIndex
	}
	return data[fanout : fanout+n*20], nil
}

var errNotPackIndex = errors.New("not a version 2 pack index")

// packIndex is a pack's sorted object names, 20 bytes each.
type packIndex []byte

func (p packIndex) name(i int) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], p[i*20:])
	return h
}

// uniqueLen is how many hex digits of h tell it apart from the pack's
// other objects: one more than it shares with either sorted neighbour.
func (p packIndex) uniqueLen(h plumbing.Hash) int {
	n := len(p) / 20
	i := sort.Search(n, func(i int) bool { return bytes.Compare(p[i*20:i*20+20], h[:]) >= 0 })
	l := 0
	if i < n && p.name(i) == h {
		if i+1 < n {
			l = max(l, commonHexPrefix(p.name(i+1), h)+1)
		}
	} else if i < n {
		l = max(l, commonHexPrefix(p.name(i), h)+1)
	}
	if i > 0 {
		l = max(l, commonHexPrefix(p.name(i-1), h)+1)
	}
	return l
}

// commonHexPrefix is how many leading hex digits a and b share.
func commonHexPrefix(a, b plumbing.Hash) int {
	for i := range a {
		if x := a[i] ^ b[i]; x != 0 {
			if x&0xf0 != 0 {
				return 2 * i
			}
			return 2*i + 1
		}
	}
	return len(a) * 2
}
