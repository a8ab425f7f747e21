package builtin

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func init() {
	register("cat", fileCat)
	register("mkdir", fileMkdir)
	register("rmdir", fileRmdir)
	register("touch", fileTouch)
	register("rm", fileRm)
	register("ln", fileLn)
	register("readlink", fileReadlink)
	register("realpath", fileRealpath)
	register("sleep", fileSleep)
	register("mktemp", fileMktemp)
}

func fileCat(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "nbsETAvtue", long: map[string]string{
		"--number": "n", "--number-nonblank": "b", "--squeeze-blank": "s", "--show-ends": "E",
		"--show-tabs": "T", "--show-all": "A", "--show-nonprinting": "v",
	}})
	if err != nil {
		return textUsage(env, "cat", err, 1)
	}
	var number, nonblank, squeeze, ends, tabs, nonprint bool
	for _, o := range opts {
		switch o.Name {
		case "n":
			number = true
		case "b":
			nonblank = true
		case "s":
			squeeze = true
		case "E":
			ends = true
		case "T":
			tabs = true
		case "v":
			nonprint = true
		case "A":
			nonprint, ends, tabs = true, true, true
		case "e":
			nonprint, ends = true, true
		case "t":
			nonprint, tabs = true, true
		}
	}
	plain := !number && !nonblank && !squeeze && !ends && !tabs && !nonprint
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	status := 0
	out := bufio.NewWriterSize(env.Stdout, 64<<10)
	defer out.Flush()
	line, blanks := 0, 0
	for _, name := range ops {
		if ctx.Err() != nil {
			return 1
		}
		r, err := textOpen(env, name)
		if err != nil {
			out.Flush()
			textFileErr(env, "cat", name, err)
			status = 1
			continue
		}
		if plain {
			err = textCopy(ctx, out, r)
		} else {
			br := bufio.NewReader(r)
			for ctx.Err() == nil {
				s, rerr := br.ReadString('\n')
				if s == "" && rerr != nil {
					if !errors.Is(rerr, io.EOF) {
						err = rerr
					}
					break
				}
				body, nl := strings.CutSuffix(s, "\n")
				if body == "" && nl {
					blanks++
					if squeeze && blanks > 1 {
						continue
					}
				} else {
					blanks = 0
				}
				if nonblank && body != "" || number && !nonblank {
					line++
					fmt.Fprintf(out, "%6d\t", line)
				}
				if tabs {
					body = strings.ReplaceAll(body, "\t", "^I")
				}
				if nonprint {
					body = catNonprint(body)
				}
				out.WriteString(body)
				if nl {
					if ends {
						out.WriteByte('$')
					}
					out.WriteByte('\n')
				}
			}
		}
		r.Close()
		if err != nil {
			out.Flush()
			textFileErr(env, "cat", name, err)
			status = 1
		}
	}
	return status
}

// catNonprint is cat -v's ^X and M- notation.
func catNonprint(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 128 {
			b.WriteString("M-")
			c -= 128
		}
		switch {
		case c == '\t':
			b.WriteByte(c)
		case c < 32:
			b.WriteByte('^')
			b.WriteByte(c + 64)
		case c == 127:
			b.WriteString("^?")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func fileMkdir(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "pv", withArg: "m", long: map[string]string{
		"--parents": "p", "--verbose": "v", "--mode": "m=",
	}})
	if err != nil {
		return textUsage(env, "mkdir", err, 1)
	}
	if len(ops) == 0 {
		return textUsage(env, "mkdir", fmt.Errorf("missing operand"), 1)
	}
	var parents, verbose, setMode bool
	perm := fs.FileMode(0o755)
	for _, o := range opts {
		switch o.Name {
		case "p":
			parents = true
		case "v":
			verbose = true
		case "m":
			m, err := fileParseMode(o.Val, 0o777, true)
			if err != nil {
				env.Errorf("mkdir", "invalid mode %s", textQuoteGNU(o.Val))
				return 1
			}
			perm, setMode = m, true
		}
	}
	status := 0
	for _, name := range ops {
		abs := env.Abs(name)
		if parents {
			// Report each directory created, as mkdir -pv does.
			var missing []string
			for p := abs; ; p = path.Dir(p) {
				if _, err := env.FS.Stat(p); err == nil || p == "/" {
					break
				}
				missing = append(missing, p)
			}
			if err := env.FS.MkdirAll(abs, perm); err != nil {
				textFileErr(env, "mkdir", "cannot create directory "+textQuoteGNU(name), err)
				status = 1
				continue
			}
			if verbose {
				for i := len(missing) - 1; i >= 0; i-- {
					fmt.Fprintf(env.Stdout, "mkdir: created directory %s\n", textQuoteGNU(fileDisplay(name, abs, missing[i])))
				}
			}
		} else {
			if err := env.FS.Mkdir(abs, perm); err != nil {
				textFileErr(env, "mkdir", "cannot create directory "+textQuoteGNU(name), err)
				status = 1
				continue
			}
			if verbose {
				fmt.Fprintf(env.Stdout, "mkdir: created directory %s\n", textQuoteGNU(name))
			}
		}
		if setMode {
			// -m sets the mode exactly, special bits included.
			_ = env.FS.Chmod(abs, perm)
		}
	}
	return status
}

