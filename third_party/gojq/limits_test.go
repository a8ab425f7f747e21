package gojq_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/itchyny/gojq"
)

var errTooBig = errors.New("too big")

// run runs query on input with a memory check refusing values over limit
// bytes, and returns its outputs and the largest size checked.
func run(t *testing.T, ctx context.Context, query string, input any, limit int64) ([]any, int64) {
	t.Helper()
	q, err := gojq.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	var largest int64
	code, err := gojq.Compile(q, gojq.WithMemoryCheck(func(n int64) error {
		if err := ctx.Err(); err != nil {
			return err // as the shell's check: the sizing walk stops with the query
		}
		largest = max(largest, n)
		if n > limit {
			return fmt.Errorf("%d bytes: %w", n, errTooBig)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	iter := code.RunWithContext(ctx, input)
	for v, ok := iter.Next(); ok; v, ok = iter.Next() {
		out = append(out, v)
		if _, isErr := v.(error); isErr {
			break
		}
	}
	return out, largest
}

func lastErr(out []any) error {
	if len(out) == 0 {
		return nil
	}
	err, _ := out[len(out)-1].(error)
	return err
}

func TestMemoryCheckRefusesLargeValues(t *testing.T) {
	const limit = 8 << 20
	tests := []struct {
		name, query string
		input       any
	}{
		{"repeat", `"x" * 1e9`, nil},
		{"repeat reversed", `1e9 * "abc"`, nil},
		{"update-multiply", `.x *= 1e9`, map[string]any{"x": "ab"}},
		{"doubling", `"x" | until(length > 1e12; . + .)`, nil},
		{"array add", `reduce range(40) as $i ([1]; . + .)`, nil},
		{"collect range", `[range(1e9)]`, nil},
		{"collect repeat", `[repeat(1)]`, nil},
		{"setpath", `setpath(["a", 1e9]; 1)`, nil},
		{"assign index", `.[1e9] = 1`, nil},
		{"modify index", `.[1e8] |= 1`, nil},
		{"fromstream", `fromstream([[1e8], 1], [[1e8]])`, nil},
		{"transpose", `[[range(1e4)], (range(1e4) | [])] | transpose`, nil},
		{"join", `[range(1e5) | "x" * 1000] | join(",")`, nil},
		{"tojson shared", `def f: [., .]; reduce range(40) as $i (0; f) | tojson`, nil},
		{"tostring shared", `def f: [., .]; reduce range(40) as $i (0; f) | tostring`, nil},
		{"format", `def f: [., .]; reduce range(40) as $i ("x"; f) | @html`, nil},
		{"interpolation", `def f: [., .]; reduce range(40) as $i (0; f) | "\(.)"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, largest := run(t, ctx, tt.query, tt.input, limit)
			if err := lastErr(out); !errors.Is(err, errTooBig) {
				t.Fatalf("%s: got %v (largest checked %d), want the check's error", tt.query, out, largest)
			}
		})
	}
}

func TestMemoryCheckAllowsOrdinaryValues(t *testing.T) {
	tests := []struct {
		query string
		want  any
	}{
		{`"ab" * 3`, "ababab"},
		{`[range(1000)] | length`, 1000},
		{`setpath(["a", 2]; 1)`, map[string]any{"a": []any{nil, nil, 1}}},
		{`[1] | .[3] = 2`, []any{1, nil, nil, 2}},
		{`{"x": "ab"} | .x *= 2`, map[string]any{"x": "abab"}},
		{`[[1, 2], [3]] | transpose`, []any{[]any{1, 3}, []any{2, nil}}},
		{`["a", 1, "b"] | join("-")`, "a-1-b"},
		{`[1, {"a": "b"}] | tojson`, `[1,{"a":"b"}]`},
		{`fromstream([[0], 1], [[0]])`, []any{1}},
	}
	for _, tt := range tests {
		out, largest := run(t, context.Background(), tt.query, nil, 1<<20)
		if len(out) != 1 || fmt.Sprint(out[0]) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.query, out, tt.want)
		}
		if largest > 1<<20 {
			t.Errorf("%s: checked %d bytes", tt.query, largest)
		}
	}
}

func TestDepthLimit(t *testing.T) {
	deep := `reduce range(%d) as $i (null; [.]) | `
	tests := []string{
		`tojson`, `tostring`, `. == .`, `[., .] | sort | length`, `contains(.)`,
		`flatten | length`, `[., .] | unique | length`, `[., 1] | delpaths([[1]]) | length`,
	}
	for _, q := range tests {
		for _, levels := range []int{gojq.MaxDepth / 2, 4 * gojq.MaxDepth} {
			out, _ := run(t, context.Background(), fmt.Sprintf(deep, levels)+q, nil, 1<<40)
			var depthErr *gojq.DepthError
			isDepthErr := errors.As(lastErr(out), &depthErr)
			if isDepthErr != (levels > gojq.MaxDepth) {
				t.Errorf("%q at %d levels: got %v", q, levels, out)
			}
		}
	}
	objects := fmt.Sprintf(`reduce range(%d) as $i ({}; {a: .}) | . * .`, 4*gojq.MaxDepth)
	longPath := fmt.Sprintf(`setpath([range(%d) | 0]; 1)`, 4*gojq.MaxDepth)
	for _, q := range []string{objects, longPath} {
		out, _ := run(t, context.Background(), q, nil, 1<<40)
		var depthErr *gojq.DepthError
		if !errors.As(lastErr(out), &depthErr) {
			t.Errorf("%q: got %v, want a depth error", q[:30], out)
		}
	}
}

// The encoder refuses a deep value handed in from outside too.
func TestDepthLimitOfInput(t *testing.T) {
	var v any = 0
	for range 2 * gojq.MaxDepth {
		v = []any{v}
	}
	out, _ := run(t, context.Background(), `tojson`, v, 1<<40)
	var depthErr *gojq.DepthError
	if !errors.As(lastErr(out), &depthErr) {
		t.Fatalf("got %v, want a depth error", out)
	}
}

func TestCancelStopsCollecting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	out, _ := run(t, ctx, `[range(1e9)] | length`, nil, 1<<40)
	if err := lastErr(out); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", out)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("stopped %v after cancellation", d-50*time.Millisecond)
	}
}

// BenchmarkMemoryCheck runs a typical filter (collect, add, tostring,
// join) without and with the memory check, to show what the check costs.
func BenchmarkMemoryCheck(b *testing.B) {
	input := make([]any, 10000)
	for i := range input {
		input[i] = map[string]any{"n": fmt.Sprint("item", i), "v": i}
	}
	q, err := gojq.Parse(`[.[] | select(.v % 2 == 0) | .n + "-" + (.v | tostring)] | join(",") | length`)
	if err != nil {
		b.Fatal(err)
	}
	for _, checked := range []bool{false, true} {
		var opts []gojq.CompilerOption
		if checked {
			opts = append(opts, gojq.WithMemoryCheck(func(int64) error { return nil }))
		}
		code, err := gojq.Compile(q, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("checked=%v", checked), func(b *testing.B) {
			for b.Loop() {
				iter := code.Run(input)
				if v, _ := iter.Next(); v == nil {
					b.Fatal("no output")
				}
			}
		})
	}
}

// A sort or an encoding of millions of values, seconds in one call, stops
// with its context.
func TestCancelStopsSort(t *testing.T) {
	input := make([]any, 3_000_000)
	for i := range input {
		input[i] = (i * 7919) % len(input)
	}
	for _, filter := range []string{`sort | length`, `sort_by(-.) | length`, `group_by(. % 1000) | length`, `unique | length`, `unique_by(-.) | length`,
		`[., ., .] | tojson | length`, `[., ., .] | tostring | length`, `[., ., .] | "\(.)" | length`} {
		t.Run(filter, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			out, _ := run(t, ctx, filter, input, 1<<40)
			if err := lastErr(out); !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", out)
			}
			if d := time.Since(start) - 100*time.Millisecond; d > loaded(stopSlack) {
				t.Fatalf("stopped %v after cancellation (bound %v)", d, loaded(stopSlack))
			}
		})
	}
}

func TestSortsStillSort(t *testing.T) {
	input := []any{3, 1, 2, 1}
	for filter, want := range map[string]string{
		`sort`:             "[1 1 2 3]",
		`sort_by(-.)`:      "[3 2 1 1]",
		`group_by(. % 2)`:  "[[2] [3 1 1]]",
		`unique`:           "[1 2 3]",
		`unique_by(. % 2)`: "[2 3]",
		`map([.]) | sort`:  "[[1] [1] [2] [3]]",
	} {
		out, _ := run(t, context.Background(), filter, input, 1<<40)
		if len(out) != 1 || fmt.Sprint(out[0]) != want {
			t.Errorf("%s: got %v, want %s", filter, out, want)
		}
	}
}
