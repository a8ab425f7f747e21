package builtin

import "testing"

// Expectations were produced by running the same commands with GNU tools.
func TestTextBackref(t *testing.T) {
	tree := map[string]string{
		"in.txt": "hello hello world\nfoo bar bar\naabaa xx\nabab\nAa\nabcabc\n",
		"w.txt":  "pear\napple\napple\nfig\nfig\nfig\nkiwi\n",
	}
	runTextCases(t, []textCase{
		{name: "sed ere dup word", args: []string{"sed", "-E", "s/(\\w+) \\1/<\\1>/g", "in.txt"}, files: tree, want: "<hello> world\nfoo <bar>\naabaa xx\nabab\nAa\nabcabc\n"},
		{name: "grep ere double char", args: []string{"grep", "-E", "(.)\\1", "in.txt"}, files: tree, want: "hello hello world\nfoo bar bar\naabaa xx\n"},
		{name: "grep ere double char only", args: []string{"grep", "-oE", "(.)\\1", "in.txt"}, files: tree, want: "ll\nll\noo\naa\naa\nxx\n"},
		{name: "sed bre backref", args: []string{"sed", "s/\\(a*\\)b\\1/[&]/", "in.txt"}, files: tree, want: "hello hello world\nfoo [b]ar bar\n[aabaa] xx\n[aba]b\nAa\na[b]cabc\n"},
		{name: "grep count square", args: []string{"grep", "-c", "^\\(.*\\)\\1$", "in.txt"}, files: tree, want: "2\n"},
		{name: "grep icase backref", args: []string{"grep", "-i", "\\(a\\)\\1", "in.txt"}, files: tree, want: "aabaa xx\nAa\n"},
		{name: "sed address backref", args: []string{"sed", "-n", "/\\(.\\)\\1/p", "in.txt"}, files: tree, want: "hello hello world\nfoo bar bar\naabaa xx\n"},
		{name: "sed dedupe", args: []string{"sed", "$!N;/^\\(.*\\)\\n\\1$/!P;D", "w.txt"}, files: tree, want: "pear\napple\nfig\nkiwi\n"},
		{name: "grep two groups", args: []string{"grep", "-E", "^(a)(b)\\1\\2$", "in.txt"}, files: tree, want: "abab\n"},
		{name: "grep word backref", args: []string{"grep", "-w", "\\(bar\\) \\1", "in.txt"}, files: tree, want: "foo bar bar\n"},
		{name: "expr backref", args: []string{"expr", "abab", ":", "\\(ab\\)\\1"}, files: tree, want: "ab\n"},
		{name: "sed global backref", args: []string{"sed", "s/\\(.\\)\\1/<&>/g", "in.txt"}, files: tree, want: "he<ll>o he<ll>o world\nf<oo> bar bar\n<aa>b<aa> <xx>\nabab\nAa\nabcabc\n"},
	})
}

// A pattern that backtracks exponentially gives up instead of hanging.
func TestTextBackrefBudget(t *testing.T) {
	runTextCases(t, []textCase{
		{name: "exponential", args: []string{"grep", "-cE", `^(a|a|aa)*\1b`}, stdin: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", want: "0\n", status: 1},
	})
}
