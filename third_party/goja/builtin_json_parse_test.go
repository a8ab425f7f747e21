package goja

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dop251/goja/unistring"
)

// oldJSONParse is JSON.parse as it was before sqlfs patch 4, through
// encoding/json's tokens: the reference for the differential tests. Where
// it was wrong (a lone surrogate became U+FFFD, a number out of range was
// an error) the tests say so.
func oldJSONParse(r *Runtime, text string) (v Value, err error) {
	d := json.NewDecoder(strings.NewReader(text))
	if v, err = oldJSONValue(r, d); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("unexpected token at the end")
	}
	return v, nil
}

func oldJSONValue(r *Runtime, d *json.Decoder) (Value, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	return oldJSONToken(r, d, tok)
}

func oldJSONToken(r *Runtime, d *json.Decoder, tok json.Token) (Value, error) {
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			o := r.NewObject()
			for {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				if k == json.Delim('}') {
					return o, nil
				}
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("key %v", k)
				}
				v, err := oldJSONValue(r, d)
				if err != nil {
					return nil, err
				}
				o.self._putProp(unistring.NewFromString(key), v, true, true, true)
			}
		case '[':
			var values []Value
			for {
				tok, err := d.Token()
				if err != nil {
					return nil, err
				}
				if tok == json.Delim(']') {
					return r.newArrayValues(values), nil
				}
				v, err := oldJSONToken(r, d, tok)
				if err != nil {
					return nil, err
				}
				values = append(values, v)
			}
		}
	case nil:
		return _null, nil
	case string:
		return newStringValue(tok), nil
	case float64:
		return floatToValue(tok), nil
	case bool:
		if tok {
			return valueTrue, nil
		}
		return valueFalse, nil
	}
	return nil, fmt.Errorf("token %v", tok)
}

// newJSONParse calls JSON.parse as a program does.
func newJSONParse(r *Runtime, text String) (v Value, err error) {
	parse, _ := AssertFunction(r.Get("JSON").ToObject(r).Get("parse"))
	return parse(nil, text)
}

// jsonSame says where a and b differ: key order, own properties, types and
// values (SameValue, so -0 is not 0); strings compare as Go strings when
// lenient (a lone surrogate as U+FFFD), else code unit by code unit.
func jsonSame(a, b Value, lenient bool) error {
	ao, aok := a.(*Object)
	bo, bok := b.(*Object)
	if aok != bok {
		return fmt.Errorf("%v vs %v", a, b)
	}
	if !aok {
		as, aStr := a.(String)
		bs, bStr := b.(String)
		if aStr && bStr && lenient {
			if as.String() != bs.String() {
				return fmt.Errorf("%q vs %q", as.String(), bs.String())
			}
			return nil
		}
		if !a.SameAs(b) {
			return fmt.Errorf("%v (%T) vs %v (%T)", a, a, b, b)
		}
		return nil
	}
	if isArray(ao) != isArray(bo) {
		return fmt.Errorf("array %v vs %v", isArray(ao), isArray(bo))
	}
	ak, bk := ao.self.stringKeys(true, nil), bo.self.stringKeys(true, nil)
	if len(ak) != len(bk) {
		return fmt.Errorf("keys %v vs %v", ak, bk)
	}
	for i := range ak {
		if err := jsonSame(ak[i], bk[i], lenient); err != nil {
			return fmt.Errorf("key %d: %w", i, err)
		}
		if err := jsonSame(ao.self.getStr(ak[i].string(), nil), bo.self.getStr(bk[i].string(), nil), lenient); err != nil {
			return fmt.Errorf("%s: %w", ak[i], err)
		}
	}
	if ao.self.proto() != bo.self.proto() {
		return errors.New("prototypes differ")
	}
	return nil
}

func TestJSONParse(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // a program that is true of v, the parsed value
	}{
		{`{"a":1,"b":[true,false,null],"c":"x"}`, `v.a === 1 && v.b.length === 3 && v.b[2] === null && v.c === 'x'`},
		{` [ 1 , 2 ] `, `v[1] === 2`},
		{`"\ud83d\ude00"`, `v === '\u{1F600}' && v.length === 2`},
		{`"\ud800"`, `v.length === 1 && v.charCodeAt(0) === 0xd800`},
		{`"a\udc00\ud800b"`, `v.length === 4 && v.charCodeAt(1) === 0xdc00 && v.charCodeAt(2) === 0xd800`},
		{`{"\udfff":1}`, `Object.keys(v)[0].charCodeAt(0) === 0xdfff`},
		{"\"é😀\"", `v === 'é\u{1F600}'`},
		{`"\"\\\/\b\f\n\r\t\u00e9\u0041"`, `v === '"\\/\b\f\n\r\té' + 'A'`},
		{`-0`, `Object.is(v, -0)`},
		{`[-0.0, 0, 1E2, -1e-2, 1.5]`, `Object.is(v[0], -0) && Object.is(v[1], 0) && v[2] === 100 && v[3] === -0.01 && v[4] === 1.5`},
		{`1e400`, `v === Infinity`},
		{`-1e400`, `v === -Infinity`},
		{`1e-400`, `Object.is(v, 0)`},
		{`123456789012345678901234567890`, `v === 1.2345678901234568e29`},
		{`9007199254740993`, `v === 9007199254740992`},
		{`0.1`, `v === 0.1`},
		{`{"__proto__":{"x":1}}`, `Object.getPrototypeOf(v) === Object.prototype && v.x === undefined && Object.keys(v)[0] === '__proto__' && v.__proto__ === Object.getPrototypeOf(v) ? false : Object.getOwnPropertyDescriptor(v, '__proto__').value.x === 1`},
		{`{"a":1,"b":2,"a":3}`, `v.a === 3 && Object.keys(v).join() === 'a,b'`},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r := New()
			v, err := newJSONParse(r, newStringValue(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			r.Set("v", v)
			ok, err := r.RunString(tc.want)
			if err != nil || !ok.ToBoolean() {
				t.Fatalf("%s: %v, %v", tc.want, ok, err)
			}
		})
	}
}

