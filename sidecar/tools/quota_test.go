package tools

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// TestWriteOverQuotaKeepsFile: a write or edit refused by the quota leaves
// the file it would have replaced as it was (it used to be emptied: the
// file was truncated before the new content hit the quota), one that
// fits exactly is written, and the workspace never holds more than the
// quota. Random sizes of files, contents and edits around the bound.
func TestWriteOverQuotaKeepsFile(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			quota := int64(1000 + rng.IntN(200_000))
			core := newCore(t, sfs.Options{Policy: sfs.Policy{QuotaBytes: quota}})
			s := NewForCore(core, nil, Options{})
			ctx := t.Context()
			want := map[string]string{}
			used := func() int64 {
				var n int64
				for _, c := range want {
					n += int64(len(c))
				}
				return n
			}
			for step := range 60 {
				name := fmt.Sprintf("d/f%d.txt", rng.IntN(4))
				old, exists := want[name]
				room := quota - used() + int64(len(old))
				size := int(room) + rng.IntN(21) - 10 // around what fits
				if rng.IntN(3) == 0 {
					size = rng.IntN(int(quota))
				}
				size = max(size, 1)
				content := strings.Repeat(string(rune('a'+step%26)), size)
				var err error
				if exists && rng.IntN(2) == 0 && len(old) > 0 {
					// Grow (or shrink) by replacing all of one letter.
					letter := old[:1]
					_, err = s.Edit(ctx, EditInput{Path: name, Edits: []Replacement{{OldText: old, NewText: content + letter}}})
					content += letter
				} else {
					_, err = s.Write(ctx, WriteInput{Path: name, Content: content})
				}
				fits := int64(len(content)) <= room
				switch {
				case fits && err != nil:
					t.Fatalf("step %d: %s of %d bytes with room for %d: %v", step, name, len(content), room, err)
				case !fits && code(err) != CodeNoSpace:
					t.Fatalf("step %d: %s of %d bytes with room for %d: %v, want no_space", step, name, len(content), room, err)
				case fits:
					want[name] = content
				}
				for p, c := range want {
					got, err := core.ReadFile(p)
					if err != nil || string(got) != c {
						t.Fatalf("step %d (%s of %d bytes, %v): %s holds %d bytes (%v), want %d", step, name, len(content), err, p, len(got), err, len(c))
					}
				}
				if _, err := core.Stat(name); !exists && !fits && err == nil {
					t.Fatalf("step %d: a refused write left %s", step, name)
				}
				if u := core.Usage().Bytes; u > quota {
					t.Fatalf("step %d: usage %d over the quota %d", step, u, quota)
				}
			}
		})
	}
}

