package js

import (
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

//go:generate sh -c "node testdata/intl/tables.js intl_tables.go && gofmt -w intl_tables.go"

// The Go halves of Intl (lib/intl.js): the decimal digits of a number,
// time zones from Go's database, and collation from x/text. The library
// builds en-US's formats (ICU's, as Node 20 prints them) over these.

func (v *vm) intlNatives() map[string]any {
	zones := map[string]*time.Location{"UTC": time.UTC}
	load := func(name string) *time.Location {
		if loc, ok := zones[name]; ok {
			return loc
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			loc = nil
		}
		zones[name] = loc
		return loc
	}
	return map[string]any{
		// digits is the shortest decimal that reads back as x (x finite,
		// not negative): its digits and the exponent e such that x is
		// 0.DIGITS × 10^e, what ICU formats from.
		"digits": func(x float64) []any {
			s := strconv.FormatFloat(x, 'e', -1, 64)
			mant, exp, _ := strings.Cut(s, "e")
			e, _ := strconv.Atoi(exp)
			d := strings.Replace(mant, ".", "", 1)
			if d == "0" {
				return []any{"0", 1}
			}
			return []any{d, e + 1}
		},
		"defaultZone": defaultZone,
		// currency is en-US's symbol, narrow symbol, digits and names of
		// an ISO 4217 code; nil when ICU has none.
		"currency": func(code string) []any {
			c, ok := currencies[code]
			if !ok {
				return nil
			}
			return []any{c.symbol, c.narrow, c.digits, c.one, c.other}
		},
		// unit is the text around a number in a unit, by display and
		// plural form; nil for a unit not in the tables.
		"unit": func(name string) any {
			u, ok := units[name]
			if !ok {
				return nil
			}
			return u
		},
		// zone is the canonical name of a time zone, or "" if Go's
		// database lacks it.
		"zone": func(name string) string {
			if strings.EqualFold(name, "UTC") || strings.EqualFold(name, "GMT") {
				return "UTC"
			}
			if name == "" || name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
				return ""
			}
			if load(name) == nil {
				return ""
			}
			return canonicalUTC(name)
		},
		// fields are the wall clock of instant ms (since the epoch) in
		// zone: year, month (1-12), day, hour, minute, second,
		// millisecond, weekday (0 Sunday), offset east of UTC in minutes
		// and the zone's abbreviation there.
		"fields": func(ms float64, zone string) []any {
			loc := load(zone)
			if loc == nil {
				loc = time.UTC
			}
			t := time.UnixMilli(int64(ms)).In(loc)
			abbr, off := t.Zone()
			return []any{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1e6, int(t.Weekday()), off / 60, abbr}
		},
		// collator compares by the Unicode collation algorithm with the
		// options of a BCP 47 tag (ks strength, kn numeric, ka alternate),
		// accents ignored if asked.
		"collator": func(tag string, ignoreAccents bool) func(a, b string) int {
			t, err := language.Parse(tag)
			if err != nil {
				panic(v.rt.NewTypeError("Intl.Collator: " + err.Error()))
			}
			c := collate.New(t, collate.OptionsFromTag(t))
			if !ignoreAccents {
				return c.CompareString
			}
			// ICU's case level: equal letters compared by case alone, so
			// the same strings without their combining marks.
			return func(a, b string) int { return c.CompareString(stripMarks(a), stripMarks(b)) }
		},
	}
}

func stripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

type currencyData struct {
	symbol, narrow string
	digits         int
	one, other     string
}

// defaultZone is the IANA name of the zone goja's local time uses
// (time.Local): TZ when set, else /etc/localtime's target, as Node finds
// it; UTC when neither names one.
func defaultZone() string {
	if name := time.Local.String(); name != "Local" && name != "" {
		return canonicalUTC(name)
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			return canonicalUTC(name)
		}
	}
	return "UTC"
}

func canonicalUTC(name string) string {
	switch name {
	case "Etc/UTC", "Etc/GMT", "GMT", "UCT", "Etc/UCT", "Universal", "Zulu", "Etc/Universal", "Etc/Zulu":
		return "UTC"
	}
	return name
}
