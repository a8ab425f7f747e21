import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
files = {"a.txt": "alpha\nbeta\ngamma\nAlpha beta\nfoo_bar baz\n", "src/m.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", "src/u.go": "package main\n// TODO: fix\n",
 "src/r.md": "# TODO\nnothing\n", "src/vendor/v.go": "// TODO vendored\n", "c.txt": "".join("l%d\n" % i for i in range(1, 16)), "u.txt": "héllo wörld\nplain\n", "n.txt": "x\n"}
G = lambda *a: ["grep"] + list(a)
cases = [
 ("r sorted", G("-rn", "TODO", "src")), ("r include", G("-r", "--include=*.go", "TODO", "src")), ("r exclude", G("-r", "--exclude=*.md", "TODO", "src")),
 ("r exclude-dir", G("-r", "--exclude-dir=vendor", "-l", "TODO", "src")), ("rniE", G("-rniE", "--include=*.go", "todo|println", "src")),
 ("rL", G("-rL", "TODO", "src")), ("w", G("-w", "bar", "a.txt")), ("w underscore", G("-w", "foo", "a.txt")), ("wo", G("-ow", "beta", "a.txt")), ("o multi", G("-o", "a", "a.txt")),
 ("C2", G("-C2", "l8", "c.txt")), ("A1 B1 multi", G("-A1", "-B1", "-e", "l3", "-e", "l10", "c.txt")), ("n A", G("-nA1", "l1$", "c.txt")), ("m A", G("-m1", "-A2", "l1", "c.txt")),
 ("c v", G("-cv", "l1", "c.txt")), ("vn", G("-vn", "l[0-9]$", "c.txt")), ("x", G("-x", "l1", "c.txt")), ("i utf8", G("-i", "HÉLLO", "u.txt")), ("dot utf8", G("-o", "h.llo", "u.txt")),
 ("E plus", G("-E", "l1+", "c.txt")), ("E interval", G("-Eo", "l[0-9]{2}", "c.txt")), ("bre interval", G("-o", "l[0-9]\\{2\\}", "c.txt")), ("F multi", G("-F", "-e", "l1", "-e", "l2", "c.txt")),
 ("bracket", G("[[:digit:]][[:digit:]]", "c.txt")), ("anchor", G("^l1", "c.txt")), ("word boundary", G("\\<beta", "a.txt")), ("H stdin", G("-H", "x"), "x\n"),
 ("label", G("--label=in", "-H", "x"), "x\n"), ("q no match", G("-q", "zzz", "a.txt")), ("s missing", G("-s", "x", "nope", "n.txt")), ("missing", G("x", "nope", "n.txt")),
 ("l multiple", G("-l", "a", "a.txt", "c.txt", "n.txt")), ("e dash pattern", G("-e", "-x", "a.txt")), ("f file", G("-f", "n.txt", "n.txt", "a.txt")),
 ("h r", G("-rh", "TODO", "src")), ("dot pattern", G("-c", ".", "src/m.go")), ("backslash w", G("-o", "\\w\\+_\\w\\+", "a.txt")), ("star first", G("*", "a.txt")),
 ("egrep", ["egrep", "-c", "l(1|2)$", "c.txt"]), ("fgrep", ["fgrep", "-n", "()", "src/m.go"]), ("color never", G("--color=never", "beta", "a.txt")),
 ("count multiple", G("-c", "a", "a.txt", "n.txt")), ("o i", G("-oi", "alpha", "a.txt")), ("only empty match", G("-o", "z*", "a.txt")), ("empty stdin", G("x"), ""),
 ("max count 0", G("-m", "0", "a", "a.txt")), ("context overlap", G("-n", "-C1", "l[45]$", "c.txt")),
]
gen("TestTextGrepGNU", files, cases, sys.argv[1])
