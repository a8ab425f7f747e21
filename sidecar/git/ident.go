package git

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	fconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// configValue looks a key up in -c overrides, the repository's config and
// the user's ~/.gitconfig (in the view), in that order.
func (r *repo) configValue(key string) (string, bool) {
	key = strings.ToLower(key)
	if v, ok := r.overrides[key]; ok {
		return v, true
	}
	if cfg, err := r.r.Config(); err == nil {
		if v, ok := lookupRaw(cfg.Raw, key); ok {
			return v, true
		}
	}
	if home := r.env.Getenv("HOME"); home != "" {
		return userConfigValue(newBillyFS(r.ctx, r.env.FS, home), key)
	}
	return "", false
}

// userConfigValue reads key from .gitconfig in the home directory.
func userConfigValue(home *billyFS, key string) (string, bool) {
	data, err := readAll(home, ".gitconfig")
	if err != nil {
		return "", false
	}
	cfg := config.NewConfig()
	if cfg.Unmarshal(data) != nil {
		return "", false
	}
	return lookupRaw(cfg.Raw, key)
}

// splitKey splits section[.subsection].name.
func splitKey(key string) (section, sub, name string, ok bool) {
	i := strings.Index(key, ".")
	j := strings.LastIndex(key, ".")
	if i < 0 || j == len(key)-1 || i == 0 {
		return "", "", "", false
	}
	section, name = key[:i], key[j+1:]
	if i != j {
		sub = key[i+1 : j]
	}
	return section, sub, name, true
}

func lookupRaw(raw *fconfig.Config, key string) (string, bool) {
	section, sub, name, ok := splitKey(key)
	if !ok || !raw.HasSection(section) {
		return "", false
	}
	s := raw.Section(section)
	opts := s.Options
	if sub != "" {
		if !s.HasSubsection(sub) {
			return "", false
		}
		opts = s.Subsection(sub).Options
	}
	if !opts.Has(name) {
		return "", false
	}
	return opts.Get(name), true
}

// signature builds the author or committer ("AUTHOR"/"COMMITTER") from the
// GIT_* environment and user.* config, and the date from GIT_*_DATE.
func (r *repo) signature(who string) (*object.Signature, error) {
	name := r.env.Getenv("GIT_" + who + "_NAME")
	email := r.env.Getenv("GIT_" + who + "_EMAIL")
	if name == "" {
		name, _ = r.configValue("user.name")
	}
	if email == "" {
		email, _ = r.configValue("user.email")
	}
	if name == "" || email == "" {
		return nil, &exitError{code: 128, msg: identityHelp}
	}
	when := time.Now()
	if d := r.env.Getenv("GIT_" + who + "_DATE"); d != "" {
		t, err := parseDate(d, r.localZone())
		if err != nil {
			return nil, fatalf("invalid date format: %s", d)
		}
		when = t
	}
	return &object.Signature{Name: name, Email: email, When: when}, nil
}

const identityHelp = `Author identity unknown

*** Please tell me who you are.

Run

  git config --global user.email "you@example.com"
  git config --global user.name "Your Name"

to set your account's default identity.
Omit --global to set the identity only in this repository.

fatal: unable to auto-detect email address
`

// parseDate reads the date forms git documents for GIT_*_DATE: git's
// internal "<unix> <tz>" (optionally with "@"), RFC 2822 and ISO 8601
// (a T or a space between date and time, fractional seconds, an offset as
// -0800, -08:00 or Z, or none: then the time is local, in loc).
func parseDate(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if f := strings.Fields(strings.TrimPrefix(s, "@")); len(f) <= 2 && len(f) > 0 {
		if sec, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			loc := time.UTC
			if len(f) == 2 {
				l, err := parseTZ(f[1])
				if err != nil {
					return time.Time{}, err
				}
				loc = l
			}
			return time.Unix(sec, 0).In(loc), nil
		}
	}
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unknown date format %q", s)
}

// dateLayouts are the RFC 2822 and ISO 8601 forms parseDate takes. Go
// accepts fractional seconds after the seconds of any of them, and Z for
// the offset where the layout has Z0700 or Z07:00.
var dateLayouts = []string{
	time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 -0700",
	"2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05 -0700", "2006-01-02T15:04:05 -07:00",
	"2006-01-02 15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 -07:00",
	"2006-01-02T15:04:05", "2006-01-02 15:04:05",
}

func parseTZ(tz string) (*time.Location, error) {
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') {
		return nil, fmt.Errorf("bad time zone %q", tz)
	}
	h, err1 := strconv.Atoi(tz[1:3])
	m, err2 := strconv.Atoi(tz[3:5])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("bad time zone %q", tz)
	}
	off := h*3600 + m*60
	if tz[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), nil
}

// localZone is the time zone of the command's TZ (UTC without one): the
// zone of a date given without an offset, as git reads it.
func (r *repo) localZone() *time.Location {
	if loc, err := time.LoadLocation(r.env.Getenv("TZ")); err == nil {
		return loc
	}
	return time.UTC
}

// identities are the author and committer of a new commit.
func (r *repo) identities() (author, committer *object.Signature, err error) {
	if committer, err = r.signature("COMMITTER"); err != nil {
		return nil, nil, err
	}
	if author, err = r.signature("AUTHOR"); err != nil {
		return nil, nil, err
	}
	return author, committer, nil
}
