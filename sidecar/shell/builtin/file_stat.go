package builtin

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
)

func init() {
	register("stat", fileStatCmd)
	register("tree", fileTree)
	register("du", fileDu)
}

func fileStatCmd(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "Ltf", withArg: "c", long: map[string]string{
		"--dereference": "L", "--format": "c=", "--printf": "--printf=", "--terse": "t",
	}})
	if err != nil {
		return textUsage(env, "stat", err, 1)
	}
	follow, format, printf := false, "", false
	for _, o := range opts {
		switch o.Name {
		case "L":
			follow = true
		case "c":
			format = o.Val + "\n"
		case "--printf":
			format, printf = o.Val, true
		case "t":
			format = "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %W %o\n"
		}
	}
	if len(ops) == 0 {
		return textUsage(env, "stat", fmt.Errorf("missing operand"), 1)
	}
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	status := 0
	for _, name := range ops {
		abs := env.Abs(name)
		var fi fs.FileInfo
		if follow {
			fi, err = env.FS.Stat(abs)
		} else {
			fi, err = env.FS.Lstat(abs)
		}
		if err != nil {
			out.Flush()
			textFileErr(env, "stat", "cannot statx "+textQuoteGNU(name), err)
			status = 1
			continue
		}
		target := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ = env.FS.Readlink(abs)
		}
		if format == "" {
			out.WriteString(statDefault(name, fi, target))
			continue
		}
		f := format
		if printf {
			f = statEscapes(f)
		}
		out.WriteString(statFormat(f, name, fi, target))
	}
	return status
}

func statType(fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character special file"
	case m&fs.ModeDevice != 0:
		return "block special file"
	case fi.Size() == 0:
		return "regular empty file"
	}
	return "regular file"
}

func statTimeString(ts syscall.Timespec) string {
	return statTime(ts).Format("2006-01-02 15:04:05.000000000 -0700")
}

func statDefault(name string, fi fs.FileInfo, target string) string {
	st := fileStat(fi)
	var b strings.Builder
	shown := name
	if target != "" {
		shown = name + " -> " + target
	}
	fmt.Fprintf(&b, "  File: %s\n", shown)
	fmt.Fprintf(&b, "  Size: %-10d\tBlocks: %-10d IO Block: %-6d %s\n", fi.Size(), st.Blocks, st.Blksize, statType(fi))
	dev := fmt.Sprintf("%d,%d", st.Dev>>8, st.Dev&0xff)
	fmt.Fprintf(&b, "Device: %s\tInode: %-11d Links: %d", dev, st.Ino, st.Nlink)
	if fi.Mode()&fs.ModeDevice != 0 {
		fmt.Fprintf(&b, "\tDevice type: %d,%d", st.Rdev>>8, st.Rdev&0xff)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Access: (%04o/%s)  Uid: (%5d/%8s)   Gid: (%5d/%8s)\n", fileModeBits(fi.Mode()),
		fileModeString(fi.Mode()), st.Uid, fileUser(st.Uid), st.Gid, fileUser(st.Gid))
	fmt.Fprintf(&b, "Access: %s\nModify: %s\nChange: %s\n Birth: -\n",
		statTimeString(st.Atim), statTimeString(st.Mtim), statTimeString(st.Ctim))
	return b.String()
}

