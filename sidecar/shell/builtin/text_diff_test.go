package builtin

import "testing"

// Expectations were produced by running the same commands with GNU tools.
func TestTextDiff(t *testing.T) {
	tree := map[string]string{
		"a.txt":        "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\nline 18\nline 19\nline 20\n",
		"b.txt":        "line 1\nline 2\nline three\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 16\nline 17\nline 18\nline 19\nline 20\nline 21\n",
		"bin1":         "a\x00b",
		"bin2":         "a\x00c",
		"c.txt":        "x\ny\n",
		"d.txt":        "x\ny",
		"d1/diff.txt":  "one\ntwo\n",
		"d1/only1.txt": "1\n",
		"d1/same.txt":  "same\n",
		"d1/sub/s.txt": "s\n",
		"d2/diff.txt":  "one\n2\n",
		"d2/only2.txt": "2\n",
		"d2/same.txt":  "same\n",
		"d2/sub/s.txt": "S\n",
		"e.txt":        "",
		"f.txt":        "X\ny\n",
		"g.txt":        "x\n  y\n",
	}
	runTextCases(t, []textCase{
		{name: "same", args: []string{"diff", "a.txt", "a.txt"}, files: tree},
		{name: "normal", args: []string{"diff", "a.txt", "b.txt"}, files: tree, want: "3c3\n< line 3\n---\n> line three\n15d14\n< line 15\n20a20\n> line 21\n", status: 1},
		{name: "unified", args: []string{"diff", "-u", "--label", "A", "--label", "B", "a.txt", "b.txt"}, files: tree, want: "--- A\n+++ B\n@@ -1,6 +1,6 @@\n line 1\n line 2\n-line 3\n+line three\n line 4\n line 5\n line 6\n@@ -12,9 +12,9 @@\n line 12\n line 13\n line 14\n-line 15\n line 16\n line 17\n line 18\n line 19\n line 20\n+line 21\n", status: 1},
		{name: "U1", args: []string{"diff", "-U1", "--label", "A", "--label", "B", "a.txt", "b.txt"}, files: tree, want: "--- A\n+++ B\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n@@ -14,3 +14,2 @@\n line 14\n-line 15\n line 16\n@@ -20 +19,2 @@\n line 20\n+line 21\n", status: 1},
		{name: "U0", args: []string{"diff", "-U", "0", "--label", "A", "--label", "B", "a.txt", "b.txt"}, files: tree, want: "--- A\n+++ B\n@@ -3 +3 @@\n-line 3\n+line three\n@@ -15 +14,0 @@\n-line 15\n@@ -20,0 +20 @@\n+line 21\n", status: 1},
		{name: "brief", args: []string{"diff", "-q", "a.txt", "b.txt"}, files: tree, want: "Files a.txt and b.txt differ\n", status: 1},
		{name: "noeol normal", args: []string{"diff", "c.txt", "d.txt"}, files: tree, want: "2c2\n< y\n---\n> y\n\\ No newline at end of file\n", status: 1},
		{name: "noeol unified", args: []string{"diff", "-u", "--label", "A", "--label", "B", "c.txt", "d.txt"}, files: tree, want: "--- A\n+++ B\n@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n", status: 1},
		{name: "empty vs", args: []string{"diff", "e.txt", "c.txt"}, files: tree, want: "0a1,2\n> x\n> y\n", status: 1},
		{name: "empty unified", args: []string{"diff", "-u", "--label", "A", "--label", "B", "e.txt", "c.txt"}, files: tree, want: "--- A\n+++ B\n@@ -0,0 +1,2 @@\n+x\n+y\n", status: 1},
		{name: "to empty unified", args: []string{"diff", "-u", "--label", "A", "--label", "B", "c.txt", "e.txt"}, files: tree, want: "--- A\n+++ B\n@@ -1,2 +0,0 @@\n-x\n-y\n", status: 1},
		{name: "icase", args: []string{"diff", "-i", "c.txt", "f.txt"}, files: tree},
		{name: "ignore space", args: []string{"diff", "-w", "c.txt", "g.txt"}, files: tree},
		{name: "space", args: []string{"diff", "c.txt", "g.txt"}, files: tree, want: "2c2\n< y\n---\n>   y\n", status: 1},
		{name: "dirs", args: []string{"diff", "d1", "d2"}, files: tree, want: "diff d1/diff.txt d2/diff.txt\n2c2\n< two\n---\n> 2\nOnly in d1: only1.txt\nOnly in d2: only2.txt\nCommon subdirectories: d1/sub and d2/sub\n", status: 1},
		{name: "dirs r", args: []string{"diff", "-r", "d1", "d2"}, files: tree, want: "diff -r d1/diff.txt d2/diff.txt\n2c2\n< two\n---\n> 2\nOnly in d1: only1.txt\nOnly in d2: only2.txt\ndiff -r d1/sub/s.txt d2/sub/s.txt\n1c1\n< s\n---\n> S\n", status: 1},
		{name: "dirs ru", args: []string{"diff", "-ru", "--label", "A", "--label", "B", "d1", "d2"}, files: tree, want: "diff -ru --label A --label B A B\n--- A\n+++ B\n@@ -1,2 +1,2 @@\n one\n-two\n+2\nOnly in d1: only1.txt\nOnly in d2: only2.txt\ndiff -ru --label A --label B A B\n--- A\n+++ B\n@@ -1 +1 @@\n-s\n+S\n", status: 1},
		{name: "dirs q", args: []string{"diff", "-rq", "d1", "d2"}, files: tree, want: "Files d1/diff.txt and d2/diff.txt differ\nOnly in d1: only1.txt\nOnly in d2: only2.txt\nFiles d1/sub/s.txt and d2/sub/s.txt differ\n", status: 1},
		{name: "dirs N", args: []string{"diff", "-rN", "d1", "d2"}, files: tree, want: "diff -rN d1/diff.txt d2/diff.txt\n2c2\n< two\n---\n> 2\ndiff -rN d1/only1.txt d2/only1.txt\n1d0\n< 1\ndiff -rN d1/only2.txt d2/only2.txt\n0a1\n> 2\ndiff -rN d1/sub/s.txt d2/sub/s.txt\n1c1\n< s\n---\n> S\n", status: 1},
		{name: "missing", args: []string{"diff", "a.txt", "nope"}, files: tree, status: 2},
		{name: "binary", args: []string{"diff", "bin1", "bin2"}, files: tree, want: "Binary files bin1 and bin2 differ\n", status: 1},
		{name: "stdin", args: []string{"diff", "-", "c.txt"}, files: tree, stdin: "x\nz\n", want: "2c2\n< z\n---\n> y\n", status: 1},
		{name: "dir file", args: []string{"diff", "d1", "d2/same.txt"}, files: tree},
		{name: "identical s", args: []string{"diff", "-s", "c.txt", "c.txt"}, files: tree, want: "Files c.txt and c.txt are identical\n"},
	})
}
