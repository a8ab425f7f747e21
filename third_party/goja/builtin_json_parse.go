package goja

import (
	"fmt"
	"strconv"
)

// sqlfs patch 4: JSON.parse reads the text itself (RFC 8259 grammar,
// ECMAScript's JSON.parse values) instead of through encoding/json's
// Decoder.Token, which reflected each token into an interface and spent 17%
// of a js worker's CPU in the small-files benchmark.

// jsonMaxDepth bounds the nesting so that a deep text errs instead of
// growing the Go stack without bound (the parser recurses); it is
// encoding/json's limit for its decoding (its Token, which the parser used
// before, had none).
const jsonMaxDepth = 10000

// jsonParser parses s, which is the ASCII text itself or, for a text with
// other characters, its UTF-16 code units each encoded as UTF-8 would encode
// it (CESU-8: a lone surrogate stays one 3-byte unit), so that strings keep
// the text's code units exactly.
type jsonParser struct {
	r     *Runtime
	s     string
	pos   int
	depth int
	items []Value // the elements of the arrays being parsed, innermost last
	units []uint16
}

// jsonSyntaxError is what the parser panics with; parse turns it into a
// SyntaxError.
type jsonSyntaxError struct{ msg string }

func (r *Runtime) jsonParse(text String) Value {
	a, u := devirtualizeString(text)
	p := jsonParser{r: r, s: string(a)}
	if u != nil {
		p.s = cesu8(u[1:])
	}
	v, err := p.parse()
	if err != nil {
		panic(r.newError(r.getSyntaxError(), err.msg))
	}
	return v
}

func cesu8(u []uint16) string {
	b := make([]byte, 0, len(u)+len(u)/2)
	for _, c := range u {
		switch {
		case c < 0x80:
			b = append(b, byte(c))
		case c < 0x800:
			b = append(b, 0xC0|byte(c>>6), 0x80|byte(c&0x3F))
		default:
			b = append(b, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
		}
	}
	return string(b)
}

func (p *jsonParser) parse() (v Value, err *jsonSyntaxError) {
	defer func() {
		if x := recover(); x != nil {
			e, ok := x.(*jsonSyntaxError)
			if !ok {
				panic(x)
			}
			err = e
		}
	}()
	v = p.value()
	p.skipSpace()
	if p.pos < len(p.s) {
		p.fail("Unexpected non-whitespace character after JSON")
	}
	return v, nil
}

// fail reports what went wrong at p.pos, counted in UTF-16 code units as a
// JavaScript program counts.
func (p *jsonParser) fail(what string) {
	if p.pos >= len(p.s) {
		panic(&jsonSyntaxError{"Unexpected end of JSON input"})
	}
	pos := 0
	for i := 0; i < p.pos; i++ {
		if p.s[i]&0xC0 != 0x80 {
			pos++
		}
	}
	panic(&jsonSyntaxError{fmt.Sprintf("%s at position %d", what, pos)})
}

func (p *jsonParser) unexpected() {
	if p.pos < len(p.s) && p.s[p.pos] >= 0x20 && p.s[p.pos] < 0x7F {
		p.fail(fmt.Sprintf("Unexpected token '%c' in JSON", p.s[p.pos]))
	}
	p.fail("Unexpected token in JSON")
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() Value {
	p.skipSpace()
	if p.pos >= len(p.s) {
		p.fail("")
	}
	switch c := p.s[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.string()
	case 't':
		return p.literal("true", valueTrue)
	case 'f':
		return p.literal("false", valueFalse)
	case 'n':
		return p.literal("null", _null)
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return p.number()
		}
		p.unexpected()
		return nil
	}
}

func (p *jsonParser) literal(word string, v Value) Value {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.s) || p.s[p.pos] != word[i] {
			p.unexpected()
		}
		p.pos++
	}
	return v
}

func (p *jsonParser) enter() {
	p.depth++
	if p.depth > jsonMaxDepth {
		p.fail(fmt.Sprintf("Nesting deeper than %d in JSON", jsonMaxDepth))
	}
}

func (p *jsonParser) object() Value {
	p.enter()
	p.pos++ // {
	o := p.r.NewObject()
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		p.depth--
		return o
	}
	for first := true; ; first = false {
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			if first {
				p.fail("Expected property name or '}' in JSON")
			}
			p.fail("Expected double-quoted property name in JSON")
		}
		key := p.string().string()
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			p.fail("Expected ':' after property name in JSON")
		}
		p.pos++
		// _putProp as before: an own data property, "__proto__" included,
		// a repeated key's last value in its first place.
		o.self._putProp(key, p.value(), true, true, true)
		p.skipSpace()
		if p.pos < len(p.s) {
			switch p.s[p.pos] {
			case ',':
				p.pos++
				continue
			case '}':
				p.pos++
				p.depth--
				return o
			}
		}
		p.fail("Expected ',' or '}' after property value in JSON")
	}
}

