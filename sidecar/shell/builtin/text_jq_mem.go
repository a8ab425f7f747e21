package builtin

import (
	"math/big"
	"reflect"

	"github.com/itchyny/gojq"
)

// jqMultiply is the function every `l * r` of a jq filter is rewritten to
// call: gojq builds "s" * n (up to 2 GiB) in one allocation, there before
// the heap watchdog can see it, so a repetition over the exec's budget is
// refused first. Everything else is gojq's own `*`.
const jqMultiply = "_sqlfs_multiply"

// jqIndex is what every array index .[i] of a filter is passed through:
// gojq assigns to .[i] past an array's end by allocating i slots at once
// (i below 2^29, 8 GiB), so an index whose array could not be held within
// the exec's budget is refused. Reading one could only give null.
const jqIndex = "_sqlfs_index"

// jqGuard rewrites every multiplication in q, in place, into a call
// of jqMultiply with the same operands: gojq compiles both as a call of two
// arguments, so the order of evaluation does not change. Index expressions
// are wrapped in jqIndex.
func jqGuard(q *gojq.Query) { jqRewriteMul(reflect.ValueOf(q)) }

var (
	jqQueryType = reflect.TypeFor[*gojq.Query]()
	jqIndexType = reflect.TypeFor[*gojq.Index]()
)

func jqRewriteMul(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Type() == jqIndexType {
			if idx := v.Interface().(*gojq.Index); idx.Start != nil && !idx.IsSlice {
				idx.Start = &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: jqIndex, Args: []*gojq.Query{idx.Start}}}}
			}
		}
		if v.Type() == jqQueryType {
			if q := v.Interface().(*gojq.Query); q.Op == gojq.OpMul {
				q.Term = &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: jqMultiply, Args: []*gojq.Query{q.Left, q.Right}}}
				q.Left, q.Op, q.Right = nil, 0, nil
			}
		}
		jqRewriteMul(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				jqRewriteMul(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			jqRewriteMul(v.Index(i))
		}
	}
}

// jqMultiplyOption defines jqMultiply: a string repeated past env's budget
// fails as any value over it does; the rest goes to gojq's `*`.
func jqMultiplyOption(env *Env) gojq.CompilerOption {
	mul, err := gojq.Parse(".[0] * .[1]")
	if err != nil {
		panic(err)
	}
	code, err := gojq.Compile(mul)
	if err != nil {
		panic(err)
	}
	return gojq.WithFunction(jqMultiply, 2, 2, func(_ any, args []any) any {
		if size := jqRepeatSize(args[0], args[1]); size > 0 {
			// Checked, not held: the string is garbage once dropped.
			if err := env.grow(size); err != nil {
				return err
			}
			env.shrink(size)
		}
		v, _ := code.Run(args).Next()
		return v
	})
}

// jqIndexOption defines jqIndex: an index i costs the i slots of 16 bytes
// an assignment to it may allocate.
func jqIndexOption(env *Env) gojq.CompilerOption {
	return gojq.WithFunction(jqIndex, 1, 1, func(_ any, args []any) any {
		var slots int64
		switch i := args[0].(type) {
		case int:
			slots = int64(min(max(i, 0), 1<<31))
		case float64:
			slots = int64(min(max(i, 0), 1<<31))
		}
		if err := env.grow(16 * slots); err != nil {
			return err
		}
		env.shrink(16 * slots)
		return args[0]
	})
}

// jqRepeatSize is the length of a string repeated by a number, else 0.
func jqRepeatSize(l, r any) int64 {
	s, ok := l.(string)
	n := r
	if !ok {
		s, ok = r.(string)
		n = l
	}
	if !ok {
		return 0
	}
	// gojq repeats at most 2^31 times.
	times := int64(0)
	switch n := n.(type) {
	case int:
		times = int64(min(max(n, 0), 1<<31))
	case float64:
		times = int64(min(max(n, 0), 1<<31))
	case *big.Int:
		if n.Sign() > 0 {
			times = 1 << 31
		}
	}
	return int64(len(s)) * times
}