func TestJSONParseKeyOrderAsBefore(t *testing.T) {
	r := New()
	const text = `{"b":1,"2":2,"a":3,"1":4,"a":5,"-1":6,"01":7}`
	v, err := newJSONParse(r, asciiString(text))
	if err != nil {
		t.Fatal(err)
	}
	old, err := oldJSONParse(r, text)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonSame(v, old, false); err != nil {
		t.Fatal(err)
	}
}

func TestJSONParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, msg string }{
		{``, "Unexpected end of JSON input"},
		{`{bad`, "Expected property name or '}' in JSON at position 1"},
		{`{"a":1,}`, "Expected double-quoted property name in JSON at position 7"},
		{`[1,]`, "Unexpected token ']' in JSON at position 3"},
		{`[1 2]`, "Expected ',' or ']' after array element in JSON at position 3"},
		{`{"a" 1}`, "Expected ':' after property name in JSON at position 5"},
		{`{"a":1 "b"}`, "Expected ',' or '}' after property value in JSON at position 7"},
		{`1 2`, "Unexpected non-whitespace character after JSON at position 2"},
		{`01`, "Unexpected non-whitespace character after JSON at position 1"},
		{`-`, "Unexpected end of JSON input"},
		{`-a`, "No number after minus sign in JSON at position 1"},
		{`1.`, "Unexpected end of JSON input"},
		{`1.e1`, "Unterminated fractional number in JSON at position 2"},
		{`1e+`, "Unexpected end of JSON input"},
		{`1e+x`, "Exponent part is missing a number in JSON at position 3"},
		{`.5`, "Unexpected token '.' in JSON at position 0"},
		{`+1`, "Unexpected token '+' in JSON at position 0"},
		{`tru`, "Unexpected end of JSON input"},
		{`nul1`, "Unexpected token '1' in JSON at position 3"},
		{`"abc`, "Unexpected end of JSON input"},
		{"\"a\tb\"", "Bad control character in string literal in JSON at position 2"},
		{`"\x"`, "Bad escaped character in JSON at position 2"},
		{`"\u12g4"`, "Bad Unicode escape in JSON at position 5"},
		{`"é\q"`, "Bad escaped character in JSON at position 3"},
		{"\"é\"x", "Unexpected non-whitespace character after JSON at position 3"},
		{"'a'", "Unexpected token ''' in JSON at position 0"},
		{"\u00a0 1", "Unexpected token in JSON at position 0"},
		{"[1]\x00", "Unexpected non-whitespace character after JSON at position 3"},
		{strings.Repeat("[", jsonMaxDepth+1) + strings.Repeat("]", jsonMaxDepth+1), "Nesting deeper than 10000 in JSON at position 10000"},
		{strings.Repeat("[", 1<<20), "Nesting deeper than 10000 in JSON at position 10000"},
	} {
		t.Run(tc.text[:min(len(tc.text), 20)], func(t *testing.T) {
			r := New()
			_, err := newJSONParse(r, newStringValue(tc.text))
			var ex *Exception
			if !errors.As(err, &ex) {
				t.Fatalf("err %v", err)
			}
			o := ex.Value().ToObject(r)
			if name := o.Get("name").String(); name != "SyntaxError" {
				t.Errorf("%s, want SyntaxError", name)
			}
			if msg := o.Get("message").String(); msg != tc.msg {
				t.Errorf("%q, want %q", msg, tc.msg)
			}
			// The old parser's Token had no depth limit.
			if _, err := oldJSONParse(r, tc.text); err == nil && !strings.HasPrefix(tc.msg, "Nesting") {
				t.Errorf("the old parser took it")
			}
		})
	}
}

func TestJSONParseDepth(t *testing.T) {
	r := New()
	for _, text := range []string{
		strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth),
		strings.Repeat(`{"a":`, jsonMaxDepth) + "1" + strings.Repeat("}", jsonMaxDepth),
	} {
		v, err := newJSONParse(r, asciiString(text))
		if err != nil {
			t.Fatal(err)
		}
		old, err := oldJSONParse(r, text)
		if err != nil {
			t.Fatal(err)
		}
		if err := jsonSame(v, old, false); err != nil {
			t.Fatal(err)
		}
	}
}

