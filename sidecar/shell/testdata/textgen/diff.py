import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
a = "".join("line %d\n" % i for i in range(1, 21))
b = a.replace("line 3\n", "line three\n").replace("line 15\n", "").replace("line 20\n", "line 20\nline 21\n")
files = {"a.txt": a, "b.txt": b, "c.txt": "x\ny\n", "d.txt": "x\ny", "e.txt": "", "f.txt": "X\ny\n", "g.txt": "x\n  y\n",
 "d1/same.txt": "same\n", "d1/diff.txt": "one\ntwo\n", "d1/only1.txt": "1\n", "d1/sub/s.txt": "s\n",
 "d2/same.txt": "same\n", "d2/diff.txt": "one\n2\n", "d2/only2.txt": "2\n", "d2/sub/s.txt": "S\n", "bin1": "a\x00b", "bin2": "a\x00c"}
C = lambda *a: ["diff"] + list(a)
# Unified headers carry timestamps: compare the body only through --label.
L = ["--label", "A", "--label", "B"]
cases = [
 ("same", C("a.txt", "a.txt")), ("normal", C("a.txt", "b.txt")), ("unified", C("-u", *L, "a.txt", "b.txt")), ("U1", C("-U1", *L, "a.txt", "b.txt")),
 ("U0", C("-U", "0", *L, "a.txt", "b.txt")), ("brief", C("-q", "a.txt", "b.txt")), ("noeol normal", C("c.txt", "d.txt")), ("noeol unified", C("-u", *L, "c.txt", "d.txt")),
 ("empty vs", C("e.txt", "c.txt")), ("empty unified", C("-u", *L, "e.txt", "c.txt")), ("to empty unified", C("-u", *L, "c.txt", "e.txt")),
 ("icase", C("-i", "c.txt", "f.txt")), ("ignore space", C("-w", "c.txt", "g.txt")), ("space", C("c.txt", "g.txt")),
 ("dirs", C("d1", "d2")), ("dirs r", C("-r", "d1", "d2")), ("dirs ru", C("-ru", *L, "d1", "d2")), ("dirs q", C("-rq", "d1", "d2")), ("dirs N", C("-rN", "d1", "d2")),
 ("missing", C("a.txt", "nope")), ("binary", C("bin1", "bin2")), ("stdin", C("-", "c.txt"), "x\nz\n"), ("dir file", C("d1", "d2/same.txt")),
 ("identical s", C("-s", "c.txt", "c.txt")),
]
gen("TestTextDiff", files, cases, sys.argv[1])
