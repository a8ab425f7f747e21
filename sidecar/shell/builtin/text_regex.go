package builtin

import (
	"fmt"
	"regexp"
	"strings"
)

// textTranslateRE rewrites a POSIX BRE/ERE into Go's regexp syntax;
// compile the result with textRegexp.
func textTranslateRE(pat string, ere bool) (string, error) {
	var b strings.Builder
	// atStart: a "*" here is literal, and in a BRE "^" is an anchor.
	atStart := true
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		wasStart := atStart
		atStart = false
		switch c {
		case '[':
			end, err := textBracket(pat, i, &b)
			if err != nil {
				return "", err
			}
			i = end
		case '\\':
			if i+1 >= len(pat) {
				return "", fmt.Errorf("trailing backslash (\\)")
			}
			i++
			d := pat[i]
			switch {
			case d >= '1' && d <= '9':
				// A back-reference: a private-use rune textRegexp spots.
				fmt.Fprintf(&b, `\x{%X}`, textBackrefBase+int(d-'0'))
			case !ere && (d == '(' || d == '|'):
				b.WriteByte(d)
				atStart = true
			case !ere && (d == ')' || d == '+' || d == '?'):
				b.WriteByte(d)
			case !ere && d == '{':
				b.WriteByte('{')
			case !ere && d == '}':
				b.WriteByte('}')
			case d == '<' || d == '>':
				b.WriteString(`\b`)
			case d == '`':
				b.WriteString(`\A`)
			case d == '\'':
				b.WriteString(`\z`)
			case d == 'n':
				b.WriteString(`\n`)
			case d == 't':
				b.WriteString(`\t`)
			case strings.IndexByte("bBwWsS", d) >= 0:
				b.WriteByte('\\')
				b.WriteByte(d)
			case d < 0x80 && !isTextAlnum(d):
				b.WriteByte('\\')
				b.WriteByte(d)
			default:
				b.WriteString(regexp.QuoteMeta(string(d)))
			}
		case '*':
			if wasStart {
				b.WriteString(`\*`)
			} else {
				b.WriteByte('*')
			}
		case '^':
			if ere || wasStart {
				b.WriteByte('^')
				atStart = true
			} else {
				b.WriteString(`\^`)
			}
		case '$':
			// In a BRE "$" anchors only at the end or before \) and \|.
			rest := pat[i+1:]
			if ere || rest == "" || strings.HasPrefix(rest, `\)`) || strings.HasPrefix(rest, `\|`) {
				b.WriteByte('$')
			} else {
				b.WriteString(`\$`)
			}
		case '(', '|':
			if ere {
				b.WriteByte(c)
				atStart = true
			} else {
				b.WriteByte('\\')
				b.WriteByte(c)
			}
		case ')':
			if ere {
				b.WriteByte(c)
			} else {
				b.WriteString(`\)`)
			}
		case '+', '?':
			if ere && !wasStart {
				b.WriteByte(c)
			} else {
				b.WriteByte('\\')
				b.WriteByte(c)
			}
		case '{':
			if ere && !wasStart && textInterval(pat[i:]) {
				end := i + strings.IndexByte(pat[i:], '}')
				b.WriteString(pat[i : end+1])
				i = end
			} else {
				b.WriteString(`\{`)
			}
		case '}':
			b.WriteString(`\}`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isTextAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// textInterval reports whether s starts with a valid "{n}", "{n,}" or
// "{n,m}"; GNU takes any other "{" literally in an ERE.
func textInterval(s string) bool {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return false
	}
	body := s[1:end]
	lo, hi, _ := strings.Cut(body, ",")
	if lo == "" {
		return false
	}
	for _, part := range []string{lo, hi} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// textBracket copies the bracket expression starting at pat[i] to b and
// returns the index of its closing "]". Backslashes are literal inside
// POSIX brackets, so they are escaped for RE2.
func textBracket(pat string, i int, b *strings.Builder) (int, error) {
	j := i + 1
	b.WriteByte('[')
	if j < len(pat) && pat[j] == '^' {
		b.WriteByte('^')
		j++
	}
	first := true
	for ; j < len(pat); j++ {
		c := pat[j]
		switch {
		case c == ']' && !first:
			b.WriteByte(']')
			return j, nil
		case c == ']':
			b.WriteString(`\]`)
		case c == '[' && j+1 < len(pat) && (pat[j+1] == ':' || pat[j+1] == '=' || pat[j+1] == '.'):
			kind := pat[j+1]
			end := strings.Index(pat[j+2:], string(kind)+"]")
			if end < 0 {
				return 0, fmt.Errorf("unmatched [, [^, [:, [., or [=")
			}
			name := pat[j+2 : j+2+end]
			if kind == ':' {
				b.WriteString("[:" + name + ":]")
			} else {
				b.WriteString(regexp.QuoteMeta(name))
			}
			j += 2 + end + 1
		case c == '\\' || c == '[':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
		first = false
	}
	return 0, fmt.Errorf("unmatched [, [^, [:, [., or [=")
}