// fileDisplay maps abs path p (a parent of or equal to abs, the absolute
// form of operand name) back to the operand's spelling.
func fileDisplay(name, abs, p string) string {
	if p == abs {
		return name
	}
	up := strings.Count(strings.TrimPrefix(abs, p), "/")
	d := name
	for i := 0; i < up; i++ {
		d = path.Dir(d)
	}
	return d
}

// textQuoteGNU quotes a name in messages as coreutils do: 'name'.
func textQuoteGNU(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fileRmdir(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "pv", long: map[string]string{
		"--parents": "p", "--verbose": "v", "--ignore-fail-on-non-empty": "--ignore-fail-on-non-empty",
	}})
	if err != nil {
		return textUsage(env, "rmdir", err, 1)
	}
	if len(ops) == 0 {
		return textUsage(env, "rmdir", fmt.Errorf("missing operand"), 1)
	}
	var parents, verbose, ignore bool
	for _, o := range opts {
		switch o.Name {
		case "p":
			parents = true
		case "v":
			verbose = true
		case "--ignore-fail-on-non-empty":
			ignore = true
		}
	}
	status := 0
	rm := func(name string) bool {
		fi, err := env.FS.Lstat(env.Abs(name))
		if err == nil && !fi.IsDir() {
			err = &fs.PathError{Op: "rmdir", Path: name, Err: syscall.ENOTDIR}
		}
		if err == nil {
			err = env.FS.Remove(env.Abs(name))
		}
		if err != nil {
			if ignore && (fileIsErrno(err, syscall.ENOTEMPTY) || fileIsErrno(err, syscall.EEXIST)) {
				return false
			}
			textFileErr(env, "rmdir", "failed to remove "+textQuoteGNU(name), err)
			status = 1
			return false
		}
		if verbose {
			fmt.Fprintf(env.Stdout, "rmdir: removing directory, %s\n", textQuoteGNU(name))
		}
		return true
	}
	for _, name := range ops {
		if !rm(name) || !parents {
			continue
		}
		for p := path.Dir(strings.TrimRight(name, "/")); p != "." && p != "/"; p = path.Dir(p) {
			if !rm(p) {
				break
			}
		}
	}
	return status
}

