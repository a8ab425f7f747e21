package builtin

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textRE is what grep, sed and expr need of a compiled pattern. Go's
// *regexp.Regexp provides it; patterns with back-references, which RE2
// cannot run, get a backtracking matcher instead.
type textRE interface {
	Match(b []byte) bool
	MatchString(s string) bool
	FindIndex(b []byte) []int
	FindAllStringSubmatchIndex(s string, n int) [][]int
	FindStringSubmatch(s string) []string
	NumSubexp() int
}

// Back-references travel through Go's regexp syntax as private-use runes
// (\N is textBackrefBase+N), so regexp/syntax parses the whole pattern.
const textBackrefBase = 0xF0000

// textBackrefStep bounds one match attempt: backtracking is exponential on
// some patterns, and a command must not hang on one line.
const textBackrefStep = 5_000_000

// textRegexp compiles Go syntax produced by textTranslateRE.
func textRegexp(expr string) (textRE, error) {
	if !strings.Contains(expr, `\x{F000`) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, err
		}
		re.Longest()
		return re, nil
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return &backrefRE{tree: tree, ncap: tree.MaxCap()}, nil
}

// backrefRE matches by backtracking over the parsed syntax tree. Among the
// matches at the leftmost position it takes the first in greedy order, as
// Perl does, rather than POSIX's longest.
type backrefRE struct {
	tree *syntax.Regexp
	ncap int
}

// backrefRun is one match attempt.
type backrefRun struct {
	s     string
	caps  []int
	steps int
}

func (re *backrefRE) NumSubexp() int { return re.ncap }

func (re *backrefRE) MatchString(s string) bool { return re.find(s, 0) != nil }
func (re *backrefRE) Match(b []byte) bool       { return re.find(string(b), 0) != nil }

func (re *backrefRE) FindIndex(b []byte) []int {
	if m := re.find(string(b), 0); m != nil {
		return m[:2]
	}
	return nil
}

func (re *backrefRE) FindStringSubmatch(s string) []string {
	m := re.find(s, 0)
	if m == nil {
		return nil
	}
	out := make([]string, len(m)/2)
	for i := range out {
		if m[2*i] >= 0 {
			out[i] = s[m[2*i]:m[2*i+1]]
		}
	}
	return out
}

// FindAllStringSubmatchIndex follows regexp's rule: an empty match right
// after the previous match is skipped.
func (re *backrefRE) FindAllStringSubmatchIndex(s string, n int) [][]int {
	var out [][]int
	prevEnd := -1
	for pos := 0; pos <= len(s) && (n < 0 || len(out) < n); {
		m := re.find(s, pos)
		if m == nil {
			break
		}
		if m[1] == m[0] && m[0] == prevEnd {
			if m[0] >= len(s) {
				break
			}
			_, size := utf8.DecodeRuneInString(s[m[0]:])
			pos = m[0] + size
			continue
		}
		out = append(out, m)
		prevEnd = m[1]
		if m[1] > m[0] {
			pos = m[1]
		} else if m[1] < len(s) {
			_, size := utf8.DecodeRuneInString(s[m[1]:])
			pos = m[1] + size
		} else {
			break
		}
	}
	return out
}

