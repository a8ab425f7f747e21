package api

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"unicode"
)

// MinTokenLen is the shortest bearer token accepted: 16 bytes, 128 bits
// when random.
const MinTokenLen = 16

// ErrWeakToken is wrapped by every refusal of a token or token file.
var ErrWeakToken = errors.New("weak bearer token")

// NewToken returns a random token: 32 bytes from crypto/rand in base32
// (52 characters), safe in a header and a shell.
func NewToken() string { return rand.Text() + rand.Text() }

// CheckToken refuses a token shorter than MinTokenLen, or one holding a
// control character (a line break, say), which no Authorization header can
// carry.
func CheckToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("%w: %d bytes, want at least %d (make one with `sqlfs-exec token`)", ErrWeakToken, len(tok), MinTokenLen)
	}
	if i := strings.IndexFunc(tok, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%w: control character at byte %d, which no HTTP header can carry (one token on one line)", ErrWeakToken, i)
	}
	return nil
}

// ReadTokenFile reads a bearer token from file, which must be readable by
// its owner only (mode 0600 or 0400) and hold at least MinTokenLen bytes
// besides surrounding white space.
func ReadTokenFile(file string) (string, error) {
	// Non-blocking: opening a fifo for reading would wait for a writer
	// before the check below could refuse it.
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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

// Authorized reports whether r carries "Authorization: Bearer TOKEN".
func Authorized(r *http.Request, token string) bool {
	cred, ok := BearerToken(r)
	return ok && subtle.ConstantTimeCompare([]byte(cred), []byte(token)) == 1
}

// BearerToken returns the token of r's "Authorization: Bearer TOKEN"
// header; the scheme is case-insensitive (RFC 9110, section 11.1).
func BearerToken(r *http.Request) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(cred), true
}