func fileTouch(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "camfh", withArg: "drt", long: map[string]string{
		"--no-create": "c", "--date": "d=", "--reference": "r=", "--no-dereference": "h",
	}})
	if err != nil {
		return textUsage(env, "touch", err, 1)
	}
	if len(ops) == 0 {
		return textUsage(env, "touch", fmt.Errorf("missing file operand"), 1)
	}
	var noCreate, onlyA, onlyM bool
	when := time.Now()
	for _, o := range opts {
		switch o.Name {
		case "c":
			noCreate = true
		case "a":
			onlyA = true
		case "m":
			onlyM = true
		case "d":
			t, err := fileParseDate(o.Val)
			if err != nil {
				env.Errorf("touch", "invalid date format %s", textQuoteGNU(o.Val))
				return 1
			}
			when = t
		case "t":
			t, err := fileParseStamp(o.Val)
			if err != nil {
				env.Errorf("touch", "invalid date format %s", textQuoteGNU(o.Val))
				return 1
			}
			when = t
		case "r":
			fi, err := env.FS.Stat(env.Abs(o.Val))
			if err != nil {
				textFileErr(env, "touch", "failed to get attributes of "+textQuoteGNU(o.Val), err)
				return 1
			}
			when = fi.ModTime()
		}
	}
	atime, mtime := when, when
	if onlyA && !onlyM {
		mtime = time.Time{}
	}
	if onlyM && !onlyA {
		atime = time.Time{}
	}
	status := 0
	for _, name := range ops {
		abs := env.Abs(name)
		if _, err := env.FS.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			if noCreate {
				continue
			}
			f, err := env.FS.OpenFile(abs, os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				textFileErr(env, "touch", "cannot touch "+textQuoteGNU(name), err)
				status = 1
				continue
			}
			f.Close()
		}
		if err := env.FS.Chtimes(abs, atime, mtime); err != nil {
			textFileErr(env, "touch", "setting times of "+textQuoteGNU(name), err)
			status = 1
		}
	}
	return status
}

// fileParseDate accepts the date forms scripts pass to touch -d and
// find -newermt: @EPOCH, RFC 3339, "YYYY-MM-DD[ HH:MM[:SS]]", with local
// time when no zone is given.
func fileParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		f, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			return time.Time{}, err
		}
		return time.Unix(0, int64(f*1e9)), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999999 -0700",
		"2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", "20060102"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid date %q", s)
}

// fileParseStamp is touch -t's [[CC]YY]MMDDhhmm[.ss].
func fileParseStamp(s string) (time.Time, error) {
	main, secs, _ := strings.Cut(s, ".")
	switch len(main) {
	case 8:
		main = strconv.Itoa(time.Now().Year()) + main
	case 10:
		yy, _ := strconv.Atoi(main[:2])
		cc := "20"
		if yy >= 69 {
			cc = "19"
		}
		main = cc + main
	case 12:
	default:
		return time.Time{}, fmt.Errorf("invalid stamp %q", s)
	}
	if secs == "" {
		secs = "00"
	}
	return time.ParseInLocation("200601021504.05", main+"."+secs, time.Local)
}

func fileRm(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "rRfivdI", long: map[string]string{
		"--recursive": "r", "--force": "f", "--verbose": "v", "--dir": "d", "--interactive": "i?",
		"--no-preserve-root": "--no-preserve-root", "--preserve-root": "--preserve-root",
	}})
	if err != nil {
		return textUsage(env, "rm", err, 1)
	}
	var recursive, force, verbose, dirs bool
	for _, o := range opts {
		switch o.Name {
		case "r", "R":
			recursive = true
		case "f":
			force = true
		case "v":
			verbose = true
		case "d":
			dirs = true
		}
	}
	if len(ops) == 0 {
		if force {
			return 0
		}
		return textUsage(env, "rm", fmt.Errorf("missing operand"), 1)
	}
	status := 0
	// unlink removes one name, reporting it as what for -v.
	unlink := func(name, abs, what string) bool {
		if err := env.FS.Remove(abs); err != nil {
			textFileErr(env, "rm", "cannot remove "+textQuoteGNU(name), err)
			return false
		}
		if verbose {
			fmt.Fprintf(env.Stdout, "removed %s%s\n", what, textQuoteGNU(name))
		}
		return true
	}
	var remove func(name, abs string) bool
	remove = func(name, abs string) bool {
		if ctx.Err() != nil {
			return false
		}
		fi, err := env.FS.Lstat(abs)
		if err != nil {
			if force && errors.Is(err, fs.ErrNotExist) {
				return true
			}
			textFileErr(env, "rm", "cannot remove "+textQuoteGNU(name), err)
			return false
		}
		if !fi.IsDir() {
			return unlink(name, abs, "")
		}
		if !recursive && !dirs {
			env.Errorf("rm", "cannot remove %s: Is a directory", textQuoteGNU(name))
			return false
		}
		if recursive {
			ents, err := env.FS.ReadDir(abs)
			if err != nil {
				textFileErr(env, "rm", "cannot remove "+textQuoteGNU(name), err)
				return false
			}
			ok := true
			for _, e := range ents {
				ok = remove(fileJoin(name, e.Name()), path.Join(abs, e.Name())) && ok
			}
			if !ok {
				return false
			}
		}
		return unlink(name, abs, "directory ")
	}
	for _, name := range ops {
		base := fileBase(name)
		abs := env.Abs(name)
		switch {
		case base == "." || base == "..":
			env.Errorf("rm", "refusing to remove '.' or '..' directory: skipping %s", textQuoteGNU(name))
			status = 1
			continue
		case abs == "/":
			env.Errorf("rm", "it is dangerous to operate recursively on '/'")
			status = 1
			continue
		}
		if !remove(name, abs) {
			status = 1
		}
	}
	return status
}

