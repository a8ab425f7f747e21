package parser

// sqlfs patch 1: Unicode property escapes (\p{...}, \P{...}) of unicode
// patterns, written as Go's \p{...} for general categories and scripts,
// and as explicit ranges from Go's unicode tables for the binary
// properties it has or that derive from them.

import (
	"fmt"
	"strings"
	"unicode"
)

var categoryAliases = map[string]string{
	"Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M",
	"Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N",
	"Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
	"Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
	"Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm",
	"Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z",
	"Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C",
	"Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Private_Use": "Co", "Surrogate": "Cs",
}

var scriptAliases = map[string]string{
	"Latn": "Latin", "Grek": "Greek", "Cyrl": "Cyrillic", "Hani": "Han", "Arab": "Arabic",
	"Hebr": "Hebrew", "Hira": "Hiragana", "Kana": "Katakana", "Hang": "Hangul", "Thai": "Thai",
	"Deva": "Devanagari", "Zyyy": "Common", "Zinh": "Inherited", "Qaai": "Inherited",
}

var binaryAliases = map[string]string{
	"Alpha": "Alphabetic", "space": "White_Space", "Upper": "Uppercase", "Lower": "Lowercase",
	"AHex": "ASCII_Hex_Digit", "Hex": "Hex_Digit", "Ideo": "Ideographic", "QMark": "Quotation_Mark",
	"RI": "Regional_Indicator", "STerm": "Sentence_Terminal", "Term": "Terminal_Punctuation",
	"UIdeo": "Unified_Ideograph", "VS": "Variation_Selector", "WSpace": "White_Space",
	"Dia": "Diacritic", "Ext": "Extender", "Join_C": "Join_Control", "NChar": "Noncharacter_Code_Point",
	"Pat_Syn": "Pattern_Syntax", "Pat_WS": "Pattern_White_Space", "SD": "Soft_Dotted",
	"Bidi_C": "Bidi_Control", "Dep": "Deprecated", "LOE": "Logical_Order_Exception",
}

// derived are binary properties made of categories and Go's Other_* tables.
var derived = map[string]struct {
	cats   []string
	tables []*unicode.RangeTable
}{
	"Alphabetic": {[]string{"L", "Nl"}, []*unicode.RangeTable{unicode.Other_Alphabetic, unicode.Other_Uppercase, unicode.Other_Lowercase}},
	"Uppercase":  {[]string{"Lu"}, []*unicode.RangeTable{unicode.Other_Uppercase}},
	"Lowercase":  {[]string{"Ll"}, []*unicode.RangeTable{unicode.Other_Lowercase}},
	"Any":        {nil, []*unicode.RangeTable{{R32: []unicode.Range32{{Lo: 0, Hi: unicode.MaxRune, Stride: 1}}}}},
	"ASCII":      {nil, []*unicode.RangeTable{{R16: []unicode.Range16{{Lo: 0, Hi: 0x7f, Stride: 1}}}}},
}

// unicodePropertyClass is the Go regexp text for \p{name} (\P{name} when
// negate), inside a character class when inClass.
func unicodePropertyClass(name string, negate, inClass bool) (string, bool) {
	key, value, hasKey := strings.Cut(name, "=")
	p := "\\p"
	if negate {
		p = "\\P"
	}
	category := func(v string) (string, bool) {
		if a, ok := categoryAliases[v]; ok {
			v = a
		}
		if _, ok := unicode.Categories[v]; ok {
			return p + "{" + v + "}", true
		}
		return "", false
	}
	if hasKey {
		switch key {
		case "General_Category", "gc":
			return category(value)
		case "Script", "sc":
			if a, ok := scriptAliases[value]; ok {
				value = a
			}
			if _, ok := unicode.Scripts[value]; ok {
				return p + "{" + value + "}", true
			}
		}
		// Script_Extensions and the rest: Go has no tables for them.
		return "", false
	}
	if c, ok := category(name); ok {
		return c, true
	}
	if a, ok := binaryAliases[name]; ok {
		name = a
	}
	var body strings.Builder
	if d, ok := derived[name]; ok {
		for _, c := range d.cats {
			body.WriteString("\\p{" + c + "}")
		}
		for _, t := range d.tables {
			writeRanges(&body, t)
		}
	} else if t, ok := unicode.Properties[name]; ok && !strings.HasPrefix(name, "Other_") {
		writeRanges(&body, t)
	} else {
		return "", false
	}
	switch {
	case !negate && inClass:
		return body.String(), true
	case negate && inClass:
		// Go cannot nest a negated class in a class.
		return "", false
	case negate:
		return "[^" + body.String() + "]", true
	}
	return "[" + body.String() + "]", true
}

func writeRanges(b *strings.Builder, t *unicode.RangeTable) {
	add := func(lo, hi, stride uint32) {
		if stride == 1 {
			fmt.Fprintf(b, "\\x{%x}-\\x{%x}", lo, hi)
			return
		}
		for r := lo; r <= hi; r += stride {
			fmt.Fprintf(b, "\\x{%x}", r)
		}
	}
	for _, r := range t.R16 {
		add(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range t.R32 {
		add(r.Lo, r.Hi, r.Stride)
	}
}
