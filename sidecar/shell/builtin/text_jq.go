package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/itchyny/gojq"
)

func init() { register("jq", textJq) }

// jqOpts are jq's command-line settings.
type jqOpts struct {
	raw, join, compact, slurp, null, exit, rawIn, ascii, tab bool
	indent                                                   int
	names                                                    []string
	values                                                   []any
	named                                                    map[string]any
	positional                                               []any
}

// jqInputs yields the input values of every file in turn; it is also what
// the query's input and inputs read.
type jqInputs struct {
	ctx   context.Context
	env   *Env
	files []string
	rawIn bool
	cur   *json.Decoder
	lines *textLineReader
	name  string
	err   error // a read or parse error ends the inputs
}

func (it *jqInputs) Next() (any, bool) {
	for {
		if it.err != nil {
			return nil, false
		}
		if it.cur == nil && it.lines == nil {
			if len(it.files) == 0 {
				return nil, false
			}
			it.name = it.files[0]
			it.files = it.files[1:]
			r, err := textOpen(it.env, it.name)
			if err != nil {
				it.err = fmt.Errorf("%s: %s", it.name, textStrerror(err))
				return nil, false
			}
			if it.rawIn {
				it.lines = newTextLineReader(it.ctx, it.env, r, '\n')
			} else {
				it.cur = newJqDecoder(it.env, r)
			}
		}
		if it.rawIn {
			if line, _, ok := it.lines.next(); ok {
				return string(line), true
			}
			if it.lines.err != nil {
				it.err = it.lines.err
				return nil, false
			}
			it.lines = nil
			continue
		}
		var v any
		err := it.cur.Decode(&v)
		if errors.Is(err, io.EOF) {
			it.cur = nil
			continue
		}
		if err != nil {
			it.err = fmt.Errorf("%v", err)
			return nil, false
		}
		return jqNormalize(v), true
	}
}

// jqQueryInputs is what the query's input and inputs read: the same
// inputs, but running out is an error for input (as in jq), not the end
// of the query's whole output.
type jqQueryInputs struct{ in *jqInputs }

func (q jqQueryInputs) Next() (any, bool) {
	v, ok := q.in.Next()
	if !ok {
		if q.in.err != nil {
			return q.in.err, true
		}
		return errJqNoInput, true
	}
	return v, true
}

// errJqNoInput says "break" because gojq's inputs stops on an error with that message.
var errJqNoInput = errors.New("break")

// jqNormalize turns integral floats into ints, the way jq's numbers print.
func jqNormalize(v any) any {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 && !(v == 0 && math.Signbit(v)) {
			return int(v)
		}
	case []any:
		for i := range v {
			v[i] = jqNormalize(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = jqNormalize(v[k])
		}
	}
	return v
}