func fileLn(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "sfnvTrL", withArg: "t", long: map[string]string{
		"--symbolic": "s", "--force": "f", "--no-dereference": "n", "--verbose": "v",
		"--no-target-directory": "T", "--target-directory": "t=", "--relative": "r",
	}})
	if err != nil {
		return textUsage(env, "ln", err, 1)
	}
	var symbolic, force, noDeref, verbose, noTarget, relative bool
	targetDir := ""
	for _, o := range opts {
		switch o.Name {
		case "s":
			symbolic = true
		case "f":
			force = true
		case "n":
			noDeref = true
		case "v":
			verbose = true
		case "T":
			noTarget = true
		case "t":
			targetDir = o.Val
		case "r":
			relative = true
		}
	}
	if len(ops) == 0 {
		return textUsage(env, "ln", fmt.Errorf("missing file operand"), 1)
	}
	type pair struct{ src, dst string }
	var pairs []pair
	isDir := func(name string) bool {
		var fi fs.FileInfo
		var err error
		if noDeref {
			fi, err = env.FS.Lstat(env.Abs(name))
		} else {
			fi, err = env.FS.Stat(env.Abs(name))
		}
		return err == nil && fi.IsDir()
	}
	switch {
	case targetDir != "":
		for _, s := range ops {
			pairs = append(pairs, pair{s, fileJoin(targetDir, fileBase(s))})
		}
	case len(ops) == 1:
		pairs = append(pairs, pair{ops[0], fileBase(ops[0])})
	case len(ops) == 2 && (noTarget || !isDir(ops[1])):
		pairs = append(pairs, pair{ops[0], ops[1]})
	default:
		dir := ops[len(ops)-1]
		if !isDir(dir) {
			env.Errorf("ln", "target %s is not a directory", textQuoteGNU(dir))
			return 1
		}
		for _, s := range ops[:len(ops)-1] {
			pairs = append(pairs, pair{s, fileJoin(dir, fileBase(s))})
		}
	}
	status := 0
	for _, p := range pairs {
		dst := env.Abs(p.dst)
		if force && fileExists(env, dst) {
			if fi, err := env.FS.Lstat(dst); err == nil && fi.IsDir() {
				env.Errorf("ln", "%s: cannot overwrite directory", textQuoteGNU(p.dst))
				status = 1
				continue
			}
			_ = env.FS.Remove(dst)
		}
		if symbolic {
			target := p.src
			if relative {
				target = fileRel(path.Dir(dst), env.Abs(p.src))
			}
			err = env.FS.Symlink(target, dst)
		} else {
			err = env.FS.Link(env.Abs(p.src), dst)
		}
		if err != nil {
			what := "hard link"
			if symbolic {
				what = "symbolic link"
			}
			if !symbolic && errors.Is(err, fs.ErrNotExist) && !fileExists(env, env.Abs(p.src)) {
				textFileErr(env, "ln", "failed to access "+textQuoteGNU(p.src), err)
			} else {
				textFileErr(env, "ln", "failed to create "+what+" "+textQuoteGNU(p.dst), err)
			}
			status = 1
			continue
		}
		if verbose {
			arrow := "=>"
			if symbolic {
				arrow = "->"
			}
			fmt.Fprintf(env.Stdout, "%s %s %s\n", textQuoteGNU(p.dst), arrow, textQuoteGNU(p.src))
		}
	}
	return status
}

