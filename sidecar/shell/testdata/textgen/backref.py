import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
files = {"in.txt": "hello hello world\nfoo bar bar\naabaa xx\nabab\nAa\nabcabc\n", "w.txt": "pear\napple\napple\nfig\nfig\nfig\nkiwi\n"}
cases = [
 ("sed ere dup word", ["sed", "-E", "s/(\\w+) \\1/<\\1>/g", "in.txt"]),
 ("grep ere double char", ["grep", "-E", "(.)\\1", "in.txt"]),
 ("grep ere double char only", ["grep", "-oE", "(.)\\1", "in.txt"]),
 ("sed bre backref", ["sed", "s/\\(a*\\)b\\1/[&]/", "in.txt"]),
 ("grep count square", ["grep", "-c", "^\\(.*\\)\\1$", "in.txt"]),
 ("grep icase backref", ["grep", "-i", "\\(a\\)\\1", "in.txt"]),
 ("sed address backref", ["sed", "-n", "/\\(.\\)\\1/p", "in.txt"]),
 ("sed dedupe", ["sed", "$!N;/^\\(.*\\)\\n\\1$/!P;D", "w.txt"]),
 ("grep two groups", ["grep", "-E", "^(a)(b)\\1\\2$", "in.txt"]),
 ("grep word backref", ["grep", "-w", "\\(bar\\) \\1", "in.txt"]),
 ("expr backref", ["expr", "abab", ":", "\\(ab\\)\\1"]),
 ("sed global backref", ["sed", "s/\\(.\\)\\1/<&>/g", "in.txt"]),
]
gen("TestTextBackref", files, cases, sys.argv[1])
