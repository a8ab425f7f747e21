package tools

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// TestEditDiffApplies: the diff of an edit, computed over the changed span
// only, is a unified diff that turns the old file into the new one, for
// random files and changes.
func TestEditDiffApplies(t *testing.T) {
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
		d := editDiff("f", before, after)
		if got, err := applyDiff(before, d); err != nil || got != after {
			t.Fatalf("case %d: %q -> %q: the diff gives %q (%v):\n%s", i, before, after, got, err, d)
		}
		if before != after && !strings.HasPrefix(d, "--- a/f\n+++ b/f\n@@ ") {
			t.Fatalf("case %d: no header: %q", i, d)
		}
		if (d == "") != (before == after) {
			t.Fatalf("case %d: %q -> %q: diff %q", i, before, after, d)
		}
	}
}

// TestEditDiffBounded: an edit of a 9 MB file answers in bounded memory:
// the diff of the changed lines when they are few, wherever they are, and
// one line naming them when they span more than maxDiffSpan. Diffing the
// whole file took 3.2 s and 690 MB for 700,000 changed lines (load 11).
func TestEditDiffBounded(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	var b strings.Builder
	for i := range 700_000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	for _, tc := range []struct {
		name string
		edit Replacement
		want string // the whole diff, or its start
	}{
		{"every line", Replacement{OldText: "e", NewText: "E", ReplaceAll: true},
			"[no diff: the change spans lines 1-700000 of the old file and 1-700000 of the new one, 8288890 and 8288890 bytes, over the 1048576-byte bound on a diffed change; read the file to see it]\n"},
		{"one line", Replacement{OldText: "line 350000\n", NewText: "line 350000 changed\n"},
			"--- a/f\n+++ b/f\n@@ -349998,7 +349998,7 @@\n line 349997\n line 349998\n line 349999\n-line 350000\n+line 350000 changed\n line 350001\n"},
		{"a line dropped", Replacement{OldText: "line 699999\n", NewText: ""},
			"--- a/f\n+++ b/f\n@@ -699997,4 +699997,3 @@\n line 699996\n line 699997\n line 699998\n-line 699999\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Write(t.Context(), WriteInput{Path: "f", Content: b.String()}); err != nil {
				t.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			began := time.Now()
			out, err := s.Edit(t.Context(), EditInput{Path: "f", Edits: []Replacement{tc.edit}})
			runtime.ReadMemStats(&m1)
			t.Logf("edit of 700,000 lines: %v, %d MB allocated", time.Since(began), (m1.TotalAlloc-m0.TotalAlloc)>>20)
			if err != nil {
				t.Fatal(err)
			}
			// 31 MB: the file read, edited and written; a diff taking
			// the whole old file's lines took 87 MB more.
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 64<<20 {
				t.Errorf("the edit allocated %d MB", alloc>>20)
			}
			if !strings.HasPrefix(out.Diff, tc.want) || len(out.Diff) > len(tc.want)+100 {
				t.Errorf("diff %.300q, want %q", out.Diff, tc.want)
			}
		})
	}
}

// TestEditDiffCut: a diff past maxDiffBytes is cut at a line and says so.
func TestEditDiffCut(t *testing.T) {
	var b strings.Builder
	for i := range 40_000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	before := b.String()
	after := strings.ReplaceAll(before, "line", "LINE")
	d := editDiff("f", before, after)
	if len(d) > maxDiffBytes+100 || !strings.HasPrefix(d, "--- a/f\n+++ b/f\n@@ -1,40000 +1,40000 @@\n-line 0\n") ||
		!strings.Contains(d, "\n[diff cut at ") || !strings.HasSuffix(d, " bytes]\n") {
		t.Errorf("diff of %d bytes: %.100q … %q", len(d), d, d[max(0, len(d)-100):])
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
