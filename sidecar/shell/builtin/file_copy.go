package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
)

func init() {
	register("chmod", fileChmod)
	register("cp", fileCp)
	register("mv", fileMv)
}

// fileParseMode parses an octal or symbolic (u+x,go-w,a=r,+X) mode
// relative to old. isDir matters for X.
func fileParseMode(s string, old fs.FileMode, isDir bool) (fs.FileMode, error) {
	if n, err := strconv.ParseUint(s, 8, 32); err == nil {
		if n > 0o7777 {
			return 0, fmt.Errorf("invalid mode %q", s)
		}
		m := fs.FileMode(n & 0o777)
		if n&0o4000 != 0 {
			m |= fs.ModeSetuid
		}
		if n&0o2000 != 0 {
			m |= fs.ModeSetgid
		}
		if n&0o1000 != 0 {
			m |= fs.ModeSticky
		}
		return m, nil
	}
	m := old & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	for _, clause := range strings.Split(s, ",") {
		i := 0
		var who fs.FileMode
		for ; i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0; i++ {
			switch clause[i] {
			case 'u':
				who |= 0o4700
			case 'g':
				who |= 0o2070
			case 'o':
				who |= 0o1007
			case 'a':
				who |= 0o7777
			}
		}
		if i == len(clause) {
			return 0, fmt.Errorf("invalid mode %q", s)
		}
		for i < len(clause) {
			op := clause[i]
			if op != '+' && op != '-' && op != '=' {
				return 0, fmt.Errorf("invalid mode %q", s)
			}
			i++
			var bits fs.FileMode
			for ; i < len(clause) && strings.IndexByte("rwxXst", clause[i]) >= 0; i++ {
				switch clause[i] {
				case 'r':
					bits |= 0o444
				case 'w':
					bits |= 0o222
				case 'x':
					bits |= 0o111
				case 'X':
					if isDir || m&0o111 != 0 {
						bits |= 0o111
					}
				case 's':
					bits |= 0o6000
				case 't':
					bits |= 0o1000
				}
			}
			w := who
			if w == 0 {
				// No who: all, minus nothing (there is no umask here).
				w = 0o7777
			}
			cur := fileModeBits(m)
			switch op {
			case '+':
				cur |= uint32(bits & w)
			case '-':
				cur &^= uint32(bits & w)
			case '=':
				cur = cur&^uint32(w&0o777) | uint32(bits&w)
			}
			m = fileBitsMode(cur)
		}
	}
	return m, nil
}

func fileModeBits(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		b |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		b |= 0o1000
	}
	return b
}

func fileBitsMode(b uint32) fs.FileMode {
	m := fs.FileMode(b & 0o777)
	if b&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if b&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if b&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func fileChmod(ctx context.Context, env *Env, args []string) int {
	// Modes like -w look like options: take them as the mode operand.
	var rest []string
	mode := ""
	var recursive, verbose, changes, quiet bool
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "-R" || a == "--recursive":
			recursive = true
		case a == "-v" || a == "--verbose":
			verbose = true
		case a == "-c" || a == "--changes":
			changes = true
		case a == "-f" || a == "--silent" || a == "--quiet":
			quiet = true
		case mode == "" && len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "rwxXst") == "":
			mode = a
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "Rvcf") == "":
			recursive = recursive || strings.Contains(a, "R")
			verbose = verbose || strings.Contains(a, "v")
			changes = changes || strings.Contains(a, "c")
			quiet = quiet || strings.Contains(a, "f")
		default:
			rest = append(rest, a)
		}
	}
	if mode == "" {
		if len(rest) == 0 {
			return textUsage(env, "chmod", fmt.Errorf("missing operand"), 1)
		}
		mode, rest = rest[0], rest[1:]
	}
	if len(rest) == 0 {
		return textUsage(env, "chmod", fmt.Errorf("missing operand after %s", textQuoteGNU(mode)), 1)
	}
	if _, err := fileParseMode(mode, 0, false); err != nil {
		return textUsage(env, "chmod", fmt.Errorf("invalid mode: %s", textQuoteGNU(mode)), 1)
	}
	status := 0
	var apply func(name, abs string, top bool)
	apply = func(name, abs string, top bool) {
		if ctx.Err() != nil {
			status = 1
			return
		}
		lfi, err := env.FS.Lstat(abs)
		if err == nil && lfi.Mode()&fs.ModeSymlink != 0 && !top {
			return // chmod -R skips symlinks met during the walk
		}
		fi, err := env.FS.Stat(abs)
		if err != nil {
			if !quiet {
				textFileErr(env, "chmod", "cannot access "+textQuoteGNU(name), err)
			}
			status = 1
			return
		}
		m, _ := fileParseMode(mode, fi.Mode(), fi.IsDir())
		if err := env.FS.Chmod(abs, m); err != nil {
			if !quiet {
				textFileErr(env, "chmod", "changing permissions of "+textQuoteGNU(name), err)
			}
			status = 1
			return
		}
		old := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if verbose || changes && old != m {
			if old != m {
				fmt.Fprintf(env.Stdout, "mode of %s changed from %04o (%s) to %04o (%s)\n", textQuoteGNU(name),
					fileModeBits(old), fileModeString(old)[1:], fileModeBits(m), fileModeString(m)[1:])
			} else {
				fmt.Fprintf(env.Stdout, "mode of %s retained as %04o (%s)\n", textQuoteGNU(name),
					fileModeBits(m), fileModeString(m)[1:])
			}
		}
		if recursive && fi.IsDir() {
			ents, err := env.FS.ReadDir(abs)
			if err != nil {
				textFileErr(env, "chmod", "cannot read directory "+textQuoteGNU(name), err)
				status = 1
				return
			}
			for _, e := range ents {
				apply(fileJoin(name, e.Name()), path.Join(abs, e.Name()), false)
			}
		}
	}
	for _, name := range rest {
		apply(name, env.Abs(name), true)
	}
	return status
}

