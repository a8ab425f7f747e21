package git

import (
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Rename similarity as git computes it (diffcore-rename.c and
// diffcore-delta.c): contents are cut into spans ending at a newline or
// after 64 bytes, spans are hashed, and the score is the bytes of the
// source found again in the destination over the larger size.
const (
	maxScore       = 60000.0
	minRenameScore = 30000 // git's default -M50%
	spanHashBase   = 107927
	// renameLimit bounds the candidate matrix, as diff.renameLimit does.
	renameLimit = 1000
)

// spanCounts maps a span hash to the bytes spanned.
func spanCounts(data []byte) map[uint32]int {
	text := !isBinary(data)
	m := map[uint32]int{}
	var accum1, accum2 uint32
	n := 0
	for i := 0; i < len(data); i++ {
		c := uint32(data[i])
		old1 := accum1
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue // CR of CRLF in text
		}
		accum1 = (accum1 << 7) ^ (accum2 >> 25)
		accum2 = (accum2 << 7) ^ (old1 >> 25)
		accum1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		m[(accum1+accum2*0x61)%spanHashBase] += n
		n, accum1, accum2 = 0, 0, 0
	}
	if n > 0 {
		m[(accum1+accum2*0x61)%spanHashBase] += n
	}
	return m
}

// similarity is git's estimate_similarity for two regular files.
func similarity(src, dst []byte, sc, dc map[uint32]int) int {
	maxSize, baseSize := len(src), len(dst)
	if baseSize > maxSize {
		maxSize, baseSize = baseSize, maxSize
	}
	delta := maxSize - baseSize
	if float64(maxSize)*(maxScore-minRenameScore) < float64(delta)*maxScore {
		return 0
	}
	if len(dst) == 0 {
		return 0
	}
	copied := 0
	for h, s := range sc {
		if d, ok := dc[h]; ok {
			copied += min(s, d)
		}
	}
	return int(float64(copied) * maxScore / float64(maxSize))
}

// pairSimilar pairs the remaining deletions and additions of regular
// files that are at least 50% similar, best scores first.
func pairSimilar(cs []change) ([]change, error) {
	var srcs, dsts []int
	for i, c := range cs {
		switch {
		case c.to == nil && isRegular(c.from.mode):
			srcs = append(srcs, i)
		case c.from == nil && isRegular(c.to.mode):
			dsts = append(dsts, i)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 || len(srcs) > renameLimit || len(dsts) > renameLimit {
		return cs, nil
	}
	type side struct {
		data   []byte
		counts map[uint32]int
	}
	load := func(b *blobRef) (side, error) {
		data, err := b.load()
		if err != nil {
			return side{}, err
		}
		return side{data, spanCounts(data)}, nil
	}
	srcData := make([]side, len(srcs))
	for k, i := range srcs {
		var err error
		if srcData[k], err = load(cs[i].from); err != nil {
			return nil, err
		}
	}
	type candidate struct {
		src, dst     int // indexes into srcs, dsts
		score        int
		sameBasename bool
	}
	var cands []candidate
	for k, i := range dsts {
		d, err := load(cs[i].to)
		if err != nil {
			return nil, err
		}
		for j := range srcs {
			score := similarity(srcData[j].data, d.data, srcData[j].counts, d.counts)
			if score < minRenameScore {
				continue
			}
			same := path.Base(cs[srcs[j]].from.path) == path.Base(cs[i].to.path)
			cands = append(cands, candidate{src: j, dst: k, score: score, sameBasename: same})
		}
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		return cands[a].sameBasename && !cands[b].sameBasename
	})
	usedSrc, usedDst := map[int]bool{}, map[int]bool{}
	for _, c := range cands {
		if usedSrc[c.src] || usedDst[c.dst] {
			continue
		}
		usedSrc[c.src], usedDst[c.dst] = true, true
		d := &cs[dsts[c.dst]]
		d.from, d.score = cs[srcs[c.src]].from, int(float64(c.score)*100/maxScore)
	}
	if len(usedSrc) == 0 {
		return cs, nil
	}
	out := cs[:0]
	for k, i := range srcs {
		if usedSrc[k] {
			cs[i] = change{} // paired: dropped below
		}
	}
	for _, c := range cs {
		if c.from != nil || c.to != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// isRegular is S_ISREG: a plain or executable file.
func isRegular(m filemode.FileMode) bool { return m.IsFile() && m != filemode.Symlink }