// fileRel is the relative path from directory base to target, both
// absolute and clean.
func fileRel(base, target string) string {
	bs, ts := strings.Split(strings.Trim(base, "/"), "/"), strings.Split(strings.Trim(target, "/"), "/")
	if base == "/" {
		bs = nil
	}
	if target == "/" {
		ts = nil
	}
	i := 0
	for i < len(bs) && i < len(ts) && bs[i] == ts[i] {
		i++
	}
	var parts []string
	for range bs[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, ts[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// fileCanon resolves every symlink in name. mode is readlink's: 'f' all
// but the last component must exist, 'e' everything must exist, 'm'
// nothing need exist.
func fileCanon(env *Env, name string, mode byte) (string, error) {
	p := env.Abs(name)
	links := 0
	done := "/"
	rest := strings.Split(strings.Trim(p, "/"), "/")
	if p == "/" {
		rest = nil
	}
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		next := path.Join(done, c)
		fi, err := env.FS.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && (mode == 'm' || mode == 'f' && len(rest) == 0) {
				done = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			links++
			if links > 40 {
				return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.ELOOP}
			}
			target, err := env.FS.Readlink(next)
			if err != nil {
				return "", err
			}
			if path.IsAbs(target) {
				done = "/"
			}
			t := strings.Split(strings.Trim(target, "/"), "/")
			rest = append(t, rest...)
			continue
		}
		if len(rest) > 0 && !fi.IsDir() && mode != 'm' {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.ENOTDIR}
		}
		done = next
	}
	return done, nil
}

func fileReadlink(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "femnqsvz", long: map[string]string{
		"--canonicalize": "f", "--canonicalize-existing": "e", "--canonicalize-missing": "m",
		"--no-newline": "n", "--quiet": "q", "--silent": "s", "--verbose": "v", "--zero": "z",
	}})
	if err != nil {
		return textUsage(env, "readlink", err, 1)
	}
	var mode byte
	nl, quiet := "\n", true
	for _, o := range opts {
		switch o.Name {
		case "f", "e", "m":
			mode = o.Name[0]
		case "n":
			nl = ""
		case "z":
			nl = "\x00"
		case "v":
			quiet = false
		}
	}
	if len(ops) == 0 {
		return textUsage(env, "readlink", fmt.Errorf("missing operand"), 1)
	}
	if len(ops) > 1 && nl == "" {
		nl = "\n"
	}
	status := 0
	for _, name := range ops {
		var s string
		if mode == 0 {
			s, err = env.FS.Readlink(env.Abs(name))
		} else {
			s, err = fileCanon(env, name, mode)
		}
		if err != nil {
			if !quiet {
				textFileErr(env, "readlink", name, err)
			}
			status = 1
			continue
		}
		fmt.Fprint(env.Stdout, s+nl)
	}
	return status
}

func fileRealpath(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "emsqzLP", long: map[string]string{
		"--canonicalize-existing": "e", "--canonicalize-missing": "m", "--no-symlinks": "s",
		"--strip": "s", "--quiet": "q", "--zero": "z", "--relative-to": "--relative-to=",
		"--relative-base": "--relative-base=",
	}})
	if err != nil {
		return textUsage(env, "realpath", err, 1)
	}
	mode := byte('f')
	nl, quiet, strip := "\n", false, false
	relTo, relBase := "", ""
	for _, o := range opts {
		switch o.Name {
		case "e", "m":
			mode = o.Name[0]
		case "s":
			strip = true
		case "q":
			quiet = true
		case "z":
			nl = "\x00"
		case "--relative-to":
			relTo = o.Val
		case "--relative-base":
			relBase = o.Val
		}
	}
	if len(ops) == 0 {
		return textUsage(env, "realpath", fmt.Errorf("missing operand"), 1)
	}
	canon := func(name string) (string, error) {
		if strip {
			return env.Abs(name), nil
		}
		return fileCanon(env, name, mode)
	}
	if relTo != "" {
		if relTo, err = canon(relTo); err != nil {
			textFileErr(env, "realpath", relTo, err)
			return 1
		}
	}
	if relBase != "" {
		if relBase, err = canon(relBase); err != nil {
			textFileErr(env, "realpath", relBase, err)
			return 1
		}
	}
	status := 0
	for _, name := range ops {
		s, err := canon(name)
		if err != nil {
			if !quiet {
				textFileErr(env, "realpath", name, err)
			}
			status = 1
			continue
		}
		switch {
		case relTo != "" && (relBase == "" || fileUnder(s, relBase) && fileUnder(relTo, relBase)):
			s = fileRel(relTo, s)
		case relTo == "" && relBase != "" && fileUnder(s, relBase):
			s = fileRel(relBase, s)
		}
		fmt.Fprint(env.Stdout, s+nl)
	}
	return status
}

