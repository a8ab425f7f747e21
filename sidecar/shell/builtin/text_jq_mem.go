package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
)

// jq's values are bounded by the exec's budget where they are built: the
// patched gojq (third_party/gojq, PATCHES.md) asks before it builds a large
// value, and the inputs are read a value or a line at a time with what is
// pending checked. A check is not a charge: gojq's values become garbage
// with no hook telling when, so holding them would exhaust the budget of a
// long stream of small inputs; the heap watchdog bounds what checks miss.

// jqCheck fails when n more bytes would put the exec past its budget.
func jqCheck(env *Env, n int64) error {
	if err := env.grow(n); err != nil {
		return err
	}
	env.shrink(n)
	return nil
}

// jqMemoryOption has gojq check its large values against env's budget,
// and stop with ctx: the walk that sizes a value for tojson checks every
// MiB of it.
func jqMemoryOption(ctx context.Context, env *Env) gojq.CompilerOption {
	return gojq.WithMemoryCheck(func(n int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return jqCheck(env, n)
	})
}

// jqCheckStep is how much of one input may be read between checks.
const jqCheckStep = 1 << 20

// jqValueReader feeds a json.Decoder, checking what the decoder buffers
// for the value it is decoding (one endless value, `yes '[' | jq .`,
// would otherwise be read whole).
type jqValueReader struct {
	env     *Env
	r       io.Reader
	dec     *json.Decoder
	read    int64
	checked int64
}

func (v *jqValueReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.read += int64(n)
	if pending := v.read - v.dec.InputOffset(); pending >= v.checked+jqCheckStep {
		v.checked = pending
		// The decoder's buffer doubles as it fills: twice the text at most.
		if cerr := jqCheck(v.env, 2*pending); cerr != nil {
			return n, cerr
		}
	} else if pending < v.checked {
		v.checked = 0
	}
	return n, err
}

func newJqDecoder(env *Env, r io.Reader) *json.Decoder {
	vr := &jqValueReader{env: env, r: r}
	vr.dec = json.NewDecoder(vr)
	return vr.dec
}

// jqPrintDepth is how deep jq prints: a container nested deeper is printed
// as jqStripped (jq's MAX_PRINT_DEPTH).
const (
	jqPrintDepth = 256
	jqStripped   = "<stripped: exceeds max depth>"
)

// jqSlurpCheck checks the array -s collects before it grows: the new and
// the old array and the values, as gojq's [f] is checked.
func jqSlurpCheck(env *Env, arr []any) error {
	if len(arr) < cap(arr) {
		return nil
	}
	if err := jqCheck(env, gojq.CollectSize(len(arr))); err != nil {
		return fmt.Errorf("--slurp: %w", err)
	}
	return nil
}