// copier holds cp's options.
type copier struct {
	env       *Env
	ctx       context.Context
	cmd       string
	recursive bool
	preserve  bool // mode and times
	noClobber bool
	force     bool
	verbose   bool
	deref     byte // 'L' always, 'P' never, 'H' operands only
	update    bool
	linkFiles bool // -l
	symlinks  bool // -s
	status    int
	// dirs is the source directories being copied, outermost first: one
	// met again below itself (through a followed link) is a cycle.
	dirs []fs.FileInfo
}

func fileCp(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "rRapfnvTdLPHuilsx", withArg: "t", long: map[string]string{
		"--recursive": "r", "--archive": "a", "--force": "f", "--no-clobber": "n", "--verbose": "v",
		"--no-target-directory": "T", "--target-directory": "t=", "--dereference": "L",
		"--no-dereference": "P", "--update": "u?", "--preserve": "--preserve?", "--link": "l",
		"--symbolic-link": "s", "--parents": "--parents", "--one-file-system": "x",
	}})
	if err != nil {
		return textUsage(env, "cp", err, 1)
	}
	c := &copier{env: env, ctx: ctx, cmd: "cp"}
	noTarget, targetDir, parents := false, "", false
	for _, o := range opts {
		switch o.Name {
		case "r", "R":
			c.recursive = true
		case "a":
			c.recursive, c.preserve, c.deref = true, true, 'P'
		case "p", "--preserve":
			c.preserve = true
		case "f":
			c.force = true
		case "n":
			c.noClobber = true
		case "v":
			c.verbose = true
		case "T":
			noTarget = true
		case "t":
			targetDir = o.Val
		case "d", "P":
			c.deref = 'P'
		case "L":
			c.deref = 'L'
		case "H":
			c.deref = 'H'
		case "u":
			c.update = true
		case "l":
			c.linkFiles = true
		case "s":
			c.symlinks = true
		case "--parents":
			parents = true
		}
	}
	if c.deref == 0 {
		c.deref = 'L'
		if c.recursive {
			c.deref = 'P'
		}
	}
	pairs, ok := fileTargets(env, "cp", ops, targetDir, noTarget, parents)
	if !ok {
		return 1
	}
	for _, p := range pairs {
		if ctx.Err() != nil {
			return 1
		}
		c.copy(p[0], env.Abs(p[0]), p[1], env.Abs(p[1]), true)
	}
	return c.status
}

