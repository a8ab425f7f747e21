package builtin

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func init() {
	register("ls", fileLs)
}

// lsEntry is one name ls prints.
type lsEntry struct {
	name   string // as printed
	abs    string
	fi     fs.FileInfo
	target string // symlink target, for -l
}

type lister struct {
	env                             *Env
	ctx                             context.Context
	out                             *bufio.Writer
	all, almost, long, recursive    bool
	dirsAsFiles, human, inode       bool
	classify, slash, reverse, deref bool
	numeric, noOwner, noGroup, blks bool
	fullTime, unsorted              bool
	sortBy                          byte // 'n'ame, 't'ime, 'S'ize, 'X' extension
	status                          int
	now                             time.Time
	// dirs is the directories being listed by -R, outermost first.
	dirs []fs.FileInfo
}

func fileLs(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "aAlRdhiFprtSLn1goGsUfCxXmcu", long: map[string]string{
		"--all": "a", "--almost-all": "A", "--recursive": "R", "--directory": "d", "--human-readable": "h",
		"--inode": "i", "--classify": "F", "--reverse": "r", "--dereference": "L", "--numeric-uid-gid": "n",
		"--size": "s", "--color": "--color?", "--full-time": "--full-time", "--group-directories-first": "--gdf",
		"--sort": "--sort=", "--time-style": "--time-style=", "--no-group": "G", "--indicator-style": "--is=",
	}})
	if err != nil {
		return textUsage(env, "ls", err, 2)
	}
	l := &lister{env: env, ctx: ctx, sortBy: 'n', now: time.Now()}
	for _, o := range opts {
		switch o.Name {
		case "a":
			l.all = true
		case "A":
			l.almost = true
		case "l":
			l.long = true
		case "R":
			l.recursive = true
		case "d":
			l.dirsAsFiles = true
		case "h":
			l.human = true
		case "i":
			l.inode = true
		case "F":
			l.classify = true
		case "p":
			l.slash = true
		case "r":
			l.reverse = true
		case "t":
			l.sortBy = 't'
		case "S":
			l.sortBy = 'S'
		case "X":
			l.sortBy = 'X'
		case "U":
			l.unsorted = true
		case "f":
			l.unsorted, l.all = true, true
		case "L":
			l.deref = true
		case "n":
			l.long, l.numeric = true, true
		case "g":
			l.long, l.noOwner = true, true
		case "o":
			l.long, l.noGroup = true, true
		case "G":
			l.noGroup = true
		case "s":
			l.blks = true
		case "--full-time":
			l.long, l.fullTime = true, true
		case "--time-style":
			l.fullTime = strings.Contains(o.Val, "full")
		case "--sort":
			switch o.Val {
			case "time":
				l.sortBy = 't'
			case "size":
				l.sortBy = 'S'
			case "extension":
				l.sortBy = 'X'
			case "none":
				l.unsorted = true
			}
		case "--is":
			l.slash = o.Val == "slash"
			l.classify = o.Val == "classify"
		}
	}
	l.out = bufio.NewWriterSize(env.Stdout, 32<<10)
	defer l.out.Flush()
	if len(ops) == 0 {
		ops = []string{"."}
	}
	var files []lsEntry
	var dirs []lsEntry
	for _, name := range ops {
		abs := env.Abs(name)
		fi, err := env.FS.Lstat(abs)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 && (l.deref || !l.long && !l.dirsAsFiles && !l.classify) {
			if sfi, serr := env.FS.Stat(abs); serr == nil {
				fi = sfi
			} else if l.deref {
				err = serr
			}
		}
		if err != nil {
			l.out.Flush()
			textFileErr(env, "ls", "cannot access "+textQuoteGNU(name), err)
			l.status = 2
			continue
		}
		e := lsEntry{name: name, abs: abs, fi: fi}
		if fi.IsDir() && !l.dirsAsFiles {
			dirs = append(dirs, e)
		} else {
			files = append(files, l.withTarget(e))
		}
	}
	l.sort(files)
	l.sort(dirs)
	l.print(files, false)
	header := len(ops) > 1 || l.recursive
	for i, d := range dirs {
		if i > 0 || len(files) > 0 {
			l.out.WriteString("\n")
		}
		l.listDir(d, header)
	}
	return l.status
}

