package api

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
		// No Authorization header can carry these: a server no client reaches.
		{"two lines", good + "\n" + good + "\n", 0o600, ErrWeakToken, "control character"},
		{"control character", good + "\x00", 0o600, ErrWeakToken, "control character"},
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
	// A fifo in place of the token file blocked the open for ever (serve
	// hung at start) before the not-a-regular-file check.
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadTokenFile(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrWeakToken) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("fifo: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadTokenFile blocked on a fifo")
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || CheckToken(a) != nil || len(a) < 2*MinTokenLen {
		t.Errorf("tokens %q %q", a, b)
	}
}
