package builtin

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/sqlfs/sqlfs/sidecar/archive"
)

func init() {
	register("tar", fileTar)
	register("gzip", func(ctx context.Context, env *Env, args []string) int {
		return fileGzip(ctx, env, args, false, false)
	})
	register("gunzip", func(ctx context.Context, env *Env, args []string) int {
		return fileGzip(ctx, env, args, true, false)
	})
	register("zcat", func(ctx context.Context, env *Env, args []string) int {
		return fileGzip(ctx, env, args, true, true)
	})
}

type tarRun struct {
	env      *Env
	ctx      context.Context
	mode     byte // c, x, t
	gz       bool
	file     string
	dir      string
	verbose  bool
	toStdout bool
	strip    int
	excludes []string
	keepOld  bool
	status   int
	msgs     io.Writer // -v listing: stdout, or stderr when the archive is stdout
}

func fileTar(ctx context.Context, env *Env, args []string) int {
	args = args[1:]
	// Old style: the first word's letters are options even without '-'.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args[0] = "-" + args[0]
	}
	opts, ops, err := textParse(args, textSpec{flags: "cxtzvOkpmhaPo", withArg: "fCT", long: map[string]string{
		"--create": "c", "--extract": "x", "--get": "x", "--list": "t", "--gzip": "z", "--gunzip": "z",
		"--file": "f=", "--directory": "C=", "--verbose": "v", "--to-stdout": "O", "--keep-old-files": "k",
		"--exclude": "--exclude=", "--strip-components": "--strip-components=", "--no-same-owner": "o",
		"--no-same-permissions": "p", "--same-permissions": "p", "--preserve-permissions": "p",
		"--auto-compress": "a", "--touch": "m", "--dereference": "h", "--absolute-names": "P",
		"--numeric-owner": "--numeric-owner", "--overwrite": "--overwrite",
	}})
	if err != nil {
		return textUsage(env, "tar", err, 2)
	}
	t := &tarRun{env: env, ctx: ctx, file: "-", dir: env.Dir}
	auto := false
	for _, o := range opts {
		switch o.Name {
		case "c", "x", "t":
			if t.mode != 0 && t.mode != o.Name[0] {
				env.Errorf("tar", "You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option")
				return 2
			}
			t.mode = o.Name[0]
		case "z":
			t.gz = true
		case "f":
			t.file = o.Val
		case "C":
			t.dir = env.Abs(o.Val)
		case "v":
			t.verbose = true
		case "O":
			t.toStdout = true
		case "k":
			t.keepOld = true
		case "a":
			auto = true
		case "--exclude":
			t.excludes = append(t.excludes, o.Val)
		case "--strip-components":
			t.strip, err = strconv.Atoi(o.Val)
			if err != nil || t.strip < 0 {
				env.Errorf("tar", "Invalid number of elements: %s", textQuoteGNU(o.Val))
				return 2
			}
		}
	}
	if t.mode == 0 {
		env.Errorf("tar", "You must specify one of the '-Acdtrux', '--delete' or '--test-label' options")
		return 2
	}
	t.msgs = env.Stdout
	if t.file == "-" && t.mode == 'c' {
		t.msgs = env.Stderr
	}
	if auto && (strings.HasSuffix(t.file, ".gz") || strings.HasSuffix(t.file, ".tgz")) {
		t.gz = true
	}
	if t.mode == 'c' {
		return t.create(ops)
	}
	return t.read(ops)
}

func (t *tarRun) excluded(name string) bool {
	for _, pat := range t.excludes {
		if fileGlob(pat, name, false) || fileGlob(pat, path.Base(name), false) {
			return true
		}
	}
	return false
}

