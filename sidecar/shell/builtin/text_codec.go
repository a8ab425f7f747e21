package builtin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func init() {
	register("base64", textBase64)
	for name, h := range map[string]func() hash.Hash{"md5sum": md5.New, "sha1sum": sha1.New,
		"sha256sum": sha256.New, "sha512sum": sha512.New} {
		register(name, func(ctx context.Context, env *Env, args []string) int { return textSum(ctx, env, args, h) })
	}
	register("od", textOd)
	register("file", textFile)
}

func textBase64(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "di", withArg: "w",
		long: map[string]string{"--decode": "d", "--ignore-garbage": "i", "--wrap": "w="}})
	if err != nil {
		return textUsage(env, "base64", err, 1)
	}
	decode, garbage, wrap := false, false, 76
	for _, o := range opts {
		switch o.Name {
		case "d":
			decode = true
		case "i":
			garbage = true
		case "w":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				env.Errorf("base64", "invalid wrap size: %s", textQuote(o.Val))
				return 1
			}
			wrap = n
		}
	}
	if len(ops) > 1 {
		env.Errorf("base64", "extra operand %s", textQuote(ops[1]))
		return 1
	}
	if !decode {
		return textBase64Encode(ctx, env, ops, wrap)
	}
	return textBase64Decode(ctx, env, ops, garbage)
}

// textBase64Decode streams the operands' decoding as GNU base64 -d does:
// newlines are skipped (with garbage, everything outside the alphabet),
// each quantum of four may end in padding, and at the first invalid
// character or quantum, or a partial one at the end, what the valid prefix
// decodes to is written before the error.
func textBase64Decode(ctx context.Context, env *Env, ops []string, garbage bool) int {
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	in := newTextConcat(ctx, env, "base64", ops)
	buf := make([]byte, 64<<10)
	out := make([]byte, base64.StdEncoding.DecodedLen(len(buf)))
	var pend []byte // clean characters not yet decoded, fewer than a quantum between reads
	bad := false
	for !bad {
		if ctx.Err() != nil {
			return 1
		}
		n, err := in.Read(buf)
		for _, c := range buf[:n] {
			if isBase64(c) || c == '=' {
				pend = append(pend, c)
			} else if !garbage && c != '\n' {
				bad = true
				break
			}
		}
		i := 0
		for len(pend)-i >= 4 {
			// A run of whole quanta without padding decodes at once.
			run := len(pend) - i
			if eq := bytes.IndexByte(pend[i:], '='); eq >= 0 {
				run = eq
			}
			if run = run / 4 * 4; run > 0 {
				k, _ := base64.StdEncoding.Decode(out, pend[i:i+run])
				w.Write(out[:k])
				i += run
				continue
			}
			k, derr := base64.StdEncoding.Decode(out, pend[i:i+4])
			if derr != nil {
				bad = true
				break
			}
			w.Write(out[:k])
			i += 4
		}
		pend = append(pend[:0], pend[i:]...)
		if err != nil {
			break
		}
	}
	if len(pend) == 0 && !bad {
		return textStatus(!in.failed)
	}
	// The partial quantum's characters before any padding decode to what
	// they complete.
	if eq := bytes.IndexByte(pend, '='); eq >= 0 {
		pend = pend[:eq]
	}
	if len(pend) >= 2 {
		k, _ := base64.RawStdEncoding.Decode(out, pend[:min(len(pend), 3)])
		w.Write(out[:k])
	}
	w.Flush()
	env.Errorf("base64", "invalid input")
	return 1
}

// isBase64 tells the characters of the standard alphabet, padding aside.
func isBase64(c byte) bool { return isTextAlnum(c) && c != '_' || c == '+' || c == '/' }

// textBase64Encode streams the operands' encoding, wrapped at wrap columns
// (0: not wrapped, and no final newline, as GNU does).
func textBase64Encode(ctx context.Context, env *Env, ops []string, wrap int) int {
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	lines := &wrapWriter{w: w, width: wrap}
	enc := base64.NewEncoder(base64.StdEncoding, lines)
	in := newTextConcat(ctx, env, "base64", ops)
	if err := textCopy(ctx, enc, in); err != nil {
		return 1
	}
	enc.Close()
	if lines.col > 0 {
		w.WriteByte('\n')
	}
	return textStatus(!in.failed)
}

// wrapWriter breaks what it writes into lines of width bytes; 0 does not.
type wrapWriter struct {
	w     io.Writer
	width int
	col   int
}