func (p *jsonParser) array() Value {
	p.enter()
	p.pos++ // [
	start := len(p.items)
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
	} else {
	elements:
		for {
			p.items = append(p.items, p.value())
			p.skipSpace()
			if p.pos < len(p.s) {
				switch p.s[p.pos] {
				case ',':
					p.pos++
					continue
				case ']':
					p.pos++
					break elements
				}
			}
			p.fail("Expected ',' or ']' after array element in JSON")
		}
	}
	values := make([]Value, len(p.items)-start)
	copy(values, p.items[start:])
	clear(p.items[start:]) // the values are the array's now
	p.items = p.items[:start]
	p.depth--
	return p.r.newArrayValues(values)
}

func (p *jsonParser) string() String {
	p.pos++ // "
	start := p.pos
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == '"':
			s := asciiString(p.s[start:p.pos])
			p.pos++
			return s
		case c == '\\' || c >= 0x80:
			return p.unitsString(start)
		case c < 0x20:
			p.fail("Bad control character in string literal in JSON")
		default:
			p.pos++
		}
	}
	p.fail("Unterminated string in JSON")
	return nil
}

// unitsString goes on with a string that has escapes or characters beyond
// ASCII, from p.pos, its plain ASCII start at start.
func (p *jsonParser) unitsString(start int) String {
	b := p.units[:0]
	b = append(b, 0xFEFF) // unicodeString's mark
	for i := start; i < p.pos; i++ {
		b = append(b, uint16(p.s[i]))
	}
	ascii := true
	for {
		if p.pos >= len(p.s) {
			p.fail("Unterminated string in JSON")
		}
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			p.units = b
			if ascii {
				a := make([]byte, len(b)-1)
				for i, u := range b[1:] {
					a[i] = byte(u)
				}
				return asciiString(a)
			}
			return unicodeString(append([]uint16(nil), b...))
		case c < 0x20:
			p.fail("Bad control character in string literal in JSON")
		case c < 0x80 && c != '\\':
			b = append(b, uint16(c))
			p.pos++
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				p.pos++
				p.fail("Unterminated string in JSON")
			}
			p.pos++
			var u uint16
			switch p.s[p.pos] {
			case '"':
				u = '"'
			case '\\':
				u = '\\'
			case '/':
				u = '/'
			case 'b':
				u = '\b'
			case 'f':
				u = '\f'
			case 'n':
				u = '\n'
			case 'r':
				u = '\r'
			case 't':
				u = '\t'
			case 'u':
				for i := 1; i <= 4; i++ {
					if p.pos+i >= len(p.s) {
						p.pos += i
						p.fail("Bad Unicode escape in JSON")
					}
					h := p.s[p.pos+i]
					var d byte
					switch {
					case h >= '0' && h <= '9':
						d = h - '0'
					case h >= 'a' && h <= 'f':
						d = h - 'a' + 10
					case h >= 'A' && h <= 'F':
						d = h - 'A' + 10
					default:
						p.pos += i
						p.fail("Bad Unicode escape in JSON")
					}
					u = u<<4 | uint16(d)
				}
				p.pos += 4
			default:
				p.fail("Bad escaped character in JSON")
			}
			p.pos++
			if u >= 0x80 {
				ascii = false
			}
			b = append(b, u)
		default: // beyond ASCII
			r, n := p.utf8()
			b = append(b, uint16(r))
			p.pos += n
			ascii = false
		}
	}
}

// utf8 decodes the code unit at p.pos. The text is ASCII or made by
// cesu8, so a sequence is well formed and of 2 or 3 bytes.
func (p *jsonParser) utf8() (rune, int) {
	s := p.s[p.pos:]
	switch c := s[0]; {
	case c < 0xE0:
		return rune(c&0x1F)<<6 | rune(s[1]&0x3F), 2
	default:
		return rune(c&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	}
}

func (p *jsonParser) number() Value {
	start := p.pos
	if p.s[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.s) && p.s[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		p.fail("No number after minus sign in JSON")
	}
	integer := true
	if p.pos < len(p.s) && p.s[p.pos] == '.' {
		p.pos++
		integer = false
		if digits() == 0 {
			p.fail("Unterminated fractional number in JSON")
		}
	}
	if p.pos < len(p.s) && (p.s[p.pos] == 'e' || p.s[p.pos] == 'E') {
		p.pos++
		integer = false
		if p.pos < len(p.s) && (p.s[p.pos] == '+' || p.s[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			p.fail("Exponent part is missing a number in JSON")
		}
	}
	text := p.s[start:p.pos]
	// Up to 15 digits an integer is exact in an int64 and a float64; "-0"
	// is no integer (floatToValue keeps it -0).
	if integer && len(text) <= 15 && text != "-0" {
		n, err := strconv.ParseInt(text, 10, 64)
		if err == nil {
			return intToValue(n)
		}
	}
	// A value out of range is ±Inf or 0, as JavaScript has it; the error
	// says only that.
	f, _ := strconv.ParseFloat(text, 64)
	return floatToValue(f)
}