func (t *tarRun) create(ops []string) int {
	env := t.env
	if len(ops) == 0 {
		env.Errorf("tar", "Cowardly refusing to create an empty archive")
		return 2
	}
	var out io.Writer = env.Stdout
	if t.file != "-" {
		f, err := env.FS.OpenFile(env.Abs(t.file), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			textFileErr(env, "tar", t.file+": Cannot open", err)
			return 2
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	var zw *gzip.Writer
	w := io.Writer(bw)
	if t.gz {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	aw := archive.NewWriter(w, archive.WriteOptions{GNU: true, Names: fileUser})
	warned := false
	for _, name := range ops {
		member := name
		if strings.HasPrefix(member, "/") {
			if !warned {
				env.Errorf("tar", "Removing leading `/' from member names")
				warned = true
			}
			member = strings.TrimLeft(member, "/")
		}
		abs := name
		if !path.IsAbs(abs) {
			abs = path.Join(t.dir, name)
		}
		t.add(aw, member, abs)
	}
	if err := aw.Close(); err != nil {
		env.Errorf("tar", "%v", err)
		return 2
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			env.Errorf("tar", "%v", err)
			return 2
		}
	}
	if err := bw.Flush(); err != nil {
		env.Errorf("tar", "%v", err)
		return 2
	}
	return t.status
}

func (t *tarRun) add(aw *archive.Writer, member, abs string) {
	env := t.env
	if t.ctx.Err() != nil {
		t.status = 2
		return
	}
	if t.excluded(member) {
		return
	}
	fi, err := env.FS.Lstat(abs)
	if err != nil {
		textFileErr(env, "tar", member+": Cannot stat", err)
		env.Errorf("tar", "Exiting with failure status due to previous errors")
		t.status = 2
		return
	}
	if fi.Mode()&fs.ModeSocket != 0 {
		env.Errorf("tar", "%s: socket ignored", member)
		return
	}
	name := member
	if fi.IsDir() && !strings.HasSuffix(name, "/") {
		name += "/"
	}
	if t.verbose {
		fmt.Fprintln(t.msgs, name)
	}
	err = aw.Add(name, fi, func() (string, error) { return env.FS.Readlink(abs) },
		func() (io.ReadCloser, error) { return env.FS.Open(abs) })
	if err != nil {
		env.Errorf("tar", "%s: %v", member, err)
		t.status = 2
		return
	}
	if fi.IsDir() {
		ents, err := env.FS.ReadDir(abs)
		if err != nil {
			textFileErr(env, "tar", member+": Cannot open", err)
			t.status = 2
			return
		}
		for _, e := range ents {
			t.add(aw, name+e.Name(), path.Join(abs, e.Name()))
		}
	}
}

// archiveReader opens the archive for reading, gunzipping it when asked or
// when it starts with gzip's magic bytes, as GNU tar does.
func (t *tarRun) archiveReader() (io.Reader, func(), error) {
	env := t.env
	var in io.Reader = env.Stdin
	closer := func() {}
	if t.file != "-" {
		f, err := env.FS.Open(env.Abs(t.file))
		if err != nil {
			return nil, nil, err
		}
		in, closer = f, func() { f.Close() }
	}
	br := bufio.NewReaderSize(in, 64<<10)
	magic, _ := br.Peek(2)
	if t.gz || len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			closer()
			return nil, nil, err
		}
		return zr, closer, nil
	}
	return br, closer, nil
}

func (t *tarRun) read(ops []string) int {
	env := t.env
	in, closer, err := t.archiveReader()
	if err != nil {
		textFileErr(env, "tar", t.file+": Cannot open", err)
		env.Errorf("tar", "Error is not recoverable: exiting now")
		return 2
	}
	defer closer()
	matched := make([]bool, len(ops))
	selected := func(name string) bool {
		name = strings.TrimSuffix(name, "/")
		if t.excluded(name) {
			return false
		}
		if len(ops) == 0 {
			return true
		}
		found := false
		for i, op := range ops {
			op = strings.TrimSuffix(op, "/")
			if name == op || strings.HasPrefix(name, op+"/") || fileGlob(op, name, false) {
				found, matched[i] = true, true
			}
		}
		return found
	}
	if t.mode == 't' || t.toStdout {
		if status := t.scan(in, selected); status != 0 {
			return status
		}
	} else {
		_, err := archive.Extract(t.ctx, in, tarTarget{env.FS}, t.dir, archive.Options{
			StripComponents: t.strip,
			Select:          selected,
			KeepOld:         t.keepOld,
			OnMember: func(h *tar.Header) {
				if t.verbose {
					fmt.Fprintln(t.msgs, h.Name)
				}
			},
			Warn: func(err error) { env.Errorf("tar", "%v", err) },
		})
		var xe *archive.ExtractError
		switch {
		case errors.As(err, &xe):
			t.status = 2
		case err != nil:
			return t.unrecoverable(err)
		}
	}
	for i, ok := range matched {
		if !ok {
			env.Errorf("tar", "%s: Not found in archive", ops[i])
			t.status = 2
		}
	}
	if t.status != 0 {
		env.Errorf("tar", "Exiting with failure status due to previous errors")
	}
	return t.status
}

