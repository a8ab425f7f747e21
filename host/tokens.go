package host

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
)

const tokensName = "tokens.json"

// tokensMu serializes the changes of every workspace's token file.
var tokensMu sync.Mutex

// Token is a workspace token as it is kept beside the store: its secret
// only as a SHA-256, so the file gives no access.
type Token struct {
	ID      string     `json:"id"`
	Hash    string     `json:"sha256,omitempty"`
	Created time.Time  `json:"created"`
	Expires *time.Time `json:"expires,omitempty"`
}

// Expired says whether t no longer works at now.
func (t Token) Expired(now time.Time) bool { return t.Expires != nil && !now.Before(*t.Expires) }

// ErrNoToken: no token of the workspace has this id.
var ErrNoToken = errors.New("no such token")

func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// tokenCache keeps each workspace's token file as last read, keyed by
// its folder, so a request costs a stat, not a read and a parse. A file
// rewritten (always by rename: a new inode) or touched by anyone is read
// again, so a revocation takes effect at the next request.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]cachedTokens
}

type cachedTokens struct {
	ino   uint64
	mtime time.Time
	size  int64
	ts    []Token
}

// tokens is the tokens of the workspace in folder p; the caller must not
// change the slice.
func (d *Dir) tokens(p string) ([]Token, error) {
	file := filepath.Join(p, tokensName)
	fi, err := os.Lstat(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := cachedTokens{mtime: fi.ModTime(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		key.ino = st.Ino
	}
	d.tokenCache.mu.Lock()
	c, ok := d.tokenCache.m[p]
	d.tokenCache.mu.Unlock()
	if ok && c.ino == key.ino && c.mtime.Equal(key.mtime) && c.size == key.size {
		return c.ts, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var ts []Token
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("token file of %s: %w", filepath.Base(p), err)
	}
	key.ts = ts
	d.tokenCache.mu.Lock()
	if d.tokenCache.m == nil {
		d.tokenCache.m = map[string]cachedTokens{}
	}
	d.tokenCache.m[p] = key
	d.tokenCache.mu.Unlock()
	return ts, nil
}

// forgetTokens drops the cached tokens of the workspace in folder p.
func (d *Dir) forgetTokens(p string) {
	d.tokenCache.mu.Lock()
	delete(d.tokenCache.m, p)
	d.tokenCache.mu.Unlock()
}

func (d *Dir) saveTokens(p string, ts []Token) error {
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	// Forgotten before and after: a request meanwhile reads the file.
	d.forgetTokens(p)
	defer d.forgetTokens(p)
	return writeFileAtomic(filepath.Join(p, tokensName), b)
}

// MintToken makes a token valid for workspace id only, until ttl passes (0:
// until revoked). The secret is returned once and kept only hashed.
func (d *Dir) MintToken(id string, ttl time.Duration) (Token, string, error) {
	if ttl < 0 {
		return Token{}, "", fmt.Errorf("%w: negative ttl", errBadToken)
	}
	tokensMu.Lock()
	defer tokensMu.Unlock()
	p, err := d.path(id)
	if err != nil {
		return Token{}, "", err
	}
	ts, err := d.tokens(p)
	if err != nil {
		return Token{}, "", err
	}
	secret := "sqlfs_" + api.NewToken()
	now := time.Now().UTC().Truncate(time.Second)
	t := Token{ID: "t" + strings.ToLower(NewID()[:12]), Hash: hashToken(secret), Created: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		t.Expires = &exp
	}
	// Expired tokens are dropped here, so the file stays small.
	ts = slices.DeleteFunc(slices.Clone(ts), func(t Token) bool { return t.Expired(now) })
	if err := d.saveTokens(p, append(ts, t)); err != nil {
		return Token{}, "", err
	}
	t.Hash = ""
	return t, secret, nil
}

var errBadToken = errors.New("bad token request")

// Tokens lists the tokens of workspace id, without their hashes.
func (d *Dir) Tokens(id string) ([]Token, error) {
	p, err := d.path(id)
	if err != nil {
		return nil, err
	}
	ts, err := d.tokens(p)
	ts = slices.Clone(ts)
	for i := range ts {
		ts[i].Hash = ""
	}
	if ts == nil {
		ts = []Token{}
	}
	return ts, err
}

// RevokeToken ends token tid of workspace id.
func (d *Dir) RevokeToken(id, tid string) error {
	tokensMu.Lock()
	defer tokensMu.Unlock()
	p, err := d.path(id)
	if err != nil {
		return err
	}
	ts, err := d.tokens(p)
	if err != nil {
		return err
	}
	n := len(ts)
	ts = slices.DeleteFunc(slices.Clone(ts), func(t Token) bool { return t.ID == tid })
	if len(ts) == n {
		return fmt.Errorf("%w: %q of workspace %s", ErrNoToken, tid, id)
	}
	return d.saveTokens(p, ts)
}

// ValidToken says whether secret is an unexpired token of workspace id.
func (d *Dir) ValidToken(id, secret string) bool {
	p, err := d.path(id)
	if err != nil || secret == "" {
		return false
	}
	ts, err := d.tokens(p)
	if err != nil {
		return false
	}
	h := []byte(hashToken(secret))
	now := time.Now()
	ok := false
	for _, t := range ts {
		if subtle.ConstantTimeCompare(h, []byte(t.Hash)) == 1 && !t.Expired(now) {
			ok = true
		}
	}
	return ok
}
