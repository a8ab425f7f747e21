package replica

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"
)

// ErrBadURL is wrapped by the refusal of a replica URL.
var ErrBadURL = errors.New("bad replica URL")

// URL is a replica in Litestream's form,
// s3://BUCKET/PATH?endpoint=http://HOST:PORT&forcePathStyle=true.
type URL struct {
	u *url.URL
}

// ParseURL checks s is an s3:// URL with a bucket and a path, and an
// endpoint (when given) that is an http(s) URL with a host.
func ParseURL(s string) (URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return URL{}, fmt.Errorf("%w %q: %w", ErrBadURL, s, err)
	}
	bad := func(why string) (URL, error) {
		return URL{}, fmt.Errorf("%w %q: %s; want s3://BUCKET/PATH[?endpoint=http://HOST:PORT&forcePathStyle=true]", ErrBadURL, s, why)
	}
	switch {
	case u.Scheme != "s3":
		return bad("scheme must be s3")
	case u.Host == "":
		return bad("no bucket")
	case u.User != nil:
		return bad("credentials do not belong in the URL (use the environment or --replica-credentials)")
	case strings.Trim(u.Path, "/") == "":
		return bad("no path after the bucket")
	case u.Fragment != "":
		return bad("a fragment (#) means nothing here")
	}
	if strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") || strings.Contains(u.Path, "/./") {
		return bad("the path must not contain . or .. segments")
	}
	for k, vs := range u.Query() {
		switch k {
		case "endpoint":
			e, err := url.Parse(vs[0])
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return bad("endpoint must be http://HOST[:PORT] or https://HOST[:PORT]")
			}
		case "forcePathStyle", "skipVerify":
			if v := vs[0]; v != "true" && v != "false" {
				return bad(k + " must be true or false")
			}
		case "region":
		default:
			return bad("unknown parameter " + k + " (endpoint, region, forcePathStyle, skipVerify)")
		}
	}
	return URL{u: u}, nil
}

// String is the URL as Litestream takes it.
func (r URL) String() string { return r.u.String() }

// Redacted is the URL for logs (it never holds credentials, but an
// endpoint's query could).
func (r URL) Redacted() string { return r.u.Redacted() }

// Join is the URL of the replica at elem under r's path: a workspace's
// store under a host's replica (Litestream's dir mode appends each
// store's path relative to the directory).
func (r URL) Join(elem ...string) URL {
	u := *r.u
	u.Path = path.Join(append([]string{u.Path}, elem...)...)
	u.RawPath = ""
	return URL{u: &u}
}

// Credentials are the object store's keys, handed to Litestream through
// its environment.
type Credentials struct {
	AccessKeyID, SecretAccessKey string
}

func (c Credentials) env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + c.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + c.SecretAccessKey}
}

// ErrCredentials is wrapped by a refused credentials file.
var ErrCredentials = errors.New("bad replica credentials")

// LoadCredentials reads keys from file ("" : the environment's
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY). The file holds
// AWS_ACCESS_KEY_ID=... and AWS_SECRET_ACCESS_KEY=... lines (blank lines
// and # comments allowed), the form of an env file or a Kubernetes Secret
// mounted with both keys, and is refused unless only its owner can read it
// (mode 0600 or 0400).
func LoadCredentials(file string) (Credentials, error) {
	if file == "" {
		c := Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")}
		if c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return c, fmt.Errorf("%w: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or give --replica-credentials FILE", ErrCredentials)
		}
		return c, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: %w", ErrCredentials, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: %w", ErrCredentials, err)
	}
	if !fi.Mode().IsRegular() {
		return Credentials{}, fmt.Errorf("%w: %s is not a regular file", ErrCredentials, file)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return Credentials{}, fmt.Errorf("%w: %s has mode %04o: others could read the keys; chmod 600 it", ErrCredentials, file, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return Credentials{}, fmt.Errorf("%w: %s: %w", ErrCredentials, file, err)
	}
	var c Credentials
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "=")
		switch k = strings.TrimSpace(k); {
		case !ok:
			return Credentials{}, fmt.Errorf("%w: %s:%d: want KEY=VALUE", ErrCredentials, file, line)
		case k == "AWS_ACCESS_KEY_ID":
			c.AccessKeyID = strings.TrimSpace(v)
		case k == "AWS_SECRET_ACCESS_KEY":
			c.SecretAccessKey = strings.TrimSpace(v)
		default:
			return Credentials{}, fmt.Errorf("%w: %s:%d: unknown key %s (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)", ErrCredentials, file, line, k)
		}
	}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return Credentials{}, fmt.Errorf("%w: %s must set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", ErrCredentials, file)
	}
	return c, nil
}