// unrecoverable reports a stream that cannot be read further, in GNU
// tar's words where it has them.
func (t *tarRun) unrecoverable(err error) int {
	if errors.Is(err, archive.ErrTruncated) {
		t.env.Errorf("tar", "Unexpected EOF in archive")
	} else {
		t.env.Errorf("tar", "%v", err)
	}
	t.env.Errorf("tar", "Error is not recoverable: exiting now")
	return 2
}

// scan lists the selected members (-t) or writes their data to stdout (-O).
func (t *tarRun) scan(in io.Reader, selected func(string) bool) int {
	env := t.env
	tr := archive.NewReader(in)
	for {
		if t.ctx.Err() != nil {
			return 2
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			return t.unrecoverable(err)
		}
		if !selected(strings.TrimLeft(hdr.Name, "/")) {
			continue
		}
		switch {
		case t.toStdout:
			if t.verbose {
				fmt.Fprintln(t.msgs, hdr.Name)
			}
			if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeGNUSparse {
				if _, err := io.Copy(env.Stdout, ctxReader{t.ctx, tr}); err != nil {
					env.Errorf("tar", "%v", err)
					return 2
				}
			}
		case t.verbose:
			size := strconv.FormatInt(hdr.Size, 10)
			link := ""
			if hdr.Typeflag == tar.TypeSymlink {
				link = " -> " + hdr.Linkname
			} else if hdr.Typeflag == tar.TypeLink {
				link = " link to " + hdr.Linkname
			}
			owner := hdr.Uname
			if owner == "" {
				owner = strconv.Itoa(hdr.Uid)
			}
			group := hdr.Gname
			if group == "" {
				group = strconv.Itoa(hdr.Gid)
			}
			fmt.Fprintf(env.Stdout, "%s %s/%s %*s %s %s%s\n", fileModeString(hdr.FileInfo().Mode()), owner, group,
				max(0, 18-len(owner)-len(group)), size, hdr.ModTime.Local().Format("2006-01-02 15:04"), hdr.Name, link)
		default:
			fmt.Fprintln(env.Stdout, hdr.Name)
		}
	}
}

// tarTarget is the shell's filesystem as archive.Extract writes to it. The
// shell has no owners to give and no special files to make.
type tarTarget struct{ FS }

