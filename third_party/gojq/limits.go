package gojq

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file is sqlfs's patch to gojq (see PATCHES.md): a memory check the
// embedding program supplies, and a bound on how deep the recursive walks
// of values go.

// WithMemoryCheck is a compiler option (sqlfs patch 1): check is called
// with the size in bytes of a value the query is about to build, before it
// is allocated: the array [f] collects, each time it grows, and the result
// of string repetition and concatenation, array concatenation, setpath at
// a far index, transpose, join, tojson and tostring and the @formats. A
// non-nil error from check ends the query with that error.
func WithMemoryCheck(check func(bytes int64) error) CompilerOption {
	return func(c *compiler) {
		c.memCheck = check
	}
}

// MaxDepth is how deep the Go-recursive walks of a value (comparison,
// encoding, contains, flatten, object merge, path updates) go (sqlfs patch
// 2). A value nested deeper is cheap to build with [.] in a loop, and
// walking it would overflow the goroutine stack, which the Go runtime does
// not recover from. It matches encoding/json's nesting limit.
const MaxDepth = 10000

// DepthError is the error of a walk deeper than MaxDepth.
type DepthError struct{}

func (*DepthError) Error() string {
	return "value nested deeper than " + strconv.Itoa(MaxDepth) + " levels"
}

// checkDepth panics with a *DepthError past MaxDepth: the walks that call
// it return no error, and the query's iterator recovers the panic.
func checkDepth(depth int) {
	if depth > MaxDepth {
		panic(&DepthError{})
	}
}

// sliceSlotBytes is what one element of a []any takes (an interface).
const sliceSlotBytes = 16

// CollectSize is what an array of n values collected one by one takes
// once it grows: the new array (a quarter larger, as append grows a large
// slice), its slots' values (a boxed number or string header, typically
// as large as the slot) and the old array, copied from.
func CollectSize(n int) int64 {
	grown := int64(n) + int64(n)/4 + 1
	return grown*2*sliceSlotBytes + int64(n)*sliceSlotBytes
}

// callSize is how many bytes the internal function name, applied to x and
// args, allocates at once, when that can be much more than its operands
// hold; 0 for the rest.
func callSize(name string, x any, args []any) int64 {
	switch name {
	case "_multiply":
		return repeatSize(args[0], args[1])
	case "_add":
		switch l := args[0].(type) {
		case string:
			if r, ok := args[1].(string); ok {
				return int64(len(l) + len(r))
			}
		case []any:
			if r, ok := args[1].([]any); ok {
				return int64(len(l)+len(r)) * sliceSlotBytes
			}
		}
	case "setpath", "_setpath":
		return farIndexSize(args[0])
	case "transpose":
		if rows, ok := x.([]any); ok {
			width := 0
			for _, row := range rows {
				if row, ok := row.([]any); ok {
					width = max(width, len(row))
				}
			}
			return int64(width) * int64(len(rows)) * sliceSlotBytes
		}
	case "join":
		if xs, ok := x.([]any); ok {
			sep, _ := args[0].(string)
			n := int64(len(sep)) * int64(len(xs))
			for _, x := range xs {
				n += textSize(x)
			}
			return n
		}
	}
	return 0
}

// repeatSize is the length of a string repeated by a number (either way
// round, as in `*`), else 0.
func repeatSize(l, r any) int64 {
	s, ok := l.(string)
	n := r
	if !ok {
		s, ok = r.(string)
		n = l
	}
	if !ok {
		return 0
	}
	times, ok := ToFloat64(n)
	if !ok || !(times > 0) {
		return 0
	}
	return int64(len(s)) * int64(min(times, math.MaxInt32))
}

// farIndexSize is what an array grows to for the largest index in path.
func farIndexSize(path any) int64 {
	p, ok := path.([]any)
	if !ok {
		return 0
	}
	var far float64
	for _, k := range p {
		if i, ok := ToFloat64(k); ok && i > far {
			far = i
		}
	}
	return int64(min(far+1, 1<<40)) * sliceSlotBytes
}

// textSize is the length a scalar has in a joined string.
func textSize(v any) int64 {
	if s, ok := v.(string); ok {
		return int64(len(s))
	}
	return 24 // a number's digits
}

