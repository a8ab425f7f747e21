package builtin

// A port of the line matching of GNU diff 3.8 (analyze.c and gnulib's
// diffseq.h): discard_confusing_lines, compareseq with its "too expensive"
// heuristic, and shift_boundaries. Several minimal diffs usually exist;
// following GNU's choices step by step is what makes the output the same
// as GNU diff's, not just as short.

import "context"

// diffSeq holds one comparison. Classes number equal lines from 1.
type diffSeq struct {
	ctx          context.Context
	calls        int   // compare and diag steps, to check ctx every diffCheckEvery
	err          error // ctx's, once seen: every step returns at once
	xv, yv       []int // classes of the lines that take part (not discarded)
	xIdx, yIdx   []int // their line numbers in the files
	changed      [2][]bool
	fd, bd       []int
	off          int // index of diagonal 0 in fd and bd
	tooExpensive int
}

// diffMark returns, for each line of the two files, whether it is changed,
// or ctx's error: the comparison is quadratic at worst and stops when ctx
// ends.
func diffMark(ctx context.Context, a, b []int) (changedA, changedB []bool, err error) {
	s := &diffSeq{ctx: ctx}
	files := [2][]int{a, b}
	for f := range files {
		// GNU's sentinels: index -1 and a little past the end read false.
		s.changed[f] = make([]bool, len(files[f])+4)
	}
	s.discard(files)
	diags := len(s.xv) + len(s.yv) + 3
	s.tooExpensive = 1
	for ; diags != 0; diags >>= 2 {
		s.tooExpensive <<= 1
	}
	s.tooExpensive = max(4096, s.tooExpensive)
	s.off = len(s.yv) + 1
	s.fd = make([]int, len(s.xv)+len(s.yv)+3)
	s.bd = make([]int, len(s.xv)+len(s.yv)+3)
	s.compare(0, len(s.xv), 0, len(s.yv), false)
	if s.err != nil {
		return nil, nil, s.err
	}
	s.shift(files)
	return s.changed[0][1 : len(a)+1], s.changed[1][1 : len(b)+1], nil
}

// diffCheckEvery is how many compare and diag steps run between two
// checks of the context: a diag step costs at most the number of
// diagonals, tooExpensive at most, so this is well under a millisecond.
const diffCheckEvery = 64

// stopped reports whether the comparison must end: ctx is checked every
// diffCheckEvery calls, and once it has ended every call says so.
func (s *diffSeq) stopped() bool {
	if s.err == nil {
		if s.calls++; s.calls%diffCheckEvery == 1 {
			s.err = s.ctx.Err()
		}
	}
	return s.err != nil
}

// ch reads changed[f][i] with GNU's indexing (i may be -1 or past the end).
func (s *diffSeq) ch(f, i int) bool     { return s.changed[f][i+1] }
func (s *diffSeq) set(f, i int, v bool) { s.changed[f][i+1] = v }

