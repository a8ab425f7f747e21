package api

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// connectEnv makes the test binary a client that dials the socket it names
// and exits 0 only if the dial succeeded.
const connectEnv = "SQLFS_TEST_DIAL_SOCKET"

func TestMain(m *testing.M) {
	if sock := os.Getenv(connectEnv); sock != "" {
		c, err := net.Dial("unix", sock)
		if err != nil {
			os.Exit(3)
		}
		c.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The control socket is the owner's alone: another host user (uid 65534)
// cannot connect, even when every directory on the way is open to it.
func TestControlSocketPrivateToOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Require(t, "dialing as another user needs root", errors.New("not root"))
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(dir, "ws.sock")
	ln, err := Listen("unix:"+sock, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	// The test binary lives in a private build directory: copy it where
	// uid 65534 can run it, so a refusal is the socket's, not exec's.
	bin := filepath.Join(dir, "client")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dial := func(uid uint32) error {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), connectEnv+"="+sock)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		return cmd.Run()
	}
	if err := dial(0); err != nil {
		t.Fatalf("the owner's user cannot connect: %v", err)
	}
	var exit *exec.ExitError
	if err := dial(65534); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("uid 65534 dialing the control socket: %v, want a refused dial (exit 3)", err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
}