// fileTargets pairs sources with destinations for cp and mv: SRC DST,
// SRC… DIR, -t DIR SRC…, -T SRC DST.
func fileTargets(env *Env, cmd string, ops []string, targetDir string, noTarget, parents bool) ([][2]string, bool) {
	if len(ops) == 0 {
		textUsage(env, cmd, fmt.Errorf("missing file operand"), 1)
		return nil, false
	}
	dest := func(dir, src string) string {
		if parents {
			return fileJoin(dir, strings.TrimLeft(src, "/"))
		}
		return fileJoin(dir, fileBase(src))
	}
	isDir := func(name string) bool {
		fi, err := env.FS.Stat(env.Abs(name))
		return err == nil && fi.IsDir()
	}
	var pairs [][2]string
	switch {
	case targetDir != "":
		if !isDir(targetDir) {
			env.Errorf(cmd, "target directory %s: Not a directory", textQuoteGNU(targetDir))
			return nil, false
		}
		for _, s := range ops {
			pairs = append(pairs, [2]string{s, dest(targetDir, s)})
		}
	case len(ops) == 1:
		textUsage(env, cmd, fmt.Errorf("missing destination file operand after %s", textQuoteGNU(ops[0])), 1)
		return nil, false
	case noTarget:
		if len(ops) > 2 {
			textUsage(env, cmd, fmt.Errorf("extra operand %s", textQuoteGNU(ops[2])), 1)
			return nil, false
		}
		pairs = append(pairs, [2]string{ops[0], ops[1]})
	case len(ops) == 2 && !isDir(ops[1]):
		pairs = append(pairs, [2]string{ops[0], ops[1]})
	default:
		dir := ops[len(ops)-1]
		if !isDir(dir) {
			env.Errorf(cmd, "target %s is not a directory", textQuoteGNU(dir))
			return nil, false
		}
		for _, s := range ops[:len(ops)-1] {
			pairs = append(pairs, [2]string{s, dest(dir, s)})
		}
	}
	return pairs, true
}

func (c *copier) fail(msg string, err error) {
	textFileErr(c.env, c.cmd, msg, err)
	c.status = 1
}

