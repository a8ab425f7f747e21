package api

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// MinTokenLen is the shortest bearer token accepted: 16 bytes, 128 bits
// when random.
const MinTokenLen = 16

// ErrWeakToken is wrapped by every refusal of a token or token file.
var ErrWeakToken = errors.New("weak bearer token")

// NewToken returns a random token: 32 bytes from crypto/rand in base32
// (52 characters), safe in a header and a shell.
func NewToken() string { return rand.Text() + rand.Text() }

// CheckToken refuses a token shorter than MinTokenLen.
func CheckToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("%w: %d bytes, want at least %d (make one with `sqlfs-exec token`)", ErrWeakToken, len(tok), MinTokenLen)
	}
	return nil
}

// ReadTokenFile reads a bearer token from file, which must be readable by
// its owner only (mode 0600 or 0400) and hold at least MinTokenLen bytes
// besides surrounding white space.
func ReadTokenFile(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%w: token file %s has mode %04o, other users can read it: chmod 600 %s", ErrWeakToken, file, perm, file)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: token file %s is not a regular file", ErrWeakToken, file)
	}
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return "", fmt.Errorf("token file %s: %w", file, err)
	}
	tok := strings.TrimSpace(string(b[:n]))
	if err := CheckToken(tok); err != nil {
		return "", fmt.Errorf("token file %s: %w", file, err)
	}
	return tok, nil
}

// authorized reports whether r carries "Authorization: Bearer TOKEN"; the
// scheme is case-insensitive (RFC 9110, section 11.1).
func authorized(r *http.Request, token string) bool {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(token)) == 1
}
