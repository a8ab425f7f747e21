package git

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"strings"

	fconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// cmdConfig gets, sets and unsets keys of the repository's config, or of
// ~/.gitconfig with --global.
func cmdConfig(s *session, args []string) error {
	global, unset := false, false
	var rest []string
	for _, a := range args {
		switch a {
		case "--local":
		case "--global":
			global = true
		case "--unset":
			unset = true
		default:
			if strings.HasPrefix(a, "-") {
				return unsupported("git config " + a)
			}
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 || len(rest) > 2 || (unset && len(rest) != 1) {
		return unsupported("git config with these arguments")
	}
	var fs *billyFS
	name := "config"
	if global {
		home := s.env.Getenv("HOME")
		if home == "" {
			return fatalf("$HOME not set")
		}
		fs, name = newBillyFS(s.ctx, s.env.FS, home), ".gitconfig"
	} else {
		r, err := s.open()
		if err != nil {
			return err
		}
		fs = r.dot
	}
	raw := fconfig.New()
	data, err := readAll(fs, name)
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	if err := fconfig.NewDecoder(bytes.NewReader(data)).Decode(raw); err != nil {
		return fatalf("bad config file %s: %v", name, err)
	}
	key := rest[0]
	section, sub, opt, ok := splitKey(key)
	if !ok {
		return errorf(1, "error: key does not contain a section: %s\n", key)
	}
	if len(rest) == 1 && !unset {
		v, ok := lookupRaw(raw, strings.ToLower(section)+"."+sub+"."+strings.ToLower(opt))
		if sub == "" {
			v, ok = lookupRaw(raw, strings.ToLower(key))
		}
		if !ok {
			return &exitError{code: 1}
		}
		fmt.Fprintln(s.out, v)
		return nil
	}
	sec := raw.Section(section)
	opts := &sec.Options
	if sub != "" {
		opts = &sec.Subsection(sub).Options
	}
	if unset {
		if !opts.Has(opt) {
			return &exitError{code: 5}
		}
		if sub != "" {
			sec.Subsection(sub).RemoveOption(opt)
		} else {
			sec.RemoveOption(opt)
		}
	} else {
		raw.SetOption(section, sub, opt, rest[1])
	}
	var buf bytes.Buffer
	if err := fconfig.NewEncoder(&buf).Encode(raw); err != nil {
		return err
	}
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
