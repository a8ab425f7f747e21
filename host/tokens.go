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

func (d *Dir) tokens(p string) ([]Token, error) {
	b, err := os.ReadFile(filepath.Join(p, tokensName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ts []Token
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("token file of %s: %w", filepath.Base(p), err)
	}
	return ts, nil
}

func (d *Dir) saveTokens(p string, ts []Token) error {
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
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
	ts = slices.DeleteFunc(ts, func(t Token) bool { return t.Expired(now) })
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
	ts = slices.DeleteFunc(ts, func(t Token) bool { return t.ID == tid })
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