// discard is discard_confusing_lines: lines with no match in the other
// file, and runs of lines with very many, stay out of the comparison and
// count as changed.
func (s *diffSeq) discard(files [2][]int) {
	// Classes number lines densely from 1: counts are indexed by class.
	classes := 0
	for f := range files {
		for _, c := range files[f] {
			classes = max(classes, c)
		}
	}
	var counts [2][]int
	for f := range files {
		counts[f] = make([]int, classes+1)
		for _, c := range files[f] {
			counts[f][c]++
		}
	}
	var discards [2][]byte
	for f := range files {
		end := len(files[f])
		discards[f] = make([]byte, end)
		many := 5
		for tem := end / 64; ; {
			if tem >>= 2; tem <= 0 {
				break
			}
			many *= 2
		}
		for i, c := range files[f] {
			switch n := counts[1-f][c]; {
			case n == 0:
				discards[f][i] = 1
			case n > many:
				discards[f][i] = 2
			}
		}
	}
	for f := range files {
		d := discards[f]
		end := len(d)
		for i := 0; i < end; i++ {
			if d[i] == 2 {
				d[i] = 0
				continue
			}
			if d[i] == 0 {
				continue
			}
			j, provisional := i, 0
			for ; j < end && d[j] != 0; j++ {
				if d[j] == 2 {
					provisional++
				}
			}
			for j > i && d[j-1] == 2 {
				j--
				d[j] = 0
				provisional--
			}
			length := j - i
			if provisional*4 > length {
				for j > i {
					if j--; d[j] == 2 {
						d[j] = 0
					}
				}
				continue
			}
			minimum := 1
			for tem := length >> 2; ; {
				if tem >>= 2; tem <= 0 {
					break
				}
				minimum <<= 1
			}
			minimum++
			for j, consec := 0, 0; j < length; j++ {
				switch {
				case d[i+j] != 2:
					consec = 0
				case minimum == consec+1:
					consec++
					j -= consec
				default:
					consec++
					if minimum < consec {
						d[i+j] = 0
					}
				}
			}
			diffCancelEdge(d, i, 1, length)
			i += length - 1
			diffCancelEdge(d, i, -1, length)
		}
	}
	for i, c := range files[0] {
		if discards[0][i] == 0 {
			s.xv, s.xIdx = append(s.xv, c), append(s.xIdx, i)
		} else {
			s.set(0, i, true)
		}
	}
	for i, c := range files[1] {
		if discards[1][i] == 0 {
			s.yv, s.yIdx = append(s.yv, c), append(s.yIdx, i)
		} else {
			s.set(1, i, true)
		}
	}
}

// diffCancelEdge walks a run of discards from one end (step 1 from its
// first line, -1 from its last) and cancels the provisional ones until
// three real discards in a row, or a real one 8 or more lines in.
func diffCancelEdge(d []byte, from, step, length int) {
	for j, consec := 0, 0; j < length; j++ {
		k := from + step*j
		if j >= 8 && d[k] == 1 {
			return
		}
		switch d[k] {
		case 2:
			consec, d[k] = 0, 0
		case 0:
			consec = 0
		default:
			consec++
		}
		if consec == 3 {
			return
		}
	}
}

// compare is compareseq: it strips common ends, then splits the problem
// at a middle snake found by diag.
func (s *diffSeq) compare(xoff, xlim, yoff, ylim int, minimal bool) {
	if s.stopped() {
		return
	}
	for xoff < xlim && yoff < ylim && s.xv[xoff] == s.yv[yoff] {
		xoff++
		yoff++
	}
	for xoff < xlim && yoff < ylim && s.xv[xlim-1] == s.yv[ylim-1] {
		xlim--
		ylim--
	}
	switch {
	case xoff == xlim:
		for ; yoff < ylim; yoff++ {
			s.set(1, s.yIdx[yoff], true)
		}
	case yoff == ylim:
		for ; xoff < xlim; xoff++ {
			s.set(0, s.xIdx[xoff], true)
		}
	default:
		xmid, ymid, loMin, hiMin := s.diag(xoff, xlim, yoff, ylim, minimal)
		s.compare(xoff, xmid, yoff, ymid, loMin)
		s.compare(xmid, xlim, ymid, ylim, hiMin)
	}
}