func textJq(ctx context.Context, env *Env, args []string) int {
	o := jqOpts{indent: 2, named: map[string]any{}}
	var ops []string
	restArgs, restJSON := false, false
	usage := func(msg string) int {
		env.Errorf("jq", "%s", msg)
		fmt.Fprintln(env.Stderr, "Use jq --help for help with command-line options,")
		fmt.Fprintln(env.Stderr, "or see the jq manpage, or online docs  at https://stedolan.github.io/jq")
		return 2
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if (restArgs || restJSON) && len(ops) >= 1 && !strings.HasPrefix(a, "-") {
			if restJSON {
				var v any
				if err := json.Unmarshal([]byte(a), &v); err != nil {
					return usage("Invalid JSON text passed to --jsonargs")
				}
				o.positional = append(o.positional, jqNormalize(v))
			} else {
				o.positional = append(o.positional, a)
			}
			continue
		}
		switch a {
		case "--arg", "--argjson", "--slurpfile", "--rawfile":
			if i+2 >= len(args) {
				return usage(a + " takes two parameters (e.g. " + a + " varname value)")
			}
			name, val := args[i+1], args[i+2]
			i += 2
			var v any
			switch a {
			case "--arg":
				v = val
			case "--argjson":
				if err := json.Unmarshal([]byte(val), &v); err != nil {
					return usage("Invalid JSON text passed to --argjson")
				}
				v = jqNormalize(v)
			case "--slurpfile", "--rawfile":
				data, err := textReadAll(ctx, env, val)
				if err != nil {
					return usage(fmt.Sprintf("Bad JSON in --%s %s %s: Could not open %s: %s", a[2:], name, val, val, textStrerror(err)))
				}
				if a == "--rawfile" {
					v = string(data)
				} else {
					var all []any
					dec := json.NewDecoder(strings.NewReader(string(data)))
					for {
						var x any
						if err := dec.Decode(&x); errors.Is(err, io.EOF) {
							break
						} else if err != nil {
							return usage(fmt.Sprintf("Bad JSON in --slurpfile %s %s: %v", name, val, err))
						}
						all = append(all, jqNormalize(x))
					}
					v = all
				}
			}
			o.names = append(o.names, "$"+name)
			o.values = append(o.values, v)
			o.named[name] = v
			continue
		case "--indent":
			if i+1 >= len(args) {
				return usage("--indent takes one parameter")
			}
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 0 || n > 7 {
				return usage("Cannot indent more than 7 characters")
			}
			o.indent = n
			i++
			continue
		case "--args":
			restArgs, restJSON = true, false
			continue
		case "--jsonargs":
			restJSON, restArgs = true, false
			continue
		case "--tab":
			o.tab = true
			continue
		case "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
			continue
		}
		long := map[string]byte{"--raw-output": 'r', "--join-output": 'j', "--compact-output": 'c', "--slurp": 's',
			"--null-input": 'n', "--exit-status": 'e', "--sort-keys": 'S', "--raw-input": 'R', "--ascii-output": 'a',
			"--monochrome-output": 'M', "--color-output": 'C'}
		var letters string
		switch {
		case strings.HasPrefix(a, "--"):
			c, ok := long[a]
			if !ok {
				return usage("Unknown option: " + a)
			}
			letters = string(c)
		case len(a) > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'):
			// "-1" is a filter (a negative number), not options.
			letters = a[1:]
		default:
			ops = append(ops, a)
			continue
		}
		for _, c := range letters {
			switch c {
			case 'r':
				o.raw = true
			case 'j':
				o.raw, o.join = true, true
			case 'c':
				o.compact = true
			case 's':
				o.slurp = true
			case 'n':
				o.null = true
			case 'e':
				o.exit = true
			case 'S':
				// Keys are always sorted: gojq objects keep no order.
			case 'R':
				o.rawIn = true
			case 'a':
				o.ascii = true
			case 'M', 'C':
			default:
				return usage("Unknown option: " + a)
			}
		}
	}
	if len(ops) == 0 {
		return usage("Usage:\tjq [OPTIONS] FILTER [FILES...]")
	}
	filter, files := ops[0], ops[1:]
	if len(files) == 0 {
		files = []string{"-"}
	}
	query, err := gojq.Parse(filter)
	if err != nil {
		env.Errorf("jq", "error: %v", err)
		fmt.Fprintln(env.Stderr, "jq: 1 compile error")
		return 3
	}
	o.names = append(o.names, "$ARGS")
	o.values = append(o.values, map[string]any{"positional": append([]any{}, o.positional...), "named": o.named})
	inputs := &jqInputs{ctx: ctx, env: env, files: files, rawIn: o.rawIn}
	code, err := gojq.Compile(query, gojq.WithVariables(o.names), gojq.WithInputIter(jqQueryInputs{inputs}), jqMemoryOption(ctx, env),
		gojq.WithEnvironLoader(func() []string { return textEnviron(env) }))
	if err != nil {
		env.Errorf("jq", "error: %v", err)
		fmt.Fprintln(env.Stderr, "jq: 1 compile error")
		return 3
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	status := 0
	var last any
	outputs := 0
	run := func(input any) bool {
		iter := code.RunWithContext(ctx, input, o.values...)
		for {
			v, ok := iter.Next()
			if !ok {
				return true
			}
			if err, isErr := v.(error); isErr {
				var halt *gojq.HaltError
				if errors.As(err, &halt) {
					if hv := halt.Value(); hv != nil {
						w.Flush()
						if s, isStr := hv.(string); isStr {
							fmt.Fprint(env.Stderr, s)
						} else {
							ew := bufio.NewWriter(env.Stderr)
							_ = jqEncode(ctx, ew, hv, jqOpts{compact: true}) // stderr's errors are not reported
							ew.WriteByte('\n')
							ew.Flush()
						}
					}
					status = halt.ExitCode()
					return false
				}
				if ctx.Err() != nil {
					status = 5
					return false // stopped with the exec, which reports why
				}
				w.Flush()
				env.Errorf("jq", "error (at %s): %v", jqWhere(inputs.name), err)
				status = 5
				return true // an error ends this input's run, as in jq
			}
			outputs++
			last = v
			var err error
			if s, isStr := v.(string); isStr && o.raw {
				w.WriteString(s)
			} else {
				err = jqEncode(ctx, w, v, o)
			}
			if !o.join {
				w.WriteByte('\n')
			}
			if err == nil {
				_, err = w.Write(nil) // the writer's sticky error
			}
			if err != nil {
				status = 5 // stopped with the exec, which reports why
				if ctx.Err() == nil {
					writeFailed(env, "jq", err)
					status = 2 // jq 1.7's status for a failed write
				}
				return false
			}
		}
	}
	switch {
	case o.null:
		run(nil)
	case o.slurp:
		var all any
		if o.rawIn {
			var b strings.Builder
			for _, f := range files {
				data, err := textReadAll(ctx, env, f)
				if err != nil {
					inputs.err = fmt.Errorf("%s: %s", f, textStrerror(err))
					break
				}
				b.Write(data)
			}
			all = b.String()
		} else {
			arr := []any{}
			for v, ok := inputs.Next(); ok; v, ok = inputs.Next() {
				if err := jqSlurpCheck(env, arr); err != nil {
					inputs.err = err
					break
				}
				arr = append(arr, v)
			}
			all = arr
		}
		if inputs.err == nil {
			run(all)
		}
	default:
		for v, ok := inputs.Next(); ok && ctx.Err() == nil; v, ok = inputs.Next() {
			if !run(v) {
				break
			}
		}
	}
	if inputs.err != nil {
		w.Flush()
		env.Errorf("jq", "error: %v", inputs.err)
		return 2
	}
	if status != 0 {
		return status
	}
	if o.exit {
		switch {
		case outputs == 0:
			return 4
		case last == nil || last == false:
			return 1
		}
	}
	return 0
}

func jqWhere(name string) string {
	if name == "-" || name == "" {
		return "<stdin>:0"
	}
	return name + ":0"
}

// jqEncode prints v to b as jq does: pretty with two spaces unless
// compact, keys sorted (gojq objects carry no order), containers deeper
// than jqPrintDepth stripped. It writes as it goes, so an output value is
// never held a second time as text, and stops early, returning why, when
// ctx ends or a write fails: a value of shared parts (def f: [., .]) may
// print for ever.
func jqEncode(ctx context.Context, b *bufio.Writer, v any, o jqOpts) error {
	indent := strings.Repeat(" ", o.indent)
	if o.tab {
		indent = "\t"
	}
	pretty := !o.compact && (o.indent > 0 || o.tab)
	var err error
	steps := 0
	// stopped looks every few thousand values; an empty write returns the
	// bufio.Writer's sticky error.
	stopped := func() bool {
		if steps++; steps%4096 == 0 && err == nil {
			if _, err = b.Write(nil); err == nil {
				err = ctx.Err()
			}
		}
		return err != nil
	}
	var enc func(v any, depth int)
	enc = func(v any, depth int) {
		nl := func(d int) {
			if pretty {
				b.WriteByte('\n')
				b.WriteString(strings.Repeat(indent, d))
			}
		}
		switch v.(type) {
		case []any, map[string]any:
			if depth > jqPrintDepth {
				b.WriteString(jqStripped)
				return
			}
		}
		switch v := v.(type) {
		case []any:
			if len(v) == 0 {
				b.WriteString("[]")
				return
			}
			b.WriteByte('[')
			for i, x := range v {
				if stopped() {
					return
				}
				if i > 0 {
					b.WriteByte(',')
				}
				nl(depth + 1)
				enc(x, depth+1)
			}
			nl(depth)
			b.WriteByte(']')
		case map[string]any:
			if len(v) == 0 {
				b.WriteString("{}")
				return
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if stopped() {
					return
				}
				if i > 0 {
					b.WriteByte(',')
				}
				nl(depth + 1)
				kb, _ := gojq.Marshal(k)
				b.Write(jqASCII(kb, o.ascii))
				b.WriteByte(':')
				if pretty {
					b.WriteByte(' ')
				}
				enc(v[k], depth+1)
			}
			nl(depth)
			b.WriteByte('}')
		case float64:
			b.WriteString(jqNumber(v))
		case *big.Int:
			f, _ := new(big.Float).SetInt(v).Float64()
			b.WriteString(jqNumber(f))
		default:
			s, _ := gojq.Marshal(v)
			b.Write(jqASCII(s, o.ascii))
		}
	}
	enc(v, 0)
	return err
}

// jqNumber prints a number as jq 1.6 does (its dtoa's shortest digits):
// exponential when the decimal point sits 4 or more places left of the
// digits or more than 15 places right of them, "-0" kept, infinities
// clamped and NaN as null.
func jqNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "null"
	case math.IsInf(f, 0):
		f = math.Copysign(math.MaxFloat64, f)
	}
	sign := ""
	if math.Signbit(f) {
		sign, f = "-", -f
	}
	if f == 0 {
		return sign + "0"
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	decpt, nd := e+1, len(digits)
	switch {
	case decpt <= -4 || decpt > nd+15:
		m := digits[:1]
		if nd > 1 {
			m += "." + digits[1:]
		}
		esign := "+"
		if e < 0 {
			esign, e = "-", -e
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, esign, e)
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= nd:
		return sign + digits + strings.Repeat("0", decpt-nd)
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}

// jqASCII escapes non-ASCII characters as \uXXXX for -a.
func jqASCII(s []byte, on bool) []byte {
	if !on {
		return s
	}
	var b strings.Builder
	for _, r := range string(s) {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return []byte(b.String())
}
