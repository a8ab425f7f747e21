import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import gen
import subprocess
files = {"a.txt": "hello\n", "b.txt": "hello", "u.txt": "héllo\n", "e.txt": "", "j.json": "{\"a\": 1}\n", "s.sh": "#!/bin/sh\necho hi\n",
 "p.py": "#!/usr/bin/env python3\nprint(1)\n", "crlf.txt": "a\r\nb\r\n", "x.xml": "<?xml version=\"1.0\"?>\n<a/>\n", "h.html": "<!DOCTYPE html>\n<html></html>\n",
 "d.bin": "\x00\x01\x02\x03", "dir/k": "k\n", "l": "->a.txt", "f.pdf": "%PDF-1.4\n", "long.txt": "x" * 400 + "\n",
 "od.bin": "hello\n\x01\x7fé", "zeros": "0" * 40, "b64.txt": "aGVsbG8K\n", "bad64.txt": "aGVsbG8K!!\n",
 "sums.md5": "b1946ac92492d2347c6235b4d2611184  a.txt\n5d41402abc4b2a76b9719d911017c592  b.txt\n00000000000000000000000000000000  u.txt\n",
 "missing.md5": "b1946ac92492d2347c6235b4d2611184  nope.txt\n"}
C = lambda *a: list(a)
cases = [
 ("base64", C("base64", "a.txt")), ("base64 stdin", C("base64"), "any carnal pleasure."), ("base64 wrap", C("base64", "-w", "8", "long.txt")),
 ("base64 nowrap", C("base64", "-w0", "long.txt")), ("base64 decode", C("base64", "-d", "b64.txt")), ("base64 decode stdin", C("base64", "--decode"), "aGk=\n"),
 ("base64 bad", C("base64", "-d", "bad64.txt")), ("base64 garbage", C("base64", "-di", "bad64.txt")), ("base64 empty", C("base64", "e.txt")),
 ("md5sum", C("md5sum", "a.txt", "b.txt")), ("md5sum stdin", C("md5sum"), "hello\n"), ("sha1sum", C("sha1sum", "a.txt")), ("sha256sum", C("sha256sum", "a.txt", "u.txt")),
 ("sha512sum", C("sha512sum", "b.txt")), ("md5sum check", C("md5sum", "-c", "sums.md5")), ("md5sum check quiet", C("md5sum", "--quiet", "-c", "sums.md5")),
 ("md5sum check status", C("md5sum", "--status", "-c", "sums.md5")), ("md5sum check missing", C("md5sum", "-c", "missing.md5")),
 ("md5sum missing", C("md5sum", "nope")), ("md5sum tag", C("md5sum", "--tag", "a.txt")), ("sha256 check malformed", C("sha256sum", "-c", "a.txt")),
 ("od", C("od", "od.bin")), ("od c", C("od", "-c", "od.bin")), ("od x", C("od", "-x", "od.bin")), ("od t x1", C("od", "-t", "x1", "od.bin")),
 ("od d2", C("od", "-t", "d2", "od.bin")), ("od u1", C("od", "-t", "u1", "od.bin")), ("od d1", C("od", "-t", "d1", "od.bin")), ("od o1", C("od", "-b", "od.bin")),
 ("od d4", C("od", "-t", "d4", "od.bin")), ("od An c x1", C("od", "-An", "-c", "-t", "x1", "od.bin")), ("od a", C("od", "-a", "od.bin")),
 ("od Ad", C("od", "-Ad", "-b", "od.bin")), ("od dup", C("od", "-c", "zeros")), ("od v", C("od", "-v", "-c", "zeros")), ("od N j", C("od", "-N3", "-j1", "-c", "od.bin")),
 ("od x8", C("od", "-t", "x8", "b.txt")), ("od Ax", C("od", "-Ax", "-tx1", "long.txt")), ("od stdin", C("od", "-c"), "hi\n"),
 ("file", C("file", "a.txt", "b.txt", "u.txt", "e.txt", "j.json", "s.sh", "p.py", "crlf.txt", "x.xml", "h.html", "d.bin", "dir", "l", "f.pdf", "long.txt")),
 ("file brief", C("file", "-b", "a.txt")), ("file L", C("file", "-L", "l")), ("file missing", C("file", "nope")), ("file mime", C("file", "--mime-type", "a.txt", "dir")),
]
gen("TestTextCodec", files, cases, sys.argv[1])