// find returns the leftmost match at or after from as submatch indexes.
func (re *backrefRE) find(s string, from int) []int {
	r := &backrefRun{s: s, caps: make([]int, 2*(re.ncap+1))}
	for start := from; start <= len(s); {
		for i := range r.caps {
			r.caps[i] = -1
		}
		end := -1
		if r.match(re.tree, start, func(p int) bool { end = p; return true }) {
			m := append([]int(nil), r.caps...)
			m[0], m[1] = start, end
			return m
		}
		if r.steps > textBackrefStep || start == len(s) {
			return nil
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		start += size
	}
	return nil
}

func backrefWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// match matches node at pos and calls k with the end position; it returns
// what k returns, undoing captures when k fails.
func (r *backrefRun) match(node *syntax.Regexp, pos int, k func(int) bool) bool {
	r.steps++
	if r.steps > textBackrefStep {
		return false
	}
	s := r.s
	fold := node.Flags&syntax.FoldCase != 0
	switch node.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpEmptyMatch:
		return k(pos)
	case syntax.OpLiteral:
		return r.literal(node.Rune, fold, pos, k)
	case syntax.OpCharClass:
		if pos >= len(s) {
			return false
		}
		c, size := utf8.DecodeRuneInString(s[pos:])
		for i := 0; i+1 < len(node.Rune); i += 2 {
			if c >= node.Rune[i] && c <= node.Rune[i+1] {
				return k(pos + size)
			}
		}
		return false
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		if pos >= len(s) || node.Op == syntax.OpAnyCharNotNL && s[pos] == '\n' {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[pos:])
		return k(pos + size)
	case syntax.OpBeginText:
		return pos == 0 && k(pos)
	case syntax.OpEndText:
		return pos == len(s) && k(pos)
	case syntax.OpBeginLine:
		return (pos == 0 || s[pos-1] == '\n') && k(pos)
	case syntax.OpEndLine:
		return (pos == len(s) || s[pos] == '\n') && k(pos)
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		var before, after bool
		if pos > 0 {
			c, _ := utf8.DecodeLastRuneInString(s[:pos])
			before = backrefWord(c)
		}
		if pos < len(s) {
			c, _ := utf8.DecodeRuneInString(s[pos:])
			after = backrefWord(c)
		}
		return (before != after) == (node.Op == syntax.OpWordBoundary) && k(pos)
	case syntax.OpCapture:
		i := 2 * node.Cap
		oldStart, oldEnd := r.caps[i], r.caps[i+1]
		if r.match(node.Sub[0], pos, func(p int) bool {
			ps, pe := r.caps[i], r.caps[i+1]
			r.caps[i], r.caps[i+1] = pos, p
			if k(p) {
				return true
			}
			r.caps[i], r.caps[i+1] = ps, pe
			return false
		}) {
			return true
		}
		r.caps[i], r.caps[i+1] = oldStart, oldEnd
		return false
	case syntax.OpConcat:
		return r.concat(node.Sub, pos, k)
	case syntax.OpAlternate:
		for _, sub := range node.Sub {
			if r.match(sub, pos, k) {
				return true
			}
		}
		return false
	case syntax.OpStar:
		return r.repeat(node.Sub[0], 0, -1, 0, pos, k)
	case syntax.OpPlus:
		return r.repeat(node.Sub[0], 1, -1, 0, pos, k)
	case syntax.OpQuest:
		return r.repeat(node.Sub[0], 0, 1, 0, pos, k)
	case syntax.OpRepeat:
		return r.repeat(node.Sub[0], node.Min, node.Max, 0, pos, k)
	}
	return false
}

func (r *backrefRun) concat(subs []*syntax.Regexp, pos int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(pos)
	}
	return r.match(subs[0], pos, func(p int) bool { return r.concat(subs[1:], p, k) })
}

// repeat is greedy: as many as possible, then fewer. An iteration that
// matched nothing ends the loop, so x** cannot spin.
func (r *backrefRun) repeat(sub *syntax.Regexp, lo, hi, n, pos int, k func(int) bool) bool {
	if hi < 0 || n < hi {
		if r.match(sub, pos, func(p int) bool {
			if p == pos {
				return false
			}
			return r.repeat(sub, lo, hi, n+1, p, k)
		}) {
			return true
		}
	}
	return n >= lo && k(pos)
}

// literal matches runes one by one; a back-reference rune matches the
// text its group captured.
func (r *backrefRun) literal(runes []rune, fold bool, pos int, k func(int) bool) bool {
	s := r.s
	for _, want := range runes {
		if want > textBackrefBase && want <= textBackrefBase+9 {
			g := 2 * int(want-textBackrefBase)
			if g >= len(r.caps) || r.caps[g] < 0 {
				return false
			}
			text := s[r.caps[g]:r.caps[g+1]]
			switch {
			case strings.HasPrefix(s[pos:], text):
			case fold && len(s)-pos >= len(text) && strings.EqualFold(s[pos:pos+len(text)], text):
			default:
				return false
			}
			pos += len(text)
			continue
		}
		if pos >= len(s) {
			return false
		}
		c, size := utf8.DecodeRuneInString(s[pos:])
		if c != want && !(fold && unicode.SimpleFold(c) != c && backrefFoldEq(c, want)) {
			return false
		}
		pos += size
	}
	return k(pos)
}

func backrefFoldEq(a, b rune) bool {
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}
