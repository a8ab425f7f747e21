// Package publish serves workspace files and directories to anyone holding
// a signed, expiring link: an HMAC-SHA256 over the path and the expiry with
// a per-store key kept (mode 0600) beside the store. A bad or expired
// signature is a 404, so a link reveals nothing about what exists.
// Rotating the key revokes every link at once.
package publish

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// DefaultTTL is how long a link lives when the caller names no TTL.
const DefaultTTL = time.Hour

// MaxTTL bounds a link's life: a longer one is a standing leak.
const MaxTTL = 30 * 24 * time.Hour

// KeyPath is where the signing key of the store at storePath lives.
func KeyPath(storePath string) string { return storePath + ".publish-key" }

// BaseURLPath is where a serving process writes its public base URL, so
// `sqlfs-exec publish` can make links for it.
func BaseURLPath(storePath string) string { return storePath + ".publish-url" }

// ErrNoBaseURL is returned when nobody serves links for the store.
var ErrNoBaseURL = errors.New("no public listener: start `sqlfs-exec serve --public-addr HOST:PORT` or pass --base-url")

// Links signs and checks the links of one store. The key file is read
// again at every use, so a rotation by another process (sqlfs-exec publish
// --revoke-all) holds from the next request on.
type Links struct {
	keyPath string
	BaseURL string // e.g. http://host:8080; links are BaseURL/p/PATH?e=..&s=..

	mu  sync.Mutex
	key []byte
	raw []byte // the file's contents key was decoded from
}

// Open returns the links of the store at storePath, creating its key when
// missing.
func Open(storePath, baseURL string) (*Links, error) {
	l := &Links{keyPath: KeyPath(storePath), BaseURL: strings.TrimSuffix(baseURL, "/")}
	if _, err := l.currentKey(); errors.Is(err, os.ErrNotExist) {
		if err := RotateKey(storePath); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return l, nil
}

// RotateKey writes a new random key for the store, revoking every link.
func RotateKey(storePath string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("publish key: %w", err)
	}
	path := KeyPath(storePath)
	// A temporary file of its own (mode 0600), so two rotations at once
	// cannot mix their keys.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("publish key: %w", err)
	}
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("publish key: %w", err)
	}
	return nil
}

func (l *Links) currentKey() ([]byte, error) {
	f, err := os.Open(l.keyPath)
	if err != nil {
		return nil, fmt.Errorf("publish key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("publish key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("publish key %s: mode %v lets others read it; it must be 0600", l.keyPath, fi.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("publish key: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.key != nil && bytes.Equal(data, l.raw) {
		return l.key, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("publish key %s: not a hex key of at least 16 bytes", l.keyPath)
	}
	l.key, l.raw = key, data
	return key, nil
}

func sign(key []byte, p string, exp int64) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s\n%d", p, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// URL returns a link to the workspace path p valid for ttl (0 means
// DefaultTTL).
func (l *Links) URL(p string, ttl time.Duration) (string, error) {
	if l.BaseURL == "" {
		return "", ErrNoBaseURL
	}
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < 0 || ttl > MaxTTL {
		return "", fmt.Errorf("ttl %v: must be between 1s and %v", ttl, MaxTTL)
	}
	key, err := l.currentKey()
	if err != nil {
		return "", err
	}
	p = sfs.Clean(p)
	exp := time.Now().Add(ttl).Unix()
	u := l.BaseURL + "/p" + (&url.URL{Path: p}).EscapedPath()
	return u + "?e=" + strconv.FormatInt(exp, 10) + "&s=" + sign(key, p, exp), nil
}

// Signed returns the path r asks for (GET or HEAD of /p/PATH) when its
// link is valid: signed with the current key and not expired.
func (l *Links) Signed(r *http.Request) (string, bool) {
	p, ok := strings.CutPrefix(r.URL.Path, "/p/")
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return "", false
	}
	p = sfs.Clean(p)
	q := r.URL.Query()
	return p, l.verify(p, q.Get("e"), q.Get("s"))
}

// verify reports whether sig signs p until exp and exp has not passed.
func (l *Links) verify(p, exp, sig string) bool {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || time.Now().Unix() > e {
		return false
	}
	key, err := l.currentKey()
	if err != nil {
		return false
	}
	want := sign(key, p, e)
	return hmac.Equal([]byte(want), []byte(sig))
}

// Publisher makes links for the publish tool and the js backend's
// sqlfs:publish, checking that the path exists and recording the
// publication in the audit trail.
type Publisher struct {
	Links *Links
	FS    *sfs.FS
}

// PublishAs makes a link to path for actor (js.PublishFunc).
func (p Publisher) PublishAs(_ context.Context, actor, path string, ttl time.Duration) (string, error) {
	if _, err := p.FS.WithActor(actor).Stat(path); err != nil {
		return "", fmt.Errorf("publish %s: %w", path, err)
	}
	u, err := p.Links.URL(path, ttl)
	if err != nil {
		return "", err
	}
	p.FS.WithActor(actor).Record("publish", path, nil)
	published.Inc()
	return u, nil
}