func TestJSONParseReviver(t *testing.T) {
	r := New()
	v, err := r.RunString(`JSON.stringify(JSON.parse('{"a":[1,{"b":2}],"c":3,"d":"x"}', function (k, v) {
		if (k === 'c') return undefined;
		return typeof v === 'number' ? v * 10 : v;
	}))`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `{"a":[10,{"b":20}],"d":"x"}`; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

// checkJSONParse holds the new parser to the old on text: the same values
// (strings as Go strings, which is how the old one saw them), errors for
// the same texts but the numbers out of range it rejected, and a round
// trip through JSON.stringify.
func checkJSONParse(t *testing.T, text string) {
	r := New()
	v, err := newJSONParse(r, newStringValue(text))
	old, oldErr := oldJSONParse(r, text)
	if oldErr != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(oldErr, &ute) && strings.HasPrefix(ute.Value, "number") {
			return // out of range: ±Inf or 0 now, as JavaScript has it
		}
		if err == nil {
			t.Fatalf("%q: parsed, the old parser said %v", text, oldErr)
		}
		var ex *Exception
		if !errors.As(err, &ex) || ex.Value().ToObject(r).Get("name").String() != "SyntaxError" {
			t.Fatalf("%q: %v, not a SyntaxError", text, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: %v, the old parser took it", text, err)
	}
	if err := jsonSame(v, old, true); err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	stringify, _ := AssertFunction(r.Get("JSON").ToObject(r).Get("stringify"))
	s1, err := stringify(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := newJSONParse(r, s1.toString())
	if err != nil {
		t.Fatalf("%q: stringified %q: %v", text, s1, err)
	}
	if s2, _ := stringify(nil, v2); !s2.SameAs(s1) {
		t.Fatalf("%q: %q then %q", text, s1, s2)
	}
}

var jsonCorpus = []string{
	`{"i":1,"name":"file 1","tags":["a","b"]}`,
	`{"name":"sqlfs","version":"1.0.0","dependencies":{"a":"^1.2.3"},"scripts":{"test":"go test ./..."}}`,
	`[1,-2,3.5,-0,0e0,1E+2,1e-2,9007199254740993,123456789012345678901234567890]`,
	`{"":"","\u0000":"\u001f","k\"e\\y":"\ud83d\ude00\u00e9\u2028","é":"😀"}`,
	`"\ud800"`, `"\udc00\ud800"`, `{"a":1,"a":2,"__proto__":3}`,
	" \t\r\n[ \t\r\n{ \t\r\n} \t\r\n] \t\r\n",
	`[[[[[[[[[[]]]]]]]]]]`, `{"a":{"b":{"c":[{"d":null}]}}}`,
	`true`, `false`, `null`, `""`, `0`, `-1`, `1.0e-320`, `1e400`,
	`{`, `[`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.1`, `-`, `+1`, `1e`, `NaN`, `"\x"`, `"\u12"`, "\"\t\"", `tru`, `nulll`,
	"\xff", "\"\xff\"", "\"\xed\xa0\x80\"", "[1]x", "\u00a0", "\ufeff1",
}

func TestJSONParseCorpus(t *testing.T) {
	for _, text := range jsonCorpus {
		checkJSONParse(t, text)
	}
}

func FuzzJSONParse(f *testing.F) {
	for _, text := range jsonCorpus {
		f.Add(text)
	}
	f.Fuzz(checkJSONParse)
}

// The typical inputs: the small-files benchmark's file, a package.json, an
// array of numbers and one of non-ASCII strings with escapes.
var jsonBenchInputs = []struct{ name, text string }{
	{"small", `{"i":517,"name":"file 517","tags":["a","b"]}`},
	{"package", `{"name":"left-pad","version":"1.3.0","description":"String left pad","main":"index.js","types":"index.d.ts","scripts":{"test":"node test","bench":"node perf/perf.js"},"repository":{"url":"git+https://github.com/stevemao/left-pad.git","type":"git"},"keywords":["leftpad","left","pad","padding","string","repeat"],"author":"azer","license":"WTFPL","bugs":{"url":"https://github.com/stevemao/left-pad/issues"},"homepage":"https://github.com/stevemao/left-pad#readme","devDependencies":{"benchmark":"^2.1.0","fast-check":"0.0.8","tape":"*"}}`},
	{"numbers", "[" + strings.Repeat("1.5,-20,3e5,0.001,123456,", 40) + "7]"},
	{"unicode", "[" + strings.Repeat(`"héllo wörld \u00e9\n",`, 40) + `"😀"]`},
}

func BenchmarkJSONParse(b *testing.B) {
	for _, in := range jsonBenchInputs {
		b.Run(in.name, func(b *testing.B) {
			r := New()
			text := newStringValue(in.text)
			b.Run("new", func(b *testing.B) {
				for b.Loop() {
					if _, err := newJSONParse(r, text); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("old", func(b *testing.B) {
				for b.Loop() {
					// As the old JSON.parse did: the String to a Go string first.
					if _, err := oldJSONParse(r, text.String()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
