package git

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"sort"
	"strings"

	fconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// configFile is one config file: ~/.gitconfig or a repository's config.
type configFile struct {
	fs   *billyFS
	name string
	raw  *fconfig.Config
}

// readConfigFile reads a config file; a missing one is empty.
func readConfigFile(fs *billyFS, name string) (*configFile, error) {
	cf := &configFile{fs: fs, name: name, raw: fconfig.New()}
	data, err := readAll(fs, name)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, err
	}
	if err := fconfig.NewDecoder(bytes.NewReader(data)).Decode(cf.raw); err != nil {
		return nil, fatalf("bad config file %s: %v", name, err)
	}
	return cf, nil
}

func (cf *configFile) write() error {
	var buf bytes.Buffer
	if err := fconfig.NewEncoder(&buf).Encode(cf.raw); err != nil {
		return err
	}
	f, err := cf.fs.Create(cf.name)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// entries lists the file's keys and values in file order, named as
// git config --list names them (section and key lower case).
func (cf *configFile) entries() [][2]string {
	var out [][2]string
	for _, sec := range cf.raw.Sections {
		name := strings.ToLower(sec.Name)
		for _, o := range sec.Options {
			out = append(out, [2]string{name + "." + strings.ToLower(o.Key), o.Value})
		}
		for _, sub := range sec.Subsections {
			for _, o := range sub.Options {
				out = append(out, [2]string{name + "." + sub.Name + "." + strings.ToLower(o.Key), o.Value})
			}
		}
	}
	return out
}

// values are the values of key in the file, in order.
func (cf *configFile) values(key string) []string {
	section, sub, opt, ok := splitKey(key)
	if !ok || !cf.raw.HasSection(section) {
		return nil
	}
	sec := cf.raw.Section(section)
	if sub == "" {
		return sec.OptionAll(opt)
	}
	if !sec.HasSubsection(sub) {
		return nil
	}
	return sec.Subsection(sub).OptionAll(opt)
}

// unsetAll removes every value of key, and the section if it is left
// empty, as git does.
func (cf *configFile) unsetAll(section, sub, opt string) bool {
	if !cf.raw.HasSection(section) {
		return false
	}
	sec := cf.raw.Section(section)
	if sub == "" {
		if !sec.HasOption(opt) {
			return false
		}
		sec.RemoveOption(opt)
		if len(sec.Options) == 0 && len(sec.Subsections) == 0 {
			cf.raw.RemoveSection(section)
		}
		return true
	}
	if !sec.HasSubsection(sub) || !sec.Subsection(sub).HasOption(opt) {
		return false
	}
	ss := sec.Subsection(sub)
	ss.RemoveOption(opt)
	if len(ss.Options) == 0 {
		cf.raw.RemoveSubsection(section, sub)
		if len(sec.Options) == 0 && len(cf.raw.Section(section).Subsections) == 0 {
			cf.raw.RemoveSection(section)
		}
	}
	return true
}

// cmdConfig gets, lists, sets and unsets keys. Reads without a scope see
// ~/.gitconfig and then the repository's config (the later wins), and -c
// overrides; writes go to the repository's config, or ~/.gitconfig with
// --global.
func cmdConfig(s *session, args []string) error {
	scope := ""
	action := ""
	var rest []string
	for _, a := range args {
		switch a {
		case "--local", "--global":
			scope = a[2:]
		case "--unset", "--get", "--get-all", "--add":
			action = a[2:]
		case "--list", "-l":
			action = "list"
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git config " + a)
			}
			rest = append(rest, a)
		}
	}
	if action == "" {
		switch len(rest) {
		case 1:
			action = "get"
		case 2:
			action = "set"
		}
	}
	want := map[string]int{"list": 0, "get": 1, "get-all": 1, "unset": 1, "set": 2, "add": 2}
	if n, ok := want[action]; !ok || len(rest) != n {
		return unsupported("git config with these arguments")
	}
	files, err := s.configFiles(scope, action != "list" && action != "get" && action != "get-all")
	if err != nil {
		return err
	}
	if action == "list" {
		if scope == "global" {
			if _, err := files[0].fs.Stat(files[0].name); err != nil {
				return fatalf("unable to read config file '%s': No such file or directory", files[0].fs.root+"/.gitconfig")
			}
		}
		for _, cf := range files {
			for _, kv := range cf.entries() {
				fmt.Fprintf(s.out, "%s=%s\n", kv[0], kv[1])
			}
		}
		if scope == "" {
			keys := make([]string, 0, len(s.overrides))
			for k := range s.overrides {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(s.out, "%s=%s\n", k, s.overrides[k])
			}
		}
		return nil
	}
	key := rest[0]
	section, sub, opt, ok := splitKey(key)
	if !ok {
		return errorf(1, "error: key does not contain a section: %s\n", key)
	}
	switch action {
	case "get", "get-all":
		var vals []string
		for _, cf := range files {
			vals = append(vals, cf.values(key)...)
		}
		if v, ok := s.overrides[strings.ToLower(key)]; ok && scope == "" {
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return &exitError{code: 1}
		}
		if action == "get" {
			vals = vals[len(vals)-1:]
		}
		for _, v := range vals {
			fmt.Fprintln(s.out, v)
		}
		return nil
	}
	cf := files[0]
	switch action {
	case "unset":
		if !cf.unsetAll(section, sub, opt) {
			return &exitError{code: 5}
		}
	case "add":
		cf.raw.AddOption(section, sub, opt, rest[1])
	default:
		cf.set(section, sub, opt, rest[1])
	}
	return cf.write()
}

// configFiles are the files a config command reads, in order, or the one
// it writes.
func (s *session) configFiles(scope string, writing bool) ([]*configFile, error) {
	var files []*configFile
	if scope == "global" || scope == "" && !writing {
		home := s.env.Getenv("HOME")
		if home == "" {
			return nil, fatalf("$HOME not set")
		}
		cf, err := readConfigFile(newBillyFS(s.ctx, s.env.FS, home), ".gitconfig")
		if err != nil {
			return nil, err
		}
		files = append(files, cf)
	}
	if scope == "global" {
		return files, nil
	}
	r, err := s.open()
	if err != nil {
		if scope == "" && !writing && errors.As(err, new(*exitError)) {
			return files, nil // outside a repository: ~/.gitconfig only
		}
		if scope == "local" {
			return nil, fatalf("--local can only be used inside a git repository")
		}
		return nil, err
	}
	cf, err := readConfigFile(r.dot, "config")
	if err != nil {
		return nil, err
	}
	if writing {
		return []*configFile{cf}, nil
	}
	return append(files, cf), nil
}

// set sets the first value of key where it is, as git does (go-git's
// SetOption moves it to the end), or adds it.
func (cf *configFile) set(section, sub, key, value string) {
	sec := cf.raw.Section(section)
	opts := &sec.Options
	if sub != "" {
		opts = &sec.Subsection(sub).Options
	}
	for _, o := range *opts {
		if o.IsKey(key) {
			o.Value = value
			return
		}
	}
	*opts = append(*opts, &fconfig.Option{Key: key, Value: value})
}
