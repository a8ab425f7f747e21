# Regenerates the table-driven tests of sidecar/shell/builtin/text_*_test.go
# whose expectations come from the host's GNU tools (grep 3.8, sed 4.9,
# coreutils 9.1, diffutils 3.8, mawk, jq 1.6, file 5.44 on Debian 12):
#   cd sidecar/shell/builtin && python3 ../testdata/textgen/sed.py text_sed_test.go && gofmt -w text_sed_test.go
# Each group script (sed.py, grep.py, ...) lists its fixture tree and cases.
import subprocess, tempfile, os, sys, json

def golit(s):
    return json.dumps(s, ensure_ascii=False).replace('\\u0000', '\\x00')

def gen(funcname, files, cases, out):
    lines = ["package builtin", "", "import \"testing\"", "", "// Expectations were produced by running the same commands with GNU tools.",
             "func %s(t *testing.T) {" % funcname, "\ttree := map[string]string{"]
    for k, v in sorted(files.items()):
        lines.append("\t\t%s: %s," % (golit(k), golit(v)))
    lines.append("\t}")
    lines.append("\trunTextCases(t, []textCase{")
    for c in cases:
        name, args = c[0], c[1]
        stdin = c[2] if len(c) > 2 else ""
        d = tempfile.mkdtemp()
        for k, v in files.items():
            p = os.path.join(d, k)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if v.startswith("->"):
                os.symlink(v[2:], p)
            elif v == "/":
                os.makedirs(p, exist_ok=True)
            else:
                open(p, "w").write(v)
        env = dict(os.environ, LC_ALL="C.UTF-8", TZ="UTC")
        r = subprocess.run(args, cwd=d, input=stdin.encode(), capture_output=True, env=env)
        after = {}
        for k in (c[3] if len(c) > 3 else []):
            after[k] = open(os.path.join(d, k)).read()
        outp = r.stdout.decode()
        fields = ["name: %s" % golit(name), "args: []string{%s}" % ", ".join(golit(a) for a in args), "files: tree"]
        if stdin:
            fields.append("stdin: %s" % golit(stdin))
        if outp:
            fields.append("want: %s" % golit(outp))
        if r.returncode:
            fields.append("status: %d" % r.returncode)
        if after:
            fields.append("after: map[string]string{%s}" % ", ".join("%s: %s" % (golit(k), golit(v)) for k, v in after.items()))
        lines.append("\t\t{" + ", ".join(fields) + "},")
        subprocess.run(["rm", "-rf", d])
    lines.append("\t})")
    lines.append("}")
    open(out, "w").write("\n".join(lines) + "\n")
