import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
files = {"k.txt": "bob 25 x\nalice 30 y\ncarol 25 a\n", "csv.txt": "b,2,z\na,10,y\nc,1,x\n", "t.txt": "a\tb c\td\n", "p.awk": "{ s += $2 } END { print s }\n",
  "a.txt": "1\n2\n", "b.txt": "2\n3\n"}
C = lambda *a: ["awk"] + list(a)
cases = [
 ("print field", C("{print $1}", "k.txt")), ("sum", C("{s+=$2} END {print s}", "k.txt")), ("F", C("-F,", "{print $3, $1}", "csv.txt")),
 ("F sep arg", C("-F", ",", "$2 > 1 {print NR\": \"$0}", "csv.txt")), ("v", C("-v", "x=hi", "BEGIN {print x}")), ("f", C("-f", "p.awk", "k.txt")),
 ("NR FNR", C("NR==FNR {a[$1]; next} $1 in a", "a.txt", "b.txt")), ("stdin", C("{print NF}"), "a b c\n\nd\n"),
 ("printf", C("{printf \"%-6s|%3d\\n\", $1, $2}", "k.txt")), ("tab F", C("-F\\t", "{print $2}", "t.txt")), ("OFS", C("BEGIN{OFS=\"-\"} {$1=$1; print}", "k.txt")),
 ("assign operand", C("{print x, $1}", "x=1", "a.txt", "x=2", "b.txt")), ("exit code", C("BEGIN {exit 3}")), ("length", C("{print length($0)}", "k.txt")),
 ("gsub", C("{gsub(/a/, \"A\"); print}", "k.txt")), ("split", C("BEGIN {n = split(\"a:b:c\", p, \":\"); print n, p[3]}")),
 ("missing file", C("{print}", "nope")), ("syntax error", C("{print")), ("regex match", C("/^[ab]/", "k.txt")), ("NR range", C("NR==2,NR==3", "k.txt")),
 ("substr", C("{print substr($1, 2, 3), toupper($1)}", "k.txt")), ("END NR", C("END {print NR}", "k.txt")), ("uninitialized", C("BEGIN {print x+0, \"[\" y \"]\"}")),
 ("array sort loop", C("{c[$2]++} END {for (k in c) n++; print n}", "k.txt")), ("sprintf", C("BEGIN {s = sprintf(\"%05.1f\", 3.14159); print s}")),
 ("while", C("BEGIN {while (i < 3) print i++}")), ("getline var", C("NR==1 {getline x; print \"got\", x}", "k.txt")), ("ENVIRON empty", C("BEGIN {print length(ENVIRON[\"NOPE\"])}")),
]
gen("TestTextAwk", files, cases, sys.argv[1])