func fileUnder(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// fileDuration parses sleep and timeout durations: a number with an
// optional s, m, h or d suffix.
func fileDuration(s string) (time.Duration, error) {
	mult := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, mult = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "h"):
		s, mult = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "d"):
		s, mult = s[:len(s)-1], 24*time.Hour
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid time interval %s", textQuoteGNU(s))
	}
	if f*float64(mult) > float64(1<<62) {
		return 1 << 62, nil
	}
	return time.Duration(f * float64(mult)), nil
}

func fileSleep(ctx context.Context, env *Env, args []string) int {
	if len(args) < 2 {
		return textUsage(env, "sleep", fmt.Errorf("missing operand"), 1)
	}
	var total time.Duration
	for _, a := range args[1:] {
		d, err := fileDuration(a)
		if err != nil {
			env.Errorf("sleep", "invalid time interval %s", textQuoteGNU(a))
			return 1
		}
		total += d
	}
	t := time.NewTimer(total)
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-ctx.Done():
		return 130
	}
}

func fileMktemp(_ context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "dqut", withArg: "p", long: map[string]string{
		"--directory": "d", "--quiet": "q", "--dry-run": "u", "--tmpdir": "p?", "--suffix": "--suffix=",
	}})
	if err != nil {
		return textUsage(env, "mktemp", err, 1)
	}
	var dir, dry, quiet, tmpdirFlag bool
	parent, suffix := "", ""
	for _, o := range opts {
		switch o.Name {
		case "d":
			dir = true
		case "u":
			dry = true
		case "q":
			quiet = true
		case "t":
			tmpdirFlag = true
		case "p":
			parent, tmpdirFlag = o.Val, true
		case "--suffix":
			suffix = o.Val
		}
	}
	template := "tmp.XXXXXXXXXX"
	if len(ops) > 0 {
		template = ops[0]
	} else {
		tmpdirFlag = true
	}
	if tmpdirFlag || len(ops) == 0 {
		if parent == "" {
			parent = env.Getenv("TMPDIR")
		}
		if parent == "" {
			parent = "/tmp"
		}
		if !strings.Contains(template, "/") {
			template = fileJoin(parent, template)
		}
	}
	// The last run of X's in the last component is replaced; what
	// follows it is a suffix.
	base := path.Base(template)
	end := strings.LastIndex(base, "XXX")
	if end >= 0 {
		end += 3
		suffix = base[end:] + suffix
		template = template[:len(template)-len(base)+end]
	}
	x := len(template) - len(strings.TrimRight(template, "X"))
	if x < 3 {
		if !quiet {
			env.Errorf("mktemp", "too few X's in template %s", textQuoteGNU(template))
		}
		return 1
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for try := 0; try < 100; try++ {
		b := make([]byte, x)
		_, _ = rand.Read(b)
		for i := range b {
			b[i] = letters[int(b[i])%len(letters)]
		}
		name := template[:len(template)-x] + string(b) + suffix
		abs := env.Abs(name)
		if !dry {
			if dir {
				err = env.FS.Mkdir(abs, 0o700)
			} else {
				var f File
				f, err = env.FS.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
				if err == nil {
					f.Close()
				}
			}
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				if !quiet {
					textFileErr(env, "mktemp", "failed to create "+map[bool]string{true: "directory", false: "file"}[dir]+" via template "+textQuoteGNU(template), err)
				}
				return 1
			}
		}
		fmt.Fprintln(env.Stdout, name)
		return 0
	}
	return 1
}