func (l *wrapWriter) Write(p []byte) (int, error) {
	if l.width == 0 {
		return l.w.Write(p)
	}
	n := len(p)
	for len(p) > 0 {
		if l.col == l.width {
			if _, err := l.w.Write([]byte{'\n'}); err != nil {
				return 0, err
			}
			l.col = 0
		}
		k := min(len(p), l.width-l.col)
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.col += k
		p = p[k:]
	}
	return n, nil
}

func textSum(ctx context.Context, env *Env, args []string, newHash func() hash.Hash) int {
	cmd := args[0]
	opts, ops, err := textParse(args[1:], textSpec{flags: "bctwz",
		long: map[string]string{"--binary": "b", "--check": "c", "--text": "t", "--warn": "w", "--quiet": "--quiet",
			"--status": "--status", "--strict": "--strict", "--ignore-missing": "--ignore-missing", "--tag": "--tag"}})
	if err != nil {
		return textUsage(env, cmd, err, 1)
	}
	check, quiet, status, ignoreMissing, tag := false, false, false, false, false
	marker := " " // before the name: '*' for binary mode (-b), as GNU writes it
	for _, o := range opts {
		switch o.Name {
		case "b":
			marker = "*"
		case "t":
			marker = " "
		case "c":
			check = true
		case "--quiet":
			quiet = true
		case "--status":
			status = true
		case "--ignore-missing":
			ignoreMissing = true
		case "--tag":
			tag = true
		}
	}
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	sum := func(name string) (string, error) {
		r, err := textOpen(env, name)
		if err != nil {
			return "", err
		}
		defer r.Close()
		h := newHash()
		if err := textCopy(ctx, h, r); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	ok := true
	if !check {
		algo := strings.ToUpper(strings.TrimSuffix(cmd, "sum"))
		for _, name := range ops {
			s, err := sum(name)
			if err != nil {
				textFileErr(env, cmd, name, err)
				ok = false
				continue
			}
			if tag {
				fmt.Fprintf(env.Stdout, "%s (%s) = %s\n", algo, name, s)
			} else {
				fmt.Fprintf(env.Stdout, "%s %s%s\n", s, marker, name)
			}
		}
		return textStatus(ok)
	}
	failed, unreadable, malformed := 0, 0, 0
	for _, list := range ops {
		// The check file is read a line at a time, each checked as read.
		r, err := textOpen(env, list)
		if err != nil {
			textFileErr(env, cmd, list, err)
			ok = false
			continue
		}
		lines := newTextLineReader(ctx, env, r, '\n')
		valid := 0
		for l, _, more := lines.next(); more; l, _, more = lines.next() {
			want, name, good := strings.Cut(string(l), " ")
			if good && len(name) > 0 && (name[0] == ' ' || name[0] == '*') {
				name = name[1:]
			}
			if _, herr := hex.DecodeString(want); !good || herr != nil || len(want) != newHash().Size()*2 {
				malformed++
				continue
			}
			valid++
			got, err := sum(name)
			switch {
			case err != nil && ignoreMissing:
			case err != nil:
				unreadable++
				textFileErr(env, cmd, name, err)
				if !status {
					fmt.Fprintf(env.Stdout, "%s: FAILED open or read\n", name)
				}
			case got != strings.ToLower(want):
				failed++
				if !status {
					fmt.Fprintf(env.Stdout, "%s: FAILED\n", name)
				}
			default:
				if !status && !quiet {
					fmt.Fprintf(env.Stdout, "%s: OK\n", name)
				}
			}
		}
		r.Close()
		if lines.err != nil {
			env.Errorf(cmd, "%s: %v", list, lines.err)
			return 1
		}
		if ctx.Err() != nil {
			return 1
		}
		if valid == 0 {
			env.Errorf(cmd, "%s: no properly formatted checksum lines found", list)
			ok = false
		}
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	if !status {
		if malformed > 0 {
			env.Errorf(cmd, "WARNING: %d %s improperly formatted", malformed, plural(malformed, "line is", "lines are"))
		}
		if unreadable > 0 {
			env.Errorf(cmd, "WARNING: %d listed %s could not be read", unreadable, plural(unreadable, "file", "files"))
		}
		if failed > 0 {
			env.Errorf(cmd, "WARNING: %d computed %s did NOT match", failed, plural(failed, "checksum", "checksums"))
		}
	}
	return textStatus(ok && failed == 0 && unreadable == 0)
}

// odSpec is one output type: kind c (char), a (named char), x o d u
// (integers of size bytes).
type odSpec struct {
	kind byte
	size int
}

// width is the field width including the leading space, as GNU od.
func (s odSpec) width() int {
	switch s.kind {
	case 'c', 'a':
		return 4
	case 'x':
		return 1 + 2*s.size
	case 'o':
		return 1 + map[int]int{1: 3, 2: 6, 4: 11, 8: 22}[s.size]
	case 'u':
		return 1 + map[int]int{1: 3, 2: 5, 4: 10, 8: 20}[s.size]
	}
	return 1 + map[int]int{1: 4, 2: 6, 4: 11, 8: 20}[s.size]
}

func parseOdType(t string) ([]odSpec, bool) {
	var out []odSpec
	for t != "" {
		k := t[0]
		t = t[1:]
		switch k {
		case 'c', 'a':
			out = append(out, odSpec{k, 1})
			continue
		case 'x', 'o', 'd', 'u':
		default:
			return nil, false
		}
		size := map[byte]int{'d': 4, 'u': 4, 'x': 4, 'o': 4}[k]
		if t != "" {
			switch t[0] {
			case 'C':
				size, t = 1, t[1:]
			case 'S':
				size, t = 2, t[1:]
			case 'I':
				size, t = 4, t[1:]
			case 'L':
				size, t = 8, t[1:]
			default:
				i := 0
				for i < len(t) && t[i] >= '0' && t[i] <= '9' {
					i++
				}
				if i > 0 {
					size, _ = strconv.Atoi(t[:i])
					t = t[i:]
				}
			}
		}
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return nil, false
		}
		out = append(out, odSpec{k, size})
	}
	return out, true
}

var odNames = []string{"nul", "soh", "stx", "etx", "eot", "enq", "ack", "bel", "bs", "ht", "nl", "vt", "ff", "cr", "so", "si",
	"dle", "dc1", "dc2", "dc3", "dc4", "nak", "syn", "etb", "can", "em", "sub", "esc", "fs", "gs", "rs", "us", "sp"}

func (s odSpec) format(b []byte) string {
	switch s.kind {
	case 'c':
		switch c := b[0]; {
		case c == 0:
			return `\0`
		case strings.IndexByte("\a\b\f\n\r\t\v", c) >= 0:
			return `\` + string("abfnrtv"[strings.IndexByte("\a\b\f\n\r\t\v", c)])
		case c >= 32 && c < 127:
			return string(c)
		default:
			return fmt.Sprintf("%03o", c)
		}
	case 'a':
		c := b[0] & 0x7f
		switch {
		case c <= 32:
			return odNames[c]
		case c == 127:
			return "del"
		}
		return string(c)
	}
	var v uint64
	padded := make([]byte, 8)
	copy(padded, b)
	v = binary.LittleEndian.Uint64(padded)
	switch s.kind {
	case 'x':
		return fmt.Sprintf("%0*x", 2*s.size, v)
	case 'o':
		return fmt.Sprintf("%0*o", s.width()-1, v)
	case 'u':
		return strconv.FormatUint(v, 10)
	}
	shift := 64 - 8*s.size
	return strconv.FormatInt(int64(v<<shift)>>shift, 10)
}

// odShorthands are the traditional type options.
var odShorthands = map[string]odSpec{"a": {'a', 1}, "b": {'o', 1}, "c": {'c', 1}, "d": {'u', 2},
	"o": {'o', 2}, "x": {'x', 2}, "s": {'d', 2}, "i": {'d', 4}, "l": {'d', 8}}

func textOd(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "abcdiloxsv", withArg: "AtNjw",
		long: map[string]string{"--address-radix": "A=", "--format": "t=", "--read-bytes": "N=",
			"--skip-bytes": "j=", "--output-duplicates": "v", "--width": "w="}})
	if err != nil {
		return textUsage(env, "od", err, 1)
	}
	radix, verbose, limit, skip, width := byte('o'), false, int64(-1), int64(0), 16
	var specs []odSpec
	for _, o := range opts {
		switch o.Name {
		case "A":
			if o.Val != "d" && o.Val != "o" && o.Val != "x" && o.Val != "n" {
				env.Errorf("od", "invalid output address radix '%s'; it must be one character from [doxn]", o.Val)
				return 1
			}
			radix = o.Val[0]
		case "t":
			s, ok := parseOdType(o.Val)
			if !ok {
				env.Errorf("od", "invalid type string %s", textQuote(o.Val))
				return 1
			}
			specs = append(specs, s...)
		case "a", "b", "c", "d", "o", "x", "s", "i", "l":
			specs = append(specs, odShorthands[o.Name])
		case "v":
			verbose = true
		case "N", "j", "w":
			n, ok := textSize(o.Val)
			if !ok {
				env.Errorf("od", "invalid argument %s", textQuote(o.Val))
				return 1
			}
			switch o.Name {
			case "N":
				limit = n
			case "j":
				skip = n
			case "w":
				width = int(n)
			}
		}
	}
	if len(specs) == 0 {
		specs = []odSpec{{'o', 2}}
	}
	in := newTextConcat(ctx, env, "od", ops)
	_, _ = io.CopyN(io.Discard, in, skip) // a shorter input leaves nothing
	var r io.Reader = in
	if limit >= 0 {
		r = io.LimitReader(in, limit)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	// Every type's line is padded to the width of the widest one, the pad
	// spread over its fields as GNU od does, so columns line up.
	lineWidth := 0
	for _, s := range specs {
		lineWidth = max(lineWidth, width/s.size*s.width())
	}
	addr := func(off int64) string {
		switch radix {
		case 'd':
			return fmt.Sprintf("%07d", off)
		case 'x':
			return fmt.Sprintf("%06x", off)
		case 'n':
			return ""
		}
		return fmt.Sprintf("%07o", off)
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	// One block at a time, the previous one kept for the "*" of repeats.
	if err := env.grow(2 * int64(width)); err != nil {
		env.Errorf("od", "%v", err)
		return 1
	}
	buf, prev := make([]byte, width), make([]byte, 0, width)
	starred := false
	off := int64(0) // bytes before this block
	for {
		n, err := io.ReadFull(br, buf)
		if n == 0 || ctx.Err() != nil {
			break
		}
		block := buf[:n]
		if !verbose && len(prev) == width && n == width && bytes.Equal(block, prev) {
			if !starred {
				w.WriteString("*\n")
				starred = true
			}
			off += int64(n)
			continue
		}
		prev, starred = append(prev[:0], block...), false
		for k, s := range specs {
			if k == 0 {
				w.WriteString(addr(skip + off))
			} else {
				w.WriteString(strings.Repeat(" ", len(addr(0))))
			}
			fields := width / s.size
			pad := lineWidth - fields*s.width()
			remaining := pad
			for i, k := 0, fields; i < len(block); i, k = i+s.size, k-1 {
				next := pad * (k - 1) / fields
				f := s.format(block[i:min(len(block), i+s.size)])
				fmt.Fprintf(w, "%*s", s.width()+remaining-next, f)
				remaining = next
			}
			w.WriteByte('\n')
		}
		off += int64(n)
		if err != nil {
			break
		}
	}
	if radix != 'n' {
		w.WriteString(addr(skip+off) + "\n")
	}
	return textStatus(!in.failed)
}

func textFile(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "bLhi",
		long: map[string]string{"--brief": "b", "--dereference": "L", "--no-dereference": "h", "--mime": "i", "--mime-type": "--mime-type"}})
	if err != nil {
		return textUsage(env, "file", err, 1)
	}
	brief, follow, mime, charset := false, false, false, false
	for _, o := range opts {
		switch o.Name {
		case "b":
			brief = true
		case "L":
			follow = true
		case "h":
			follow = false
		case "i":
			mime, charset = true, true
		case "--mime-type":
			mime = true
		}
	}
	if len(ops) == 0 {
		fmt.Fprintln(env.Stderr, "Usage: file [-bchikLlNnprsvzZ0] [--apple] [--extension] [--mime-encoding] [--mime-type] [-e testname] [-F separator] [-f namefile] [-m magicfiles] file ...")
		return 1
	}
	longest := 0
	for _, n := range ops {
		longest = max(longest, len(n))
	}
	for _, name := range ops {
		desc := textDescribe(ctx, env, name, follow, mime)
		if mime && !charset {
			desc, _, _ = strings.Cut(desc, ";")
		}
		if brief {
			fmt.Fprintln(env.Stdout, desc)
		} else {
			fmt.Fprintf(env.Stdout, "%-*s %s\n", longest+1, name+":", desc)
		}
	}
	return 0
}

// textDescribe names a file's type the way file(1) does for the kinds
// agents meet: directories, links, text flavours, JSON, scripts and the
// common binary formats.
func textDescribe(ctx context.Context, env *Env, name string, follow, mime bool) string {
	abs := env.Abs(name)
	var st fs.FileInfo
	var err error
	if follow {
		st, err = env.FS.Stat(abs)
	} else {
		st, err = env.FS.Lstat(abs)
	}
	if err != nil {
		return fmt.Sprintf("cannot open `%s' (%s)", name, textStrerror(err))
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		t, _ := env.FS.Readlink(abs)
		if mime {
			return "inode/symlink"
		}
		return "symbolic link to " + t
	case st.IsDir():
		if mime {
			return "inode/directory"
		}
		return "directory"
	case st.Mode()&fs.ModeNamedPipe != 0:
		return "fifo (named pipe)"
	}
	data, end, err := fileHeader(ctx, env, name)
	if err != nil {
		return fmt.Sprintf("cannot open `%s' (%s)", name, textStrerror(err))
	}
	desc, mimeType := textMagic(data, end)
	if mime {
		return mimeType
	}
	return desc
}

// fileBytesMax is how much of a file file(1) reads (libmagic's bytes_max);
// fileEncodingMax how much of it its text checks look at (encoding_max).
const (
	fileBytesMax    = 7 << 20
	fileEncodingMax = 64 << 10
)

// fileHeader reads the first fileBytesMax bytes of name, charged to the
// budget, and the file's last 4 bytes (gzip's original size), reading
// through the rest of a longer file without holding it.
func fileHeader(ctx context.Context, env *Env, name string) (head, end []byte, err error) {
	r, err := textOpen(env, name)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	head, err = readAllCharged(ctx, env, io.LimitReader(r, fileBytesMax))
	if err != nil {
		return nil, nil, err
	}
	end = head[max(0, len(head)-4):]
	if len(head) < fileBytesMax || !bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		return head, end, nil
	}
	tail := &tailWriter{last: append([]byte(nil), end...)}
	if err := textCopy(ctx, tail, r); err != nil {
		return nil, nil, err
	}
	return head, tail.last, nil
}

// tailWriter keeps the last len(last) bytes written.
type tailWriter struct{ last []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	n := len(t.last)
	t.last = append(t.last, p[max(0, len(p)-n):]...)
	t.last = t.last[len(t.last)-n:]
	return len(p), nil
}

// textMagic describes a file from its first bytes (data) and its last 4
// (end).
func textMagic(data, end []byte) (desc, mimeType string) {
	switch {
	case len(data) == 0:
		return "empty", "inode/x-empty"
	case bytes.HasPrefix(data, []byte("\x7fELF")) && len(data) >= 20:
		return textELF(data), "application/x-executable"
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}) && len(data) >= 18:
		return textGzip(data, end), "application/gzip"
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) && len(data) >= 29 && string(data[12:16]) == "IHDR":
		w, h := binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
		depth, color, interlace := data[24], data[25], data[28]
		colors := map[byte]string{0: "grayscale", 2: "RGB", 3: "colormap", 4: "gray+alpha", 6: "RGBA"}[color]
		il := "non-interlaced"
		if interlace == 1 {
			il = "interlaced"
		}
		return fmt.Sprintf("PNG image data, %d x %d, %d-bit/color %s, %s", w, h, depth, colors, il), "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "JPEG image data", "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		return fmt.Sprintf("GIF image data, version %s", data[3:6]), "image/gif"
	case bytes.HasPrefix(data, []byte("%PDF-")):
		v := strings.TrimSpace(strings.SplitN(string(data[5:min(len(data), 16)]), "\n", 2)[0])
		return "PDF document, version " + v, "application/pdf"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && len(data) >= 30:
		return "Zip archive data", "application/zip"
	case len(data) >= 262 && string(data[257:262]) == "ustar":
		return "POSIX tar archive", "application/x-tar"
	}
	// The text checks look at the start only, as libmagic's do.
	text := data[:min(len(data), fileEncodingMax)]
	enc, mimeEnc, ok := textEncoding(text)
	if !ok {
		return "data", "application/octet-stream"
	}
	trimmed := bytes.TrimSpace(data)
	kind, mimeType := "", "text/plain"
	switch {
	case bytes.HasPrefix(data, []byte("#!")):
		line := string(data[2:min(len(data), bytes.IndexByte(append(data, '\n'), '\n'))])
		fields := strings.Fields(line)
		interp := ""
		if len(fields) > 0 {
			interp = fields[0][strings.LastIndexByte(fields[0], '/')+1:]
			if interp == "env" && len(fields) > 1 {
				interp = fields[1]
			}
		}
		switch {
		case interp == "sh":
			kind, mimeType = "POSIX shell script, ", "text/x-shellscript"
		case interp == "bash":
			kind, mimeType = "Bourne-Again shell script, ", "text/x-shellscript"
		case strings.HasPrefix(interp, "python"):
			kind, mimeType = "Python script, ", "text/x-script.python"
		case interp == "node":
			kind, mimeType = "Node.js script, ", "application/javascript"
		case strings.HasPrefix(interp, "perl"):
			kind, mimeType = "Perl script, ", "text/x-perl"
		default:
			kind = "a " + line + " script, "
		}
	case (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed):
		return "JSON text data", "application/json"
	case bytes.HasPrefix(trimmed, []byte("<?xml")):
		kind, mimeType = "XML 1.0 document, ", "text/xml"
	case bytes.HasPrefix(bytes.ToLower(trimmed), []byte("<!doctype html")) || bytes.HasPrefix(bytes.ToLower(trimmed), []byte("<html")):
		kind, mimeType = "HTML document, ", "text/html"
	}
	desc = kind + enc
	if strings.HasSuffix(kind, "script, ") {
		desc += " executable" // what file(1) says of any #! script
	}
	var notes []string
	if bytes.Contains(text, []byte("\r\n")) {
		notes = append(notes, "with CRLF line terminators")
	} else if !bytes.Contains(text, []byte("\n")) {
		notes = append(notes, "with no line terminators")
	}
	longest, cur := 0, 0
	for _, c := range text {
		if c == '\n' {
			longest, cur = max(longest, cur), 0
			continue
		}
		cur++
	}
	if longest = max(longest, cur); longest > 300 {
		notes = append([]string{fmt.Sprintf("with very long lines (%d)", longest)}, notes...)
	}
	if len(notes) > 0 {
		desc += ", " + strings.Join(notes, ", ")
	}
	return desc, mimeType + "; charset=" + mimeEnc
}

