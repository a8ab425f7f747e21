import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
files = {"f.txt": "one\ntwo\nthree\nfour\nfive\n", "noeol.txt": "x\ny", "g.txt": "alpha beta\ngamma delta\n", "sub/h.txt": "hello\n"}
S = lambda *a: ["sed"] + list(a)
cases = [
 ("subst", S("s/o/0/", "f.txt")), ("global", S("s/o/0/g", "f.txt")), ("print line", S("-n", "2p", "f.txt")),
 ("delete range", S("2,4d", "f.txt")), ("regex range", S("/two/,/four/s/^/> /", "f.txt")),
 ("last", S("$!d", "f.txt")), ("count lines", S("-n", "$=", "f.txt")), ("negate", S("2!d", "f.txt")),
 ("step", S("1~2d", "f.txt")), ("plus", S("2,+1d", "f.txt")), ("zero addr", S("0,/o/s/o/X/", "f.txt")),
 ("block", S("/t/{s/t/T/;p}", "f.txt")), ("block eq", S("-n", "/e/{=;p}", "f.txt")),
 ("append multi", S("a\\\nafter", "f.txt")), ("insert one-liner", S("3i before", "f.txt")),
 ("change", S("2c changed", "f.txt")), ("change range", S("2,3c changed", "f.txt")),
 ("y", S("y/abcdefo/ABCDEFO/", "f.txt")), ("quit", S("3q", "f.txt")), ("quit code", S("3q5", "f.txt")),
 ("Quit", S("3Q", "f.txt")), ("N", S("N;s/\\n/+/", "f.txt")), ("NPD", S("$!N;P;D", "f.txt")),
 ("join all", S(":a;N;$!ba;s/\\n/,/g", "f.txt")), ("ere groups", S("-E", "s/(o+)|(e)/[\\1\\2]/g", "f.txt")),
 ("bre groups", S("s/\\(t\\)\\(w\\)/\\2\\1/", "f.txt")), ("upper", S("s/.*/\\U&/", "f.txt")),
 ("nth", S("s/e/E/2", "f.txt")), ("gp", S("-n", "s/e/E/gp", "f.txt")), ("hold G", S("h;G", "f.txt")),
 ("tac", S("1!G;h;$!d", "f.txt")), ("to end", S("/two/,$d", "f.txt")), ("T branch", S("s/e$//;T;s/$/!/", "f.txt")),
 ("separate", S("-s", "1d", "f.txt", "g.txt")), ("joined", S("1d", "f.txt", "g.txt")), ("l", S("-n", "l", "g.txt")),
 ("nth global", S("s/[aeiou]/(&)/3g", "f.txt")), ("backwards range", S("-n", "2,1p", "f.txt")),
 ("icase addr", S("/ONE/I,+2d", "f.txt")), ("noeol", S("s/$/!/", "noeol.txt")), ("noeol append", S("$a end", "noeol.txt")),
 ("stdin", S("s/a/b/"), "banana\n"), ("multiple e", S("-e", "s/a/A/", "-e", "s/b/B/", "g.txt")),
 ("a continuation", S("-e", "a\\", "-e", "  two", "sub/h.txt")), ("custom delim", S("s|a|/|g", "g.txt")),
 ("addr custom delim", S("\\,gamma,d", "g.txt")), ("case conv", S("-E", "s/(\\w+) (\\w+)/\\u\\1 \\U\\2\\E!/", "g.txt")),
 ("ampersand escape", S("s/alpha/[\\&&]/", "g.txt")), ("newline repl", S("s/ /\\n/", "g.txt")),
 ("w stdout", S("-n", "/gamma/w /dev/stdout", "g.txt")), ("x", S("x;$!d", "f.txt")), ("n cmd", S("n;d", "f.txt")),
 ("in place", S("-i", "s/one/ONE/", "f.txt"), "", ["f.txt"]), ("in place suffix", S("-i.bak", "1d", "sub/h.txt"), "", ["sub/h.txt", "sub/h.txt.bak"]),
 ("in place E", S("-Ei", "s/(l+)/<\\1>/", "sub/h.txt"), "", ["sub/h.txt"]),
 ("missing file", S("p", "nope.txt")), ("bad command", S("k", "f.txt")), ("unknown label", S("b nowhere", "f.txt")),
 ("comment", S("# hi\n2d", "f.txt")), ("regex last", S("/o/s//0/g", "f.txt")), ("dollar literal", S("s/a$b/x/", "g.txt")),
 ("class", S("s/[[:space:]]/_/g", "g.txt")), ("interval", S("-E", "s/[a-z]{5}/W/", "g.txt")), ("bre interval", S("s/l\\{1,\\}/L/", "g.txt")),
 ("star start", S("s/*/x/", "g.txt"), ""), ("equals", S("=", "noeol.txt")), ("i before first", S("1i\\\nheader", "g.txt")),
 ("D loop", S("N;N;D", "f.txt")), ("empty regex match", S("s/x*/-/g", "g.txt")), ("p twice", S("p", "sub/h.txt")),
 ("r file", S("1r sub/h.txt", "g.txt")), ("q append", S("1{a\\\nappended\nq}", "g.txt")),
]
gen("TestTextSed", files, cases, sys.argv[1])