func (l *lister) withTarget(e lsEntry) lsEntry {
	if l.long && e.fi.Mode()&fs.ModeSymlink != 0 {
		e.target, _ = l.env.FS.Readlink(e.abs)
	}
	return e
}

func (l *lister) listDir(d lsEntry, header bool) {
	if l.ctx.Err() != nil {
		l.status = 2
		return
	}
	if header {
		fmt.Fprintf(l.out, "%s:\n", d.name)
	}
	ents, err := l.env.FS.ReadDir(d.abs)
	if err != nil {
		l.out.Flush()
		textFileErr(l.env, "ls", "cannot open directory "+textQuoteGNU(d.name), err)
		l.status = 2
		return
	}
	var list []lsEntry
	if l.all {
		for _, dot := range []string{".", ".."} {
			abs := path.Join(d.abs, dot)
			if fi, err := l.env.FS.Stat(abs); err == nil {
				list = append(list, lsEntry{name: dot, abs: abs, fi: fi})
			}
		}
	}
	for _, de := range ents {
		n := de.Name()
		if strings.HasPrefix(n, ".") && !l.all && !l.almost {
			continue
		}
		abs := path.Join(d.abs, n)
		var fi fs.FileInfo
		if l.deref {
			fi, err = l.env.FS.Stat(abs)
		}
		if fi == nil || err != nil {
			fi, err = l.env.FS.Lstat(abs)
		}
		if err != nil {
			continue
		}
		list = append(list, l.withTarget(lsEntry{name: n, abs: abs, fi: fi}))
	}
	l.sort(list)
	l.print(list, true)
	if !l.recursive {
		return
	}
	l.dirs = append(l.dirs, d.fi)
	defer func() { l.dirs = l.dirs[:len(l.dirs)-1] }()
	for _, e := range list {
		if e.name == "." || e.name == ".." || !e.fi.IsDir() {
			continue
		}
		name := fileJoin(d.name, e.name)
		if slices.ContainsFunc(l.dirs, func(a fs.FileInfo) bool { return fileSame(a, e.fi) }) {
			// A link (-L) back to a directory being listed: a cycle.
			l.out.Flush()
			l.env.Errorf("ls", "%s: not listing already-listed directory", name)
			l.status = 2
			continue
		}
		l.out.WriteString("\n")
		l.listDir(lsEntry{name: name, abs: e.abs, fi: e.fi}, true)
	}
}

func (l *lister) sort(list []lsEntry) {
	if l.unsorted {
		return
	}
	less := func(a, b lsEntry) bool { return a.name < b.name }
	switch l.sortBy {
	case 't':
		less = func(a, b lsEntry) bool {
			if !a.fi.ModTime().Equal(b.fi.ModTime()) {
				return a.fi.ModTime().After(b.fi.ModTime())
			}
			return a.name < b.name
		}
	case 'S':
		less = func(a, b lsEntry) bool {
			if a.fi.Size() != b.fi.Size() {
				return a.fi.Size() > b.fi.Size()
			}
			return a.name < b.name
		}
	case 'X':
		less = func(a, b lsEntry) bool {
			ea, eb := path.Ext(a.name), path.Ext(b.name)
			if ea != eb {
				return ea < eb
			}
			return a.name < b.name
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if l.reverse {
			return less(list[j], list[i])
		}
		return less(list[i], list[j])
	})
}

// blocks1K is the 1024-byte block count ls -s and du report.
func blocks1K(fi fs.FileInfo) int64 {
	return (fileStat(fi).Blocks*512 + 1023) / 1024
}