// encodedSize walks v as the encoder would, adding up its encoded length,
// and calls check every time the total passes another step, so that a
// value built of shared parts (def f: [., .]; 0 | f | f | …), small in
// memory but huge encoded, is refused within the time the check allows.
type encodedSize struct {
	check func(int64) error
	n     int64
	next  int64
	err   error
}

const encodedSizeStep = 1 << 20

func (s *encodedSize) walk(v any, depth int) {
	checkDepth(depth)
	if s.err != nil {
		return
	}
	switch v := v.(type) {
	case string:
		s.n += int64(len(v)) + 2
	case []any:
		s.n += 2 + int64(len(v))
		for _, x := range v {
			s.walk(x, depth+1)
		}
	case map[string]any:
		s.n += 2 + int64(len(v))
		for k, x := range v {
			s.n += int64(len(k)) + 3
			s.walk(x, depth+1)
		}
	default:
		s.n += 24
	}
	if s.n >= s.next {
		s.next = s.n + encodedSizeStep
		s.err = s.check(s.n)
	}
}

// encodingFactor is how many times longer than its JSON text the encoding
// functions make a value, at most, for those that encode it.
var encodingFactor = map[string]int64{
	"tojson": 1, "tostring": 1, "_tobase64": 2, "_tohtml": 6, "_touri": 3,
	"_tocsv": 2, "_totsv": 2, "_tosh": 4,
}

// checkCall checks what the internal function name would allocate against
// env's memory check.
func (env *env) checkCall(name string, x any, args []any) error {
	if factor, ok := encodingFactor[name]; ok {
		if _, isStr := x.(string); !isStr || factor > 1 {
			s := encodedSize{check: func(n int64) error { return env.memCheck(factor * n) }}
			s.walk(x, 0)
			if s.err != nil {
				return s.err
			}
			return env.memCheck(factor * s.n)
		}
		return nil
	}
	if n := callSize(name, x, args); n > 0 {
		return env.memCheck(n)
	}
	return nil
}

// callWithContext calls the internal function name, handing ctx to those
// that can run for seconds in one call (sqlfs patch 3): the sorts and the
// encoding of tojson and tostring (so also @json, @text, interpolation).
func callWithContext(ctx context.Context, name string, fn func(any, []any) any, x any, args []any) any {
	switch name {
	case "sort":
		return sortBy(ctx, "sort", x, x)
	case "_sort_by":
		return sortBy(ctx, "sort_by", x, args[0])
	case "_group_by":
		return groupBy(ctx, x, args[0])
	case "unique":
		return uniqueBy(ctx, "unique", x, x)
	case "tojson":
		return encodeCancellable(ctx, x)
	case "tostring":
		if _, ok := x.(string); !ok {
			return encodeCancellable(ctx, x)
		}
	case "_unique_by":
		return uniqueBy(ctx, "unique_by", x, args[0])
	}
	return fn(x, args)
}

// errStopped unwinds a sort or an encoding whose context ended.
var errStopped = errors.New("stopped")

// encodeCancellable is tojson's encoding of v, stopped with ctx.
func encodeCancellable(ctx context.Context, v any) (s any) {
	defer func() {
		if r := recover(); r != nil {
			if r != errStopped {
				panic(r)
			}
			s = ctx.Err()
		}
	}()
	var sb strings.Builder
	(&encoder{w: &sb, ctx: ctx}).encode(v)
	return sb.String()
}

// checkStop panics with errStopped, every 4096 values, once the encoder's
// context has ended.
func (e *encoder) checkStop() {
	if e.ctx == nil {
		return
	}
	if e.steps++; e.steps%4096 == 0 && e.ctx.Err() != nil {
		panic(errStopped)
	}
}

// sortCancellable sorts items stably by key, looking at ctx every 1024
// comparisons; the standard library's sort can only be left by a panic.
func sortCancellable(ctx context.Context, items []*sortItem) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errStopped {
				panic(r)
			}
			err = ctx.Err()
		}
	}()
	n := 0
	slices.SortStableFunc(items, func(x, y *sortItem) int {
		if n++; n%1024 == 0 && ctx.Err() != nil {
			panic(errStopped)
		}
		return Compare(x.key, y.key)
	})
	return nil
}
