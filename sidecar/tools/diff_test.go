package tools

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aymanbagabas/go-udiff"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// TestSpanDiffApplies: the diff of a large edit, computed over the changed
// span only, is a unified diff that turns the old file into the new one,
// for random files and changes.
func TestSpanDiffApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"a", "b", "func x() {", "}", "", "\treturn 1", "é", "a b"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(20) > 0 {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	for i := range 3000 {
		before := text(rng.IntN(40))
		after := before
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(after) + 1)
			end := min(len(after), at+rng.IntN(12))
			after = after[:at] + text(rng.IntN(4)) + after[end:]
		}
		for kind, d := range map[string]string{"span": spanDiff("f", before, after), "whole": udiff.Unified("a/f", "b/f", before, after),
			"block": blockDiff("f", before, after, 0, len(before), len(after))} {
			if got, err := applyDiff(before, d); before != after && (err != nil || got != after) {
				t.Fatalf("case %d, %s: %q -> %q: the diff gives %q (%v):\n%s", i, kind, before, after, got, err, d)
			}
		}
		d := spanDiff("f", before, after)
		if before != after && d != udiff.Unified("a/f", "b/f", before, after) && !strings.HasPrefix(d, "--- a/f\n+++ b/f\n@@ ") {
			t.Fatalf("case %d: no header: %q", i, d)
		}
	}
}

// TestEditDiffBounded: an edit of a 9 MB file answers a bounded diff in
// bounded memory; diffing it whole took 3.2 s and 690 MB for 700,000
// changed lines (load 11).
func TestEditDiffBounded(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	var b strings.Builder
	for i := range 700_000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if _, err := s.Write(t.Context(), WriteInput{Path: "f", Content: b.String()}); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	began := time.Now()
	out, err := s.Edit(t.Context(), EditInput{Path: "f", Edits: []Replacement{{OldText: "e", NewText: "E", ReplaceAll: true}}})
	runtime.ReadMemStats(&m1)
	t.Logf("edit of 700,000 lines: %v, %d MB allocated", time.Since(began), (m1.TotalAlloc-m0.TotalAlloc)>>20)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 120<<20 {
		t.Errorf("the edit allocated %d MB", alloc>>20)
	}
	if len(out.Diff) > maxDiffBytes+200 || !strings.HasPrefix(out.Diff, "--- a/f\n+++ b/f\n@@ -1,") || !strings.Contains(out.Diff, "[diff cut at") {
		t.Errorf("diff of %d bytes: %.200q", len(out.Diff), out.Diff)
	}
}

// applyDiff applies unified diff d to text, checking each hunk's old side.
func applyDiff(text, d string) (string, error) {
	if d == "" {
		return text, nil
	}
	split := func(s string) []string {
		l := strings.SplitAfter(s, "\n")
		if l[len(l)-1] == "" {
			l = l[:len(l)-1]
		}
		return l
	}
	old, lines := split(text), split(d)[2:]
	var out []string
	at := 0
	for i := 0; i < len(lines); {
		var a, b int
		if n, _ := fmt.Sscanf(lines[i], "@@ -%d,%d +", &a, &b); n < 2 {
			if _, err := fmt.Sscanf(lines[i], "@@ -%d +", &a); err != nil {
				return "", fmt.Errorf("hunk header %q", lines[i])
			}
			b = 1
		}
		start := a - 1
		if b == 0 {
			start = a
		}
		if start < at || start > len(old) {
			return "", fmt.Errorf("hunk %q out of order", lines[i])
		}
		out, at = append(out, old[at:start]...), start
		var oldSide, newSide []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			trim := func(side []string) {
				side[len(side)-1] = strings.TrimSuffix(side[len(side)-1], "\n")
			}
			switch l[0] {
			case ' ':
				oldSide, newSide = append(oldSide, l[1:]), append(newSide, l[1:])
			case '-':
				oldSide = append(oldSide, l[1:])
			case '+':
				newSide = append(newSide, l[1:])
			case '\\':
				if p := lines[i-1][0]; p == ' ' || p == '-' {
					trim(oldSide)
				}
				if p := lines[i-1][0]; p == ' ' || p == '+' {
					trim(newSide)
				}
			default:
				return "", fmt.Errorf("line %q", l)
			}
		}
		for k, l := range oldSide {
			if at+k >= len(old) || old[at+k] != l {
				return "", fmt.Errorf("hunk at line %d: old side differs at %q", a, l)
			}
		}
		out, at = append(out, newSide...), at+len(oldSide)
	}
	return strings.Join(append(out, old[at:]...), ""), nil
}