func (t tarTarget) Create(name string, perm fs.FileMode) (io.WriteCloser, error) {
	return t.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

func (tarTarget) Chown(name string, _, _ int) error {
	return &fs.PathError{Op: "chown", Path: name, Err: syscall.EPERM}
}

func (tarTarget) Mknod(name string, _ uint32, _ uint64) error {
	return &fs.PathError{Op: "mknod", Path: name, Err: syscall.EPERM}
}

func fileGzip(ctx context.Context, env *Env, args []string, decompress, toStdout bool) int {
	// GNU's gunzip and zcat are scripts around gzip: messages say gzip.
	const cmd = "gzip"
	opts, ops, err := textParse(args[1:], textSpec{flags: "dckfvqnNrtl123456789", withArg: "S", long: map[string]string{
		"--decompress": "d", "--uncompress": "d", "--stdout": "c", "--to-stdout": "c", "--keep": "k",
		"--force": "f", "--verbose": "v", "--quiet": "q", "--suffix": "S=", "--test": "t", "--best": "9", "--fast": "1",
	}})
	if err != nil {
		return textUsage(env, cmd, err, 1)
	}
	keep, force, test := false, false, false
	level := gzip.DefaultCompression
	suffix := ".gz"
	for _, o := range opts {
		switch o.Name {
		case "d":
			decompress = true
		case "c":
			toStdout = true
		case "k":
			keep = true
		case "f":
			force = true
		case "t":
			test, decompress = true, true
		case "S":
			suffix = o.Val
		default:
			if o.Name[0] >= '1' && o.Name[0] <= '9' {
				level = int(o.Name[0] - '0')
			}
		}
	}
	convert := func(r io.Reader, w io.Writer, name string) error {
		if decompress {
			zr, err := gzip.NewReader(r)
			switch {
			case errors.Is(err, io.EOF):
				return errors.New("unexpected end of file")
			case errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF):
				return errors.New("not in gzip format")
			case err != nil:
				return err
			}
			if test {
				w = io.Discard
			}
			_, err = io.Copy(w, ctxReader{ctx, zr})
			return err
		}
		zw, _ := gzip.NewWriterLevel(w, level)
		zw.Name = name
		if _, err := io.Copy(zw, ctxReader{ctx, r}); err != nil {
			return err
		}
		return zw.Close()
	}
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	status := 0
	for _, name := range ops {
		if ctx.Err() != nil {
			return 1
		}
		if name == "-" {
			bw := bufio.NewWriter(env.Stdout)
			if err := convert(env.Stdin, bw, ""); err != nil {
				env.Errorf(cmd, "stdin: %v", err)
				status = 1
			}
			bw.Flush()
			continue
		}
		abs := env.Abs(name)
		fi, err := env.FS.Stat(abs)
		if err != nil {
			textFileErr(env, cmd, name, err)
			status = 1
			continue
		}
		if fi.IsDir() {
			env.Errorf(cmd, "%s is a directory -- ignored", name)
			status = 2
			continue
		}
		var outName string
		switch {
		case toStdout || test:
		case decompress && strings.HasSuffix(name, ".tgz"):
			outName = strings.TrimSuffix(name, ".tgz") + ".tar"
		case decompress && strings.HasSuffix(name, suffix):
			outName = strings.TrimSuffix(name, suffix)
		case decompress:
			env.Errorf(cmd, "%s: unknown suffix -- ignored", name)
			status = 2
			continue
		case strings.HasSuffix(name, suffix) && !force:
			env.Errorf(cmd, "%s already has %s suffix -- unchanged", name, suffix)
			continue
		default:
			outName = name + suffix
		}
		in, err := env.FS.Open(abs)
		if err != nil {
			textFileErr(env, cmd, name, err)
			status = 1
			continue
		}
		if outName == "" {
			bw := bufio.NewWriter(env.Stdout)
			err = convert(in, bw, path.Base(name))
			bw.Flush()
			in.Close()
			if err != nil {
				env.Errorf(cmd, "%s: %v", name, err)
				status = 1
			}
			continue
		}
		outAbs := env.Abs(outName)
		if fileExists(env, outAbs) && !force {
			in.Close()
			env.Errorf(cmd, "%s already exists;\tnot overwritten", outName)
			status = 2
			continue
		}
		out, err := env.FS.OpenFile(outAbs, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
		if err != nil {
			in.Close()
			textFileErr(env, cmd, outName, err)
			status = 1
			continue
		}
		bw := bufio.NewWriterSize(out, 64<<10)
		err = convert(in, bw, path.Base(name))
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		in.Close()
		if err != nil {
			env.Errorf(cmd, "%s: %v", name, err)
			_ = env.FS.Remove(outAbs)
			status = 1
			continue
		}
		_ = env.FS.Chtimes(outAbs, fi.ModTime(), fi.ModTime())
		if !keep {
			_ = env.FS.Remove(abs)
		}
	}
	return status
}
