import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
files = {"f.txt": "x\n"}
C = lambda *a: list(a)
cases = [
 ("true", C("true")), ("false", C("false")),
 ("expr add", C("expr", "1", "+", "2")), ("expr mul prec", C("expr", "2", "+", "3", "*", "4")), ("expr paren", C("expr", "(", "2", "+", "3", ")", "*", "4")),
 ("expr div", C("expr", "7", "/", "2")), ("expr mod", C("expr", "-7", "%", "3")), ("expr zero", C("expr", "3", "-", "3")), ("expr cmp", C("expr", "10", ">", "9")),
 ("expr strcmp", C("expr", "abc", "<", "abd")), ("expr match len", C("expr", "hello", ":", "hel")), ("expr match group", C("expr", "foo.txt", ":", "\\(.*\\)\\.txt")),
 ("expr nomatch", C("expr", "abc", ":", "x")), ("expr length", C("expr", "length", "hello")), ("expr substr", C("expr", "substr", "hello", "2", "3")),
 ("expr index", C("expr", "index", "hello", "lo")), ("expr or", C("expr", "0", "|", "5")), ("expr and", C("expr", "3", "&", "0")), ("expr divzero", C("expr", "1", "/", "0")),
 ("expr nonint", C("expr", "a", "+", "1")), ("expr syntax", C("expr", "1", "+")), ("expr empty", C("expr", "")), ("expr eq", C("expr", "a", "=", "a")),
 ("expr neg", C("expr", "-5", "+", "2")), ("expr big", C("expr", "99999999999999999999", "+", "1")),
 ("seq", C("seq", "5")), ("seq range", C("seq", "3", "7")), ("seq step", C("seq", "1", "3", "10")), ("seq down", C("seq", "5", "-2", "1")), ("seq w", C("seq", "-w", "8", "11")),
 ("seq s", C("seq", "-s", ",", "4")), ("seq float", C("seq", "0", "0.25", "1")), ("seq empty", C("seq", "5", "1")), ("seq neg", C("seq", "-3", "-1")), ("seq f", C("seq", "-f", "%03g", "3")),
 ("seq bad", C("seq", "x")), ("seq zero inc", C("seq", "1", "0", "3")), ("seq w neg", C("seq", "-w", "-10", "5", "0")),
 ("date epoch", C("date", "-u", "-d", "@0")), ("date format", C("date", "-u", "-d", "@1700000000", "+%Y-%m-%d %H:%M:%S %j %a %b %e")), ("date iso", C("date", "-u", "-d", "2024-02-29 13:14:15", "+%s %A %B %p %I")),
 ("date F T", C("date", "-u", "-d", "@86399", "+%F %T %D %R %y %C %u %w %%")), ("date N", C("date", "-u", "-d", "@1.5", "+%s.%N")), ("date R", C("date", "-u", "-R", "-d", "@0")),
 ("date bad", C("date", "-d", "garbage")),
 ("basename", C("basename", "/a/b/c.txt")), ("basename suffix", C("basename", "/a/b/c.txt", ".txt")), ("basename slash", C("basename", "/a/b/")), ("basename root", C("basename", "/")),
 ("basename a", C("basename", "-a", "x/y", "z/w")), ("basename s", C("basename", "-s", ".go", "a.go", "b.go")), ("basename same suffix", C("basename", ".txt", ".txt")), ("basename missing", C("basename")),
 ("dirname", C("dirname", "/a/b/c.txt")), ("dirname rel", C("dirname", "c.txt")), ("dirname slash", C("dirname", "/a/b//")), ("dirname root", C("dirname", "/")), ("dirname multi", C("dirname", "a/b", "c")),
 ("dirname double", C("dirname", "//a")), ("dirname trailing", C("dirname", "a/b/")),
]
gen("TestTextMisc", files, cases, sys.argv[1])
