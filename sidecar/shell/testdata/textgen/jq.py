import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
files = {"a.json": '{"a": 1, "b": [1, 2, {"c": "x"}], "d": null, "e": 1.5, "f": "héllo"}\n', "s.json": '1 2 3\n', "arr.json": '[{"n": "x", "v": 2}, {"n": "y", "v": 1}]\n',
  "bad.json": '{"a": \n', "lines.txt": "one\ntwo\n", "empty.json": ""}
C = lambda *a: ["jq"] + list(a)
cases = [
 ("identity", C(".", "a.json")), ("compact", C("-c", ".", "a.json")), ("field", C(".b[2].c", "a.json")), ("raw", C("-r", ".f", "a.json")),
 ("stream", C(". * 2", "s.json")), ("slurp", C("-s", "add", "s.json")), ("null input", C("-n", "[1,2] | length")), ("arg", C("-n", "--arg", "x", "hi", "$x")),
 ("argjson", C("-n", "--argjson", "x", '{"k":[1]}', "$x.k[0]")), ("map select", C("-c", "map(select(.v > 1))", "arr.json")), ("sort_by", C("-c", "sort_by(.v) | map(.n)", "arr.json")),
 ("keys", C("-c", "keys", "a.json")), ("stdin", C(".x"), '{"x": true}'), ("exit false", C("-e", ".d", "a.json")), ("exit true", C("-e", ".a", "a.json")),
 ("exit none", C("-e", "empty", "a.json")), ("error", C(".a.b", "a.json")), ("compile error", C("..[", "a.json")),
 ("missing file", C(".", "nope.json")), ("raw input", C("-R", ".", "lines.txt")), ("raw slurp", C("-Rs", ".", "lines.txt")), ("join", C("-j", ".[]", "s.json")),
 ("tab", C("--tab", ".b", "a.json")), ("indent", C("--indent", "1", ".b", "a.json")), ("to_entries", C("-c", "to_entries[0]", "a.json")), ("interp string", C("-r", '"\\(.a)-\\(.e)"', "a.json")),
 ("float", C("-n", "0.1 + 0.2")), ("int division", C("-n", "7 / 2")), ("big", C("-n", "1e1000")), ("multiple files", C("-c", ".", "s.json", "arr.json")),
 ("length utf8", C(".f | length", "a.json")), ("ascii", C("-a", ".f", "a.json")), ("inputs", C("-n", "[inputs] | add", "s.json")), ("input", C("-c", "[., input]", "s.json")),
 ("empty file", C(".", "empty.json")), ("alternative", C(".missing // \"dflt\"", "a.json")), ("reduce", C("reduce .[] as $x (0; . + $x)"), "[1,2,3]"),
 ("ARGS", C("-n", "-c", "--arg", "a", "1", "$ARGS.named")), ("tostring", C("-r", ".b | tostring", "a.json")), ("halt_error", C("-n", '"bye\\n" | halt_error(3)')),
 ("group_by", C("-c", "group_by(.v > 1) | map(length)", "arr.json")), ("select missing", C(".[] | select(.n == \"y\") | .v", "arr.json")), ("has", C("has(\"a\")", "a.json")),
 ("split join", C("-r", ".f | split(\"l\") | join(\"L\")", "a.json")), ("test regex", C(".f | test(\"^h.l\")", "a.json")), ("slurp raw files", C("-s", "-c", ".", "s.json", "s.json")),
 ("number formats", C("-c", "."), "[1000000, 1e17, 0.00001, -0, 12345678901234567890, 1.5e300, 0.1, 2.5e-3, 1e-7]"),
 ("negative filter", C("-1"), "null"),
]
gen("TestTextJq", files, cases, sys.argv[1])