// diag finds the midpoint of the shortest edit script (Myers), searching
// from both ends; past tooExpensive steps it settles for the furthest
// point reached, as GNU diff does without -d.
func (s *diffSeq) diag(xoff, xlim, yoff, ylim int, minimal bool) (xmid, ymid int, loMin, hiMin bool) {
	fd, bd, o := s.fd, s.bd, s.off
	xv, yv := s.xv, s.yv
	dmin, dmax := xoff-ylim, xlim-yoff
	fmid, bmid := xoff-yoff, xlim-ylim
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	odd := (fmid-bmid)&1 != 0
	const big = int(^uint(0) >> 1)
	fd[o+fmid] = xoff
	bd[o+bmid] = xlim
	for c := 1; ; c++ {
		if s.stopped() {
			// Any split will do: every compare below returns at once.
			return xoff, yoff, false, false
		}
		if fmin > dmin {
			fmin--
			fd[o+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fd[o+fmax+1] = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			tlo, thi := fd[o+d-1], fd[o+d+1]
			x0 := tlo + 1
			if tlo < thi {
				x0 = thi
			}
			x, y := x0, x0-d
			for x < xlim && y < ylim && xv[x] == yv[y] {
				x++
				y++
			}
			fd[o+d] = x
			if odd && bmin <= d && d <= bmax && bd[o+d] <= x {
				return x, y, true, true
			}
		}
		if bmin > dmin {
			bmin--
			bd[o+bmin-1] = big
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bd[o+bmax+1] = big
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			tlo, thi := bd[o+d-1], bd[o+d+1]
			x0 := thi - 1
			if tlo < thi {
				x0 = tlo
			}
			x, y := x0, x0-d
			for xoff < x && yoff < y && xv[x-1] == yv[y-1] {
				x--
				y--
			}
			bd[o+d] = x
			if !odd && fmin <= d && d <= fmax && x <= fd[o+d] {
				return x, y, true, true
			}
		}
		if minimal || c < s.tooExpensive {
			continue
		}
		fxybest, fxbest := -1, 0
		for d := fmax; d >= fmin; d -= 2 {
			x := min(fd[o+d], xlim)
			y := x - d
			if ylim < y {
				x, y = ylim+d, ylim
			}
			if fxybest < x+y {
				fxybest, fxbest = x+y, x
			}
		}
		bxybest, bxbest := big, 0
		for d := bmax; d >= bmin; d -= 2 {
			x := max(xoff, bd[o+d])
			y := x - d
			if y < yoff {
				x, y = yoff+d, yoff
			}
			if x+y < bxybest {
				bxybest, bxbest = x+y, x
			}
		}
		if (xlim+ylim)-bxybest < fxybest-(xoff+yoff) {
			return fxbest, fxybest - fxbest, true, false
		}
		return bxbest, bxybest - bxbest, false, true
	}
}

// shift is shift_boundaries: it slides each run of changes to merge with
// its neighbours, else as far down as it goes, then back up to line up
// with a run of changes in the other file.
func (s *diffSeq) shift(files [2][]int) {
	for f := 0; f < 2; f++ {
		equivs := files[f]
		other := 1 - f
		i, j, iEnd := 0, 0, len(equivs)
		for {
			for i < iEnd && !s.ch(f, i) {
				for s.ch(other, j) {
					j++
				}
				j++
				i++
			}
			if i == iEnd {
				break
			}
			start := i
			for i++; s.ch(f, i); i++ {
			}
			for s.ch(other, j) {
				j++
			}
			var corresponding int
			for {
				runlength := i - start
				for start > 0 && equivs[start-1] == equivs[i-1] {
					start--
					s.set(f, start, true)
					i--
					s.set(f, i, false)
					for s.ch(f, start-1) {
						start--
					}
					for {
						j--
						if !s.ch(other, j) {
							break
						}
					}
				}
				corresponding = iEnd
				if s.ch(other, j-1) {
					corresponding = i
				}
				for i != iEnd && equivs[start] == equivs[i] {
					s.set(f, start, false)
					start++
					s.set(f, i, true)
					i++
					for s.ch(f, i) {
						i++
					}
					for {
						j++
						if !s.ch(other, j) {
							break
						}
						corresponding = i
					}
				}
				if runlength == i-start {
					break
				}
			}
			for corresponding < i {
				start--
				s.set(f, start, true)
				i--
				s.set(f, i, false)
				for {
					j--
					if !s.ch(other, j) {
						break
					}
				}
			}
		}
	}
}
