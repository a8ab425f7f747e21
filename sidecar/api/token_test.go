package api

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTokenFile(t *testing.T) {
	good := NewToken()
	cases := []struct {
		name    string
		content string
		mode    fs.FileMode
		want    error // nil: accepted
		msg     string
	}{
		{"0600", good + "\n", 0o600, nil, ""},
		{"0400", good, 0o400, nil, ""},
		{"world readable", good, 0o644, ErrWeakToken, "chmod 600"},
		{"group readable", good, 0o640, ErrWeakToken, "mode 0640"},
		{"five characters", "abcde\n", 0o600, ErrWeakToken, "5 bytes"},
		{"fifteen bytes", strings.Repeat("x", 15), 0o600, ErrWeakToken, "at least 16"},
		{"blank", "   \n", 0o600, ErrWeakToken, "0 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(file, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, c.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			tok, err := ReadTokenFile(file)
			if c.want == nil {
				if err != nil || tok != strings.TrimSpace(c.content) {
					t.Fatalf("got %q, %v", tok, err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, c.want, c.msg)
			}
		})
	}
	if _, err := ReadTokenFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || CheckToken(a) != nil || len(a) < 2*MinTokenLen {
		t.Errorf("tokens %q %q", a, b)
	}
}