// textEncoding tells ASCII from UTF-8 text; ok is false for binary data.
func textEncoding(data []byte) (desc, mime string, ok bool) {
	ascii := true
	for _, c := range data {
		if c == 0 || c < 32 && strings.IndexByte("\a\b\t\n\v\f\r\x1b", c) < 0 || c == 127 {
			return "", "", false
		}
		if c >= 128 {
			ascii = false
		}
	}
	if ascii {
		return "ASCII text", "us-ascii", true
	}
	if utf8.Valid(data) {
		return "Unicode text, UTF-8 text", "utf-8", true
	}
	return "ISO-8859 text", "iso-8859-1", true
}

func textELF(data []byte) string {
	bits := map[byte]string{1: "32-bit", 2: "64-bit"}[data[4]]
	var order binary.ByteOrder = binary.LittleEndian
	endian := "LSB"
	if data[5] == 2 {
		order, endian = binary.BigEndian, "MSB"
	}
	typ := map[uint16]string{1: "relocatable", 2: "executable", 3: "shared object", 4: "core file"}[order.Uint16(data[16:])]
	machine := map[uint16]string{3: "Intel 80386", 0x3e: "x86-64", 0xb7: "ARM aarch64", 0x28: "ARM", 0xf3: "UCB RISC-V"}[order.Uint16(data[18:])]
	s := fmt.Sprintf("ELF %s %s %s", bits, endian, typ)
	if machine != "" {
		s += ", " + machine
	}
	return s + ", version 1 (SYSV)"
}

func textGzip(data, end []byte) string {
	s := "gzip compressed data"
	flags := data[3]
	if flags&0x08 != 0 {
		rest := data[10:]
		if flags&0x04 != 0 && len(rest) >= 2 {
			rest = rest[min(len(rest), 2+int(binary.LittleEndian.Uint16(rest))):]
		}
		if end := bytes.IndexByte(rest, 0); end >= 0 {
			s += fmt.Sprintf(", was \"%s\"", rest[:end])
		}
	}
	if mtime := binary.LittleEndian.Uint32(data[4:]); mtime != 0 {
		s += ", last modified: " + time.Unix(int64(mtime), 0).UTC().Format("Mon Jan _2 15:04:05 2006")
	}
	if data[9] == 3 {
		s += ", from Unix"
	}
	return s + fmt.Sprintf(", original size modulo 2^32 %d", binary.LittleEndian.Uint32(end))
}