// statEscapes interprets --printf's backslash escapes.
func statEscapes(s string) string {
	r := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`, `\"`, `"`, `\0`, "\x00", `\r`, "\r", `\a`, "\a")
	return r.Replace(s)
}

func statFormat(f, name string, fi fs.FileInfo, target string) string {
	st := fileStat(fi)
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			b.WriteByte(f[i])
			continue
		}
		// Optional width/flags between % and the directive.
		j := i + 1
		for j < len(f) && strings.IndexByte("-0123456789.#+ ", f[j]) >= 0 {
			j++
		}
		if j == len(f) {
			b.WriteString(f[i:])
			break
		}
		spec := f[i+1 : j]
		var v string
		switch f[j] {
		case '%':
			v = "%"
		case 'a':
			v = strconv.FormatUint(uint64(fileModeBits(fi.Mode())), 8)
		case 'A':
			v = fileModeString(fi.Mode())
		case 'b':
			v = strconv.FormatInt(st.Blocks, 10)
		case 'B':
			v = "512"
		case 'd':
			v = strconv.FormatUint(st.Dev, 10)
		case 'D':
			v = strconv.FormatUint(st.Dev, 16)
		case 'f':
			v = strconv.FormatUint(uint64(st.Mode), 16)
		case 'F':
			v = statType(fi)
		case 'g':
			v = strconv.FormatUint(uint64(st.Gid), 10)
		case 'G':
			v = fileUser(st.Gid)
		case 'h':
			v = strconv.FormatUint(uint64(st.Nlink), 10)
		case 'i':
			v = strconv.FormatUint(st.Ino, 10)
		case 'm':
			v = "/"
		case 'n':
			v = name
		case 'N':
			v = "'" + name + "'"
			if target != "" {
				v += " -> '" + target + "'"
			}
		case 'o':
			v = strconv.FormatInt(st.Blksize, 10)
		case 's':
			v = strconv.FormatInt(fi.Size(), 10)
		case 't':
			v = strconv.FormatUint(st.Rdev>>8, 16)
		case 'T':
			v = strconv.FormatUint(st.Rdev&0xff, 16)
		case 'u':
			v = strconv.FormatUint(uint64(st.Uid), 10)
		case 'U':
			v = fileUser(st.Uid)
		case 'w':
			v = "-"
		case 'W':
			v = "0"
		case 'x':
			v = statTimeString(st.Atim)
		case 'X':
			v = strconv.FormatInt(st.Atim.Sec, 10)
		case 'y':
			v = statTimeString(st.Mtim)
		case 'Y':
			v = strconv.FormatInt(st.Mtim.Sec, 10)
		case 'z':
			v = statTimeString(st.Ctim)
		case 'Z':
			v = strconv.FormatInt(st.Ctim.Sec, 10)
		default:
			v = "?"
		}
		if spec != "" {
			if n, err := strconv.Atoi(strings.TrimLeft(spec, "-0#+ ")); err == nil {
				if strings.HasPrefix(spec, "-") {
					v = fmt.Sprintf("%-*s", n, v)
				} else if strings.HasPrefix(spec, "0") {
					v = strings.Repeat("0", max(0, n-len(v))) + v
				} else {
					v = fmt.Sprintf("%*s", n, v)
				}
			}
		}
		b.WriteString(v)
		i = j
	}
	return b.String()
}

type treeWalker struct {
	env            *Env
	ctx            context.Context
	out            *bufio.Writer
	all, dirsOnly  bool
	full, classify bool
	maxLevel       int
	ignore         []string
	dirs, files    int
}

func fileTree(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "adfFlC", withArg: "LI", long: map[string]string{
		"--noreport": "--noreport", "--dirsfirst": "--dirsfirst", "--charset": "--charset=",
	}})
	if err != nil {
		return textUsage(env, "tree", err, 2)
	}
	t := &treeWalker{env: env, ctx: ctx, out: bufio.NewWriter(env.Stdout)}
	defer t.out.Flush()
	report := true
	for _, o := range opts {
		switch o.Name {
		case "a":
			t.all = true
		case "d":
			t.dirsOnly = true
		case "f":
			t.full = true
		case "F":
			t.classify = true
		case "L":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 1 {
				env.Errorf("tree", "Invalid level, must be greater than 0.")
				return 2
			}
			t.maxLevel = n
		case "I":
			t.ignore = append(t.ignore, strings.Split(o.Val, "|")...)
		case "--noreport":
			report = false
		}
	}
	if len(ops) == 0 {
		ops = []string{"."}
	}
	status := 0
	for _, name := range ops {
		abs := env.Abs(name)
		fi, err := env.FS.Stat(abs)
		if err != nil || !fi.IsDir() {
			fmt.Fprintf(t.out, "%s  [error opening dir]\n", name)
			status = 2
			continue
		}
		t.out.WriteString(name + "\n")
		t.walk(name, abs, "", 1)
	}
	if report {
		fmt.Fprintf(t.out, "\n%d director%s", t.dirs, map[bool]string{true: "y", false: "ies"}[t.dirs == 1])
		if !t.dirsOnly {
			fmt.Fprintf(t.out, ", %d file%s", t.files, map[bool]string{true: "", false: "s"}[t.files == 1])
		}
		t.out.WriteString("\n")
	}
	return status
}

func (t *treeWalker) walk(name, abs, prefix string, level int) {
	if t.maxLevel > 0 && level > t.maxLevel || t.ctx.Err() != nil {
		return
	}
	ents, err := t.env.FS.ReadDir(abs)
	if err != nil {
		return
	}
	type item struct {
		name string
		fi   fs.FileInfo
	}
	var items []item
	for _, e := range ents {
		n := e.Name()
		if !t.all && strings.HasPrefix(n, ".") {
			continue
		}
		if textGlobAny(t.ignore, n) {
			continue
		}
		fi, err := t.env.FS.Lstat(path.Join(abs, n))
		if err != nil {
			continue
		}
		isDir := fi.IsDir()
		if fi.Mode()&fs.ModeSymlink != 0 {
			if sfi, err := t.env.FS.Stat(path.Join(abs, n)); err == nil && sfi.IsDir() {
				isDir = true
			}
		}
		if t.dirsOnly && !isDir {
			continue
		}
		items = append(items, item{n, fi})
	}
	for i, it := range items {
		last := i == len(items)-1
		branch, indent := "├── ", "│   "
		if last {
			branch, indent = "└── ", "    "
		}
		shown := it.name
		if t.full {
			shown = fileJoin(name, it.name)
		}
		if t.classify && it.fi.IsDir() {
			shown += "/"
		}
		p := path.Join(abs, it.name)
		if it.fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := t.env.FS.Readlink(p)
			shown += " -> " + target
			if sfi, err := t.env.FS.Stat(p); err == nil && sfi.IsDir() {
				t.dirs++
			} else {
				t.files++
			}
			fmt.Fprintf(t.out, "%s%s%s\n", prefix, branch, shown)
			continue
		}
		fmt.Fprintf(t.out, "%s%s%s\n", prefix, branch, shown)
		if it.fi.IsDir() {
			t.dirs++
			t.walk(fileJoin(name, it.name), p, prefix+indent, level+1)
		} else {
			t.files++
		}
	}
}

type duWalker struct {
	env       *Env
	ctx       context.Context
	out       *bufio.Writer
	all       bool
	human     bool
	apparent  bool
	blockSize int64
	maxDepth  int // -1: unlimited
	summarize bool
	seen      map[uint64]bool
	status    int
}

func fileDu(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "ashcbkmLxl", withArg: "dB", long: map[string]string{
		"--all": "a", "--summarize": "s", "--human-readable": "h", "--total": "c", "--bytes": "b",
		"--max-depth": "d=", "--apparent-size": "--apparent-size", "--block-size": "B=",
	}})
	if err != nil {
		return textUsage(env, "du", err, 1)
	}
	d := &duWalker{env: env, ctx: ctx, out: bufio.NewWriter(env.Stdout), blockSize: 1024, maxDepth: -1,
		seen: map[uint64]bool{}}
	defer d.out.Flush()
	total := false
	for _, o := range opts {
		switch o.Name {
		case "a":
			d.all = true
		case "s":
			d.summarize = true
		case "h":
			d.human = true
		case "c":
			total = true
		case "b":
			d.apparent, d.blockSize = true, 1
		case "k":
			d.blockSize = 1024
		case "m":
			d.blockSize = 1 << 20
		case "--apparent-size":
			d.apparent = true
		case "B":
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSuffix(o.Val, "B"), "i"), 10, 64)
			if err != nil {
				switch strings.ToUpper(o.Val[:1]) {
				case "K":
					n = 1024
				case "M":
					n = 1 << 20
				case "G":
					n = 1 << 30
				default:
					env.Errorf("du", "invalid --block-size argument %s", textQuoteGNU(o.Val))
					return 1
				}
			}
			d.blockSize = n
		case "d":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				env.Errorf("du", "invalid maximum depth %s", textQuoteGNU(o.Val))
				return 1
			}
			d.maxDepth = n
		}
	}
	if d.summarize {
		d.maxDepth = 0
	}
	if len(ops) == 0 {
		ops = []string{"."}
	}
	var sum int64
	for _, name := range ops {
		sum += d.walk(name, env.Abs(name), 0, true)
	}
	if total {
		d.print(sum, "total")
	}
	return d.status
}

func (d *duWalker) size(fi fs.FileInfo) int64 {
	if d.apparent {
		return fi.Size()
	}
	return fileStat(fi).Blocks * 512
}

func (d *duWalker) print(bytes int64, name string) {
	var s string
	switch {
	case d.human:
		s = fileHuman(bytes)
	default:
		s = strconv.FormatInt((bytes+d.blockSize-1)/d.blockSize, 10)
	}
	fmt.Fprintf(d.out, "%s\t%s\n", s, name)
}

func (d *duWalker) walk(name, abs string, depth int, top bool) int64 {
	if d.ctx.Err() != nil {
		d.status = 1
		return 0
	}
	var fi fs.FileInfo
	var err error
	if top {
		fi, err = d.env.FS.Stat(abs)
	} else {
		fi, err = d.env.FS.Lstat(abs)
	}
	if err != nil {
		d.out.Flush()
		textFileErr(d.env, "du", "cannot access "+textQuoteGNU(name), err)
		d.status = 1
		return 0
	}
	st := fileStat(fi)
	if st.Nlink > 1 && !fi.IsDir() {
		if d.seen[st.Ino] {
			return 0
		}
		d.seen[st.Ino] = true
	}
	n := d.size(fi)
	if fi.IsDir() {
		ents, err := d.env.FS.ReadDir(abs)
		if err != nil {
			d.out.Flush()
			textFileErr(d.env, "du", "cannot read directory "+textQuoteGNU(name), err)
			d.status = 1
		}
		for _, e := range ents {
			n += d.walk(fileJoin(name, e.Name()), path.Join(abs, e.Name()), depth+1, false)
		}
	}
	if (fi.IsDir() || d.all || top) && (d.maxDepth < 0 || depth <= d.maxDepth) {
		d.print(n, name)
	}
	return n
}
