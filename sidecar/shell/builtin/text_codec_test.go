package builtin

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// Expectations were produced by running the same commands with GNU tools.
func TestTextCodec(t *testing.T) {
	tree := map[string]string{
		"a.txt":       "hello\n",
		"b.txt":       "hello",
		"b64.txt":     "aGVsbG8K\n",
		"bad64.txt":   "aGVsbG8K!!\n",
		"crlf.txt":    "a\r\nb\r\n",
		"d.bin":       "\x00\u0001\u0002\u0003",
		"dir/k":       "k\n",
		"e.txt":       "",
		"f.pdf":       "%PDF-1.4\n",
		"h.html":      "<!DOCTYPE html>\n<html></html>\n",
		"j.json":      "{\"a\": 1}\n",
		"l":           "->a.txt",
		"long.txt":    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
		"missing.md5": "b1946ac92492d2347c6235b4d2611184  nope.txt\n",
		"od.bin":      "hello\n\u0001é",
		"p.py":        "#!/usr/bin/env python3\nprint(1)\n",
		"s.sh":        "#!/bin/sh\necho hi\n",
		"sums.md5":    "b1946ac92492d2347c6235b4d2611184  a.txt\n5d41402abc4b2a76b9719d911017c592  b.txt\n00000000000000000000000000000000  u.txt\n",
		"u.txt":       "héllo\n",
		"x.xml":       "<?xml version=\"1.0\"?>\n<a/>\n",
		"zeros":       "0000000000000000000000000000000000000000",
	}
	runTextCases(t, []textCase{
		{name: "base64", args: []string{"base64", "a.txt"}, files: tree, want: "aGVsbG8K\n"},
		{name: "base64 stdin", args: []string{"base64"}, files: tree, stdin: "any carnal pleasure.", want: "YW55IGNhcm5hbCBwbGVhc3VyZS4=\n"},
		{name: "base64 wrap", args: []string{"base64", "-w", "8", "long.txt"}, files: tree, want: "eHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eHh4\neHh4eAo=\n"},
		{name: "base64 nowrap", args: []string{"base64", "-w0", "long.txt"}, files: tree, want: "eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eAo="},
		{name: "base64 decode", args: []string{"base64", "-d", "b64.txt"}, files: tree, want: "hello\n"},
		{name: "base64 decode stdin", args: []string{"base64", "--decode"}, files: tree, stdin: "aGk=\n", want: "hi"},
		{name: "base64 bad", args: []string{"base64", "-d", "bad64.txt"}, files: tree, want: "hello\n", status: 1},
		{name: "base64 garbage", args: []string{"base64", "-di", "bad64.txt"}, files: tree, want: "hello\n"},
		{name: "base64 empty", args: []string{"base64", "e.txt"}, files: tree},
		{name: "md5sum", args: []string{"md5sum", "a.txt", "b.txt"}, files: tree, want: "b1946ac92492d2347c6235b4d2611184  a.txt\n5d41402abc4b2a76b9719d911017c592  b.txt\n"},
		{name: "md5sum stdin", args: []string{"md5sum"}, files: tree, stdin: "hello\n", want: "b1946ac92492d2347c6235b4d2611184  -\n"},
		{name: "sha1sum", args: []string{"sha1sum", "a.txt"}, files: tree, want: "f572d396fae9206628714fb2ce00f72e94f2258f  a.txt\n"},
		{name: "sha256sum", args: []string{"sha256sum", "a.txt", "u.txt"}, files: tree, want: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  a.txt\nb95becd154aa095f76c4ca47a5aeb8350d6dfcb838404edfc9dae06628de938d  u.txt\n"},
		{name: "sha512sum", args: []string{"sha512sum", "b.txt"}, files: tree, want: "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043  b.txt\n"},
		{name: "md5sum check", args: []string{"md5sum", "-c", "sums.md5"}, files: tree, want: "a.txt: OK\nb.txt: OK\nu.txt: FAILED\n", status: 1},
		{name: "md5sum check quiet", args: []string{"md5sum", "--quiet", "-c", "sums.md5"}, files: tree, want: "u.txt: FAILED\n", status: 1},
		{name: "md5sum check status", args: []string{"md5sum", "--status", "-c", "sums.md5"}, files: tree, status: 1},
		{name: "md5sum check missing", args: []string{"md5sum", "-c", "missing.md5"}, files: tree, want: "nope.txt: FAILED open or read\n", status: 1},
		{name: "md5sum missing", args: []string{"md5sum", "nope"}, files: tree, status: 1},
		{name: "md5sum tag", args: []string{"md5sum", "--tag", "a.txt"}, files: tree, want: "MD5 (a.txt) = b1946ac92492d2347c6235b4d2611184\n"},
		{name: "sha256 check malformed", args: []string{"sha256sum", "-c", "a.txt"}, files: tree, status: 1},
		{name: "od", args: []string{"od", "od.bin"}, files: tree, want: "0000000 062550 066154 005157 077401 124703\n0000012\n"},
		{name: "od c", args: []string{"od", "-c", "od.bin"}, files: tree, want: "0000000   h   e   l   l   o  \\n 001 177 303 251\n0000012\n"},
		{name: "od x", args: []string{"od", "-x", "od.bin"}, files: tree, want: "0000000 6568 6c6c 0a6f 7f01 a9c3\n0000012\n"},
		{name: "od t x1", args: []string{"od", "-t", "x1", "od.bin"}, files: tree, want: "0000000 68 65 6c 6c 6f 0a 01 7f c3 a9\n0000012\n"},
		{name: "od d2", args: []string{"od", "-t", "d2", "od.bin"}, files: tree, want: "0000000  25960  27756   2671  32513 -22077\n0000012\n"},
		{name: "od u1", args: []string{"od", "-t", "u1", "od.bin"}, files: tree, want: "0000000 104 101 108 108 111  10   1 127 195 169\n0000012\n"},
		{name: "od d1", args: []string{"od", "-t", "d1", "od.bin"}, files: tree, want: "0000000  104  101  108  108  111   10    1  127  -61  -87\n0000012\n"},
		{name: "od o1", args: []string{"od", "-b", "od.bin"}, files: tree, want: "0000000 150 145 154 154 157 012 001 177 303 251\n0000012\n"},
		{name: "od d4", args: []string{"od", "-t", "d4", "od.bin"}, files: tree, want: "0000000  1819043176  2130774639       43459\n0000012\n"},
		{name: "od An c x1", args: []string{"od", "-An", "-c", "-t", "x1", "od.bin"}, files: tree, want: "   h   e   l   l   o  \\n 001 177 303 251\n  68  65  6c  6c  6f  0a  01  7f  c3  a9\n"},
		{name: "od a", args: []string{"od", "-a", "od.bin"}, files: tree, want: "0000000   h   e   l   l   o  nl soh del   C   )\n0000012\n"},
		{name: "od Ad", args: []string{"od", "-Ad", "-b", "od.bin"}, files: tree, want: "0000000 150 145 154 154 157 012 001 177 303 251\n0000010\n"},
		{name: "od dup", args: []string{"od", "-c", "zeros"}, files: tree, want: "0000000   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0\n*\n0000040   0   0   0   0   0   0   0   0\n0000050\n"},
		{name: "od v", args: []string{"od", "-v", "-c", "zeros"}, files: tree, want: "0000000   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0\n0000020   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0\n0000040   0   0   0   0   0   0   0   0\n0000050\n"},
		{name: "od N j", args: []string{"od", "-N3", "-j1", "-c", "od.bin"}, files: tree, want: "0000001   e   l   l\n0000004\n"},
		{name: "od x8", args: []string{"od", "-t", "x8", "b.txt"}, files: tree, want: "0000000 0000006f6c6c6568\n0000005\n"},
		{name: "od Ax", args: []string{"od", "-Ax", "-tx1", "long.txt"}, files: tree, want: "000000 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78 78\n*\n000190 0a\n000191\n"},
		{name: "od stdin", args: []string{"od", "-c"}, files: tree, stdin: "hi\n", want: "0000000   h   i  \\n\n0000003\n"},
		{name: "file", args: []string{"file", "a.txt", "b.txt", "u.txt", "e.txt", "j.json", "s.sh", "p.py", "crlf.txt", "x.xml", "h.html", "d.bin", "dir", "l", "f.pdf", "long.txt"}, files: tree, want: "a.txt:    ASCII text\nb.txt:    ASCII text, with no line terminators\nu.txt:    Unicode text, UTF-8 text\ne.txt:    empty\nj.json:   JSON text data\ns.sh:     POSIX shell script, ASCII text executable\np.py:     Python script, ASCII text executable\ncrlf.txt: ASCII text, with CRLF line terminators\nx.xml:    XML 1.0 document, ASCII text\nh.html:   HTML document, ASCII text\nd.bin:    data\ndir:      directory\nl:        symbolic link to a.txt\nf.pdf:    PDF document, version 1.4\nlong.txt: ASCII text, with very long lines (400)\n"},
		{name: "file brief", args: []string{"file", "-b", "a.txt"}, files: tree, want: "ASCII text\n"},
		{name: "file L", args: []string{"file", "-L", "l"}, files: tree, want: "l: ASCII text\n"},
		{name: "file missing", args: []string{"file", "nope"}, files: tree, want: "nope: cannot open `nope' (No such file or directory)\n"},
		{name: "file mime", args: []string{"file", "--mime-type", "a.txt", "dir"}, files: tree, want: "a.txt: text/plain\ndir:   inode/directory\n"},
	})
}

// base64 -d, comm, md5sum -c and file stream: inputs 16 times the budget
// go through with the charge staying within it.
func TestCodecCommandsStream(t *testing.T) {
	const budget = 256 << 10
	line := strings.Repeat("y", 99) + "\n"
	big := strings.Repeat(line, 40_000) // 4 MB
	sorted := func(prefix string) string {
		var b strings.Builder
		for i := range 40_000 {
			fmt.Fprintf(&b, "%s%07d%s", prefix, i, line)
		}
		return b.String()
	}
	var sums strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&sums, "%x  f%d\n", md5.Sum([]byte("x\n")), i%2)
	}
	files := map[string]string{
		"b64":  base64.StdEncoding.EncodeToString([]byte(big)),
		"s1":   sorted("a"),
		"s2":   sorted("a")[len(line)+8:] + sorted("b"),
		"sums": sums.String(),
		"f0":   "x\n",
		"f1":   "x\n",
		"text": big,
		// Longer than file reads: the size is found at the end.
		"gz": "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + big + big + "\x05\x00\x00\x00",
	}
	tree := map[string]string{}
	for k, v := range files {
		tree["/w/"+k] = v
	}
	cases := []struct {
		args []string
		last string // the output's last line
	}{
		{[]string{"base64", "-d", "b64"}, line},
		{[]string{"comm", "-3", "s1", "s2"}, "\tb0039999" + line},
		{[]string{"comm", "--total", "s1", "s2"}, "1\t40000\t39999\ttotal\n"},
		{[]string{"md5sum", "-c", "sums"}, "f1: OK\n"},
		{[]string{"file", "text"}, "text: ASCII text\n"},
		{[]string{"file", "gz"}, "gz: gzip compressed data, from Unix, original size modulo 2^32 5\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fn, _ := Lookup(c.args[0])
			mem := &testMem{most: budget}
			var out, errb bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: "/w", FS: newTextFS(tree),
				Getenv: func(string) string { return "" }, Environ: func() []string { return nil }, Mem: mem}
			most := int64(budget / 4) // what a stream may hold: a line or two
			if c.args[0] == "file" {
				most = fileBytesMax * 5 / 4 // its header, as libmagic reads, in a buffer grown by doubling
				mem.most = 2 * fileBytesMax
			}
			status := fn(context.Background(), env, c.args)
			s := out.String()
			last := s[strings.LastIndexByte(strings.TrimSuffix(s, "\n"), '\n')+1:]
			if status != 0 || last != c.last {
				t.Errorf("status %d, stderr %q, last line %.200q, want %.200q", status, errb.String(), last, c.last)
			}
			if mem.peak > most {
				t.Errorf("peak charge %d, want at most %d", mem.peak, most)
			}
		})
	}
}