// TestEditTooLargeAllocatesNothing: an edit whose result is over the
// write limit is refused from the counts, before the result is built: a
// 1 KiB replace_all over a file of 10,000 matches asked for 10 MB (a
// 1 MiB new_text, 10 GB), all allocated before the size was checked. A
// file over the limit is refused before it is read.
func TestEditTooLargeAllocatesNothing(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{MaxWriteBytes: 1 << 20})
	ctx := t.Context()
	if _, err := s.Write(ctx, WriteInput{Path: "a", Content: strings.Repeat("a", 10_000)}); err != nil {
		t.Fatal(err)
	}
	if err := core.WriteFile("/big", []byte(strings.Repeat("b\n", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	newText := strings.Repeat("x", 10_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := s.Edit(ctx, EditInput{Path: "a", Edits: []Replacement{{OldText: "a", NewText: newText, ReplaceAll: true}}})
	_, err2 := s.Edit(ctx, EditInput{Path: "big", Edits: []Replacement{{OldText: "b\nb\n", NewText: "", ReplaceAll: true}}})
	runtime.ReadMemStats(&after)
	if code(err) != CodeTooLarge || code(err2) != CodeTooLarge {
		t.Fatalf("edits over the limit: %v, %v; want too_large", err, err2)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("refused edits allocated %d MB", n>>20)
	}
	if got, _ := core.ReadFile("/a"); len(got) != 10_000 {
		t.Errorf("a is %d bytes", len(got))
	}
}

// TestPagingOffsetsNearMaxInt: offsets up to math.MaxInt page every tool
// without a panic (diff_checkpoint sliced past the end when offset+limit
// overflowed: a 500 and a Go panic in the log) or a negative next_offset
// (ls answered -9223372036854775609); a page past the end is empty.
func TestPagingOffsetsNearMaxInt(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	ctx := t.Context()
	for i := range 5 {
		if _, err := s.Write(ctx, WriteInput{Path: fmt.Sprintf("f%d", i), Content: "hit\n"}); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := s.CheckpointTool(ctx, CheckpointInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, WriteInput{Path: "g", Content: "hit\n"}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	offsets := []int{math.MaxInt, math.MaxInt - 1, math.MaxInt - 999, math.MaxInt - 1000, 6, 7}
	for range 20 {
		offsets = append(offsets, math.MaxInt-rng.IntN(5000), rng.IntN(10))
	}
	for _, off := range offsets {
		for _, limit := range []int{0, 1, 1000} {
			check := func(tool string, n, next int, err error) {
				t.Helper()
				if err != nil || next < 0 || next > 0 && next <= off {
					t.Errorf("%s offset %d limit %d: %d entries, next %d, %v", tool, off, limit, n, next, err)
				}
			}
			ls, err := s.Ls(ctx, LsInput{Offset: off, Limit: limit})
			check("ls", len(ls.Entries), ls.NextOffset, err)
			fd, err := s.Find(ctx, FindInput{Offset: off, Limit: limit})
			check("find", len(fd.Paths), fd.NextOffset, err)
			gr, err := s.Grep(ctx, GrepInput{Pattern: "hit", Offset: off, Limit: limit})
			check("grep", len(gr.Matches), gr.NextOffset, err)
			df, err := func() (out DiffOutput, err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return s.DiffTool(ctx, DiffInput{From: cp.ID, Offset: off, Limit: limit})
			}()
			check("diff_checkpoint", len(df.Changes), df.NextOffset, err)
		}
	}
}

// TestWriteAuditsWhatChanged: the write tool's audit trail (and so the
// change events agents watch) names what a write did, no more: a new file
// is a create and a write; an overwrite, larger (the quota's reservation)
// or smaller (the cut), one truncate beside them (an open that may create
// is a create in the trail, as before). The reservation once put a
// truncate into every new file's trail.
func TestWriteAuditsWhatChanged(t *testing.T) {
	core := newCore(t, sfs.Options{Policy: sfs.Policy{QuotaBytes: 1 << 20}})
	s := NewForCore(core, nil, Options{})
	ctx := t.Context()
	cases := []struct {
		content string
		want    []string
	}{
		{"hello", []string{"create", "write"}},
		{"hello, world", []string{"create", "truncate", "write"}},
		{"hi", []string{"create", "truncate", "write"}},
	}
	var seen int
	for _, c := range cases {
		if _, err := s.Write(ctx, WriteInput{Path: "f.txt", Content: c.content}); err != nil {
			t.Fatal(err)
		}
		ev, err := s.Audit(ctx, sqlstore.AuditFilter{PathPrefix: "/f.txt"})
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, e := range ev[seen:] {
			ops = append(ops, e.Op)
		}
		seen = len(ev)
		if !slices.Equal(ops, c.want) {
			t.Errorf("write of %q: audit %v, want %v", c.content, ops, c.want)
		}
	}
}

// TestWaitAfterThePresent: an after past the last change is refused; it
// used to be taken, and every change up to it went unseen.
func TestWaitAfterThePresent(t *testing.T) {
	core := newCore(t, sfs.Options{})
	s := NewForCore(core, nil, Options{})
	ctx := t.Context()
	now, err := s.WaitForChange(ctx, WaitInput{TimeoutMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{now.Next + 1, math.MaxInt64} {
		if _, err := s.WaitForChange(ctx, WaitInput{After: &after, TimeoutMs: 1}); code(err) != CodeInvalid {
			t.Errorf("after %d (last %d): %v, want invalid_argument", after, now.Next, err)
		}
	}
	if _, err := s.Write(ctx, WriteInput{Path: "a", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.WaitForChange(ctx, WaitInput{After: &now.Next, TimeoutMs: 1000})
	if err != nil || len(got.Changes) == 0 {
		t.Errorf("after %d: %+v %v, want the write", now.Next, got, err)
	}
}