// copy copies src to dst; top is true for operands (for -H).
func (c *copier) copy(srcName, src, dstName, dst string, top bool) {
	env := c.env
	if c.ctx.Err() != nil {
		c.status = 1
		return
	}
	var fi fs.FileInfo
	var err error
	if c.deref == 'L' || c.deref == 'H' && top {
		fi, err = env.FS.Stat(src)
	} else {
		fi, err = env.FS.Lstat(src)
	}
	if err != nil {
		c.fail("cannot stat "+textQuoteGNU(srcName), err)
		return
	}
	dfi, derr := env.FS.Stat(dst)
	if derr == nil && fileSame(fi, dfi) {
		env.Errorf(c.cmd, "%s and %s are the same file", textQuoteGNU(srcName), textQuoteGNU(dstName))
		c.status = 1
		return
	}
	if fi.IsDir() {
		if !c.recursive {
			env.Errorf(c.cmd, "-r not specified; omitting directory %s", textQuoteGNU(srcName))
			c.status = 1
			return
		}
		if strings.HasPrefix(dst+"/", src+"/") {
			env.Errorf(c.cmd, "cannot copy a directory, %s, into itself, %s", textQuoteGNU(srcName), textQuoteGNU(dstName))
			c.status = 1
			return
		}
		for _, d := range c.dirs {
			if fileSame(d, fi) {
				env.Errorf(c.cmd, "cannot copy cyclic symbolic link %s", textQuoteGNU(srcName))
				c.status = 1
				return
			}
		}
		if derr != nil {
			if err := env.FS.Mkdir(dst, fi.Mode().Perm()|0o700); err != nil {
				c.fail("cannot create directory "+textQuoteGNU(dstName), err)
				return
			}
			if c.verbose {
				fmt.Fprintf(env.Stdout, "%s -> %s\n", textQuoteGNU(srcName), textQuoteGNU(dstName))
			}
		} else if !dfi.IsDir() {
			env.Errorf(c.cmd, "cannot overwrite non-directory %s with directory %s", textQuoteGNU(dstName), textQuoteGNU(srcName))
			c.status = 1
			return
		}
		ents, err := env.FS.ReadDir(src)
		if err != nil {
			c.fail("cannot access "+textQuoteGNU(srcName), err)
			return
		}
		c.dirs = append(c.dirs, fi)
		for _, e := range ents {
			c.copy(fileJoin(srcName, e.Name()), path.Join(src, e.Name()), fileJoin(dstName, e.Name()), path.Join(dst, e.Name()), false)
		}
		c.dirs = c.dirs[:len(c.dirs)-1]
		c.finish(fi, dst)
		if !c.preserve {
			_ = env.FS.Chmod(dst, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		}
		return
	}
	if derr == nil || fileExists(env, dst) {
		if c.noClobber {
			return
		}
		if c.update && derr == nil && !fi.ModTime().After(dfi.ModTime()) {
			return
		}
		if derr == nil && dfi.IsDir() {
			env.Errorf(c.cmd, "cannot overwrite directory %s with non-directory", textQuoteGNU(dstName))
			c.status = 1
			return
		}
		if c.force || c.linkFiles || c.symlinks || fi.Mode()&fs.ModeSymlink != 0 {
			_ = env.FS.Remove(dst)
		}
	}
	switch {
	case c.symlinks:
		err = env.FS.Symlink(src, dst)
	case c.linkFiles:
		err = env.FS.Link(src, dst)
	case fi.Mode()&fs.ModeSymlink != 0:
		var target string
		target, err = env.FS.Readlink(src)
		if err == nil {
			err = env.FS.Symlink(target, dst)
		}
	case fi.Mode().IsRegular():
		err = fileCopyData(c.ctx, env, src, dst, fi.Mode().Perm())
		if err != nil && c.force && errors.Is(err, fs.ErrPermission) {
			_ = env.FS.Remove(dst)
			err = fileCopyData(c.ctx, env, src, dst, fi.Mode().Perm())
		}
	default:
		err = &fs.PathError{Op: "copy", Path: srcName, Err: syscall.EINVAL}
	}
	if err != nil {
		c.fail("cannot create "+map[bool]string{true: "symbolic link", false: "regular file"}[fi.Mode()&fs.ModeSymlink != 0]+" "+textQuoteGNU(dstName), err)
		return
	}
	if c.verbose {
		fmt.Fprintf(env.Stdout, "%s -> %s\n", textQuoteGNU(srcName), textQuoteGNU(dstName))
	}
	if fi.Mode()&fs.ModeSymlink == 0 && !c.linkFiles && !c.symlinks {
		c.finish(fi, dst)
	}
}

// finish applies -p: the source's mode and times.
func (c *copier) finish(fi fs.FileInfo, dst string) {
	if !c.preserve {
		return
	}
	_ = c.env.FS.Chmod(dst, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	st := fileStat(fi)
	_ = c.env.FS.Chtimes(dst, statTime(st.Atim), fi.ModTime())
}

func fileMv(ctx context.Context, env *Env, args []string) int {
	opts, ops, err := textParse(args[1:], textSpec{flags: "fnvTiu", withArg: "t", long: map[string]string{
		"--force": "f", "--no-clobber": "n", "--verbose": "v", "--no-target-directory": "T",
		"--target-directory": "t=", "--interactive": "i", "--update": "u",
	}})
	if err != nil {
		return textUsage(env, "mv", err, 1)
	}
	var noClobber, verbose, noTarget, update bool
	targetDir := ""
	for _, o := range opts {
		switch o.Name {
		case "n":
			noClobber = true
		case "f":
			noClobber = false
		case "v":
			verbose = true
		case "T":
			noTarget = true
		case "t":
			targetDir = o.Val
		case "u":
			update = true
		}
	}
	pairs, ok := fileTargets(env, "mv", ops, targetDir, noTarget, false)
	if !ok {
		return 1
	}
	status := 0
	for _, p := range pairs {
		if ctx.Err() != nil {
			return 1
		}
		src, dst := env.Abs(p[0]), env.Abs(p[1])
		sfi, err := env.FS.Lstat(src)
		if err != nil {
			textFileErr(env, "mv", "cannot stat "+textQuoteGNU(p[0]), err)
			status = 1
			continue
		}
		if dfi, err := env.FS.Lstat(dst); err == nil {
			if noClobber || update && !sfi.ModTime().After(dfi.ModTime()) {
				continue
			}
		}
		if sfi.IsDir() && strings.HasPrefix(dst+"/", src+"/") && dst != src {
			env.Errorf("mv", "cannot move %s to a subdirectory of itself, %s", textQuoteGNU(p[0]), textQuoteGNU(p[1]))
			status = 1
			continue
		}
		err = env.FS.Rename(src, dst)
		if errors.Is(err, syscall.EXDEV) {
			// Across mounts (/tmp and /workspace): copy, then remove.
			c := &copier{env: env, ctx: ctx, cmd: "mv", recursive: true, preserve: true, deref: 'P'}
			if dfi, derr := env.FS.Lstat(dst); derr == nil && !dfi.IsDir() {
				_ = env.FS.Remove(dst)
			}
			c.copy(p[0], src, p[1], dst, true)
			if c.status != 0 {
				status = 1
				continue
			}
			err = env.FS.RemoveAll(src)
		}
		if err != nil {
			textFileErr(env, "mv", "cannot move "+textQuoteGNU(p[0])+" to "+textQuoteGNU(p[1]), err)
			status = 1
			continue
		}
		if verbose {
			fmt.Fprintf(env.Stdout, "renamed %s -> %s\n", textQuoteGNU(p[0]), textQuoteGNU(p[1]))
		}
	}
	return status
}
