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

// jqGuardMultiply rewrites every multiplication in q, in place, into a call
// of jqMultiply with the same operands: gojq compiles both as a call of two
// arguments, so the order of evaluation does not change.
func jqGuardMultiply(q *gojq.Query) { jqRewriteMul(reflect.ValueOf(q)) }

var jqQueryType = reflect.TypeFor[*gojq.Query]()

func jqRewriteMul(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
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