func (l *lister) suffix(fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case m.IsDir() && (l.classify || l.slash):
		return "/"
	case !l.classify:
		return ""
	case m&fs.ModeSymlink != 0:
		if l.long {
			return ""
		}
		return "@"
	case m&fs.ModeNamedPipe != 0:
		return "|"
	case m&fs.ModeSocket != 0:
		return "="
	case m.IsRegular() && m&0o111 != 0:
		return "*"
	}
	return ""
}

func (l *lister) print(list []lsEntry, isDir bool) {
	if !l.long {
		for _, e := range list {
			if l.inode {
				fmt.Fprintf(l.out, "%d ", fileStat(e.fi).Ino)
			}
			if l.blks {
				fmt.Fprintf(l.out, "%s ", l.size1K(blocks1K(e.fi)))
			}
			l.out.WriteString(e.name + l.suffix(e.fi) + "\n")
		}
		return
	}
	var wLinks, wOwner, wGroup, wSize, wIno, wBlk int
	var total int64
	rows := make([][6]string, len(list))
	for i, e := range list {
		st := fileStat(e.fi)
		total += blocks1K(e.fi)
		owner, group := fileUser(st.Uid), fileUser(st.Gid)
		if l.numeric {
			owner, group = strconv.FormatUint(uint64(st.Uid), 10), strconv.FormatUint(uint64(st.Gid), 10)
		}
		size := strconv.FormatInt(e.fi.Size(), 10)
		if e.fi.Mode()&fs.ModeDevice != 0 {
			size = fmt.Sprintf("%d, %d", (st.Rdev>>8)&0xfff, st.Rdev&0xff|(st.Rdev>>12)&0xfff00)
		} else if l.human {
			size = fileHuman(e.fi.Size())
		}
		rows[i] = [6]string{strconv.FormatUint(uint64(st.Nlink), 10), owner, group, size,
			strconv.FormatUint(st.Ino, 10), l.size1K(blocks1K(e.fi))}
		wLinks = max(wLinks, len(rows[i][0]))
		wOwner = max(wOwner, len(owner))
		wGroup = max(wGroup, len(group))
		wSize = max(wSize, len(size))
		wIno = max(wIno, len(rows[i][4]))
		wBlk = max(wBlk, len(rows[i][5]))
	}
	if isDir {
		fmt.Fprintf(l.out, "total %s\n", l.size1K(total))
	}
	for i, e := range list {
		r := rows[i]
		if l.inode {
			fmt.Fprintf(l.out, "%*s ", wIno, r[4])
		}
		if l.blks {
			fmt.Fprintf(l.out, "%*s ", wBlk, r[5])
		}
		fmt.Fprintf(l.out, "%s %*s ", fileModeString(e.fi.Mode()), wLinks, r[0])
		if !l.noOwner {
			fmt.Fprintf(l.out, "%-*s ", wOwner, r[1])
		}
		if !l.noGroup {
			fmt.Fprintf(l.out, "%-*s ", wGroup, r[2])
		}
		fmt.Fprintf(l.out, "%*s %s %s%s", wSize, r[3], l.date(e.fi.ModTime()), e.name, l.suffix(e.fi))
		if e.target != "" {
			fmt.Fprintf(l.out, " -> %s", e.target)
		}
		l.out.WriteString("\n")
	}
}

func (l *lister) size1K(n int64) string {
	if l.human {
		return fileHuman(n * 1024)
	}
	return strconv.FormatInt(n, 10)
}

// date is ls -l's timestamp: the time for files from the last six
// months, the year otherwise.
func (l *lister) date(t time.Time) string {
	if l.fullTime {
		return t.Format("2006-01-02 15:04:05.000000000 -0700")
	}
	const halfYear = 365 * 24 * time.Hour / 2
	if d := l.now.Sub(t); d < halfYear && d > -time.Minute {
		return t.Format("Jan _2 15:04")
	}
	return t.Format("Jan _2  2006")
}
