package builtin

import "testing"

// Expectations were produced by running the same commands with GNU tools.
func TestTextAwk(t *testing.T) {
	tree := map[string]string{
		"a.txt":   "1\n2\n",
		"b.txt":   "2\n3\n",
		"csv.txt": "b,2,z\na,10,y\nc,1,x\n",
		"k.txt":   "bob 25 x\nalice 30 y\ncarol 25 a\n",
		"p.awk":   "{ s += $2 } END { print s }\n",
		"t.txt":   "a\tb c\td\n",
	}
	runTextCases(t, []textCase{
		{name: "print field", args: []string{"awk", "{print $1}", "k.txt"}, files: tree, want: "bob\nalice\ncarol\n"},
		{name: "sum", args: []string{"awk", "{s+=$2} END {print s}", "k.txt"}, files: tree, want: "80\n"},
		{name: "F", args: []string{"awk", "-F,", "{print $3, $1}", "csv.txt"}, files: tree, want: "z b\ny a\nx c\n"},
		{name: "F sep arg", args: []string{"awk", "-F", ",", "$2 > 1 {print NR\": \"$0}", "csv.txt"}, files: tree, want: "1: b,2,z\n2: a,10,y\n"},
		{name: "v", args: []string{"awk", "-v", "x=hi", "BEGIN {print x}"}, files: tree, want: "hi\n"},
		{name: "f", args: []string{"awk", "-f", "p.awk", "k.txt"}, files: tree, want: "80\n"},
		{name: "NR FNR", args: []string{"awk", "NR==FNR {a[$1]; next} $1 in a", "a.txt", "b.txt"}, files: tree, want: "2\n"},
		{name: "stdin", args: []string{"awk", "{print NF}"}, files: tree, stdin: "a b c\n\nd\n", want: "3\n0\n1\n"},
		{name: "printf", args: []string{"awk", "{printf \"%-6s|%3d\\n\", $1, $2}", "k.txt"}, files: tree, want: "bob   | 25\nalice | 30\ncarol | 25\n"},
		{name: "tab F", args: []string{"awk", "-F\\t", "{print $2}", "t.txt"}, files: tree, want: "b c\n"},
		{name: "OFS", args: []string{"awk", "BEGIN{OFS=\"-\"} {$1=$1; print}", "k.txt"}, files: tree, want: "bob-25-x\nalice-30-y\ncarol-25-a\n"},
		{name: "assign operand", args: []string{"awk", "{print x, $1}", "x=1", "a.txt", "x=2", "b.txt"}, files: tree, want: "1 1\n1 2\n2 2\n2 3\n"},
		{name: "exit code", args: []string{"awk", "BEGIN {exit 3}"}, files: tree, status: 3},
		{name: "length", args: []string{"awk", "{print length($0)}", "k.txt"}, files: tree, want: "8\n10\n10\n"},
		{name: "gsub", args: []string{"awk", "{gsub(/a/, \"A\"); print}", "k.txt"}, files: tree, want: "bob 25 x\nAlice 30 y\ncArol 25 A\n"},
		{name: "split", args: []string{"awk", "BEGIN {n = split(\"a:b:c\", p, \":\"); print n, p[3]}"}, files: tree, want: "3 c\n"},
		{name: "missing file", args: []string{"awk", "{print}", "nope"}, files: tree, status: 2},
		{name: "syntax error", args: []string{"awk", "{print"}, files: tree, status: 2},
		{name: "regex match", args: []string{"awk", "/^[ab]/", "k.txt"}, files: tree, want: "bob 25 x\nalice 30 y\n"},
		{name: "NR range", args: []string{"awk", "NR==2,NR==3", "k.txt"}, files: tree, want: "alice 30 y\ncarol 25 a\n"},
		{name: "substr", args: []string{"awk", "{print substr($1, 2, 3), toupper($1)}", "k.txt"}, files: tree, want: "ob BOB\nlic ALICE\naro CAROL\n"},
		{name: "END NR", args: []string{"awk", "END {print NR}", "k.txt"}, files: tree, want: "3\n"},
		{name: "uninitialized", args: []string{"awk", "BEGIN {print x+0, \"[\" y \"]\"}"}, files: tree, want: "0 []\n"},
		{name: "array sort loop", args: []string{"awk", "{c[$2]++} END {for (k in c) n++; print n}", "k.txt"}, files: tree, want: "2\n"},
		{name: "sprintf", args: []string{"awk", "BEGIN {s = sprintf(\"%05.1f\", 3.14159); print s}"}, files: tree, want: "003.1\n"},
		{name: "while", args: []string{"awk", "BEGIN {while (i < 3) print i++}"}, files: tree, want: "0\n1\n2\n"},
		{name: "getline var", args: []string{"awk", "NR==1 {getline x; print \"got\", x}", "k.txt"}, files: tree, want: "got alice 30 y\n"},
		{name: "ENVIRON empty", args: []string{"awk", "BEGIN {print length(ENVIRON[\"NOPE\"])}"}, files: tree, want: "0\n"},
	})
}
