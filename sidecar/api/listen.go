package api

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// SocketPath is the default control socket of a store: STORE.sock.
func SocketPath(store string) string {
	if abs, err := filepath.Abs(store); err == nil {
		store = abs
	}
	return store + ".sock"
}

// Advertised is how an owner names its listener addr to later openers: a
// Unix socket as "unix:" and an absolute path, so a client started in
// another directory, or reading a relative name, never takes it for a host.
func Advertised(addr string) string {
	sock, isUnix := unixPath(addr)
	if !isUnix {
		return addr
	}
	if abs, err := filepath.Abs(sock); err == nil {
		sock = abs
	}
	return "unix:" + sock
}

// ErrTokenRequired refuses a TCP listener without a bearer token.
var ErrTokenRequired = errors.New("listening on TCP requires a bearer token (--token-file)")

// Listen opens addr: "unix:PATH" (or a path) for a Unix socket, created
// with mode 0600 so only the owner's user can connect; anything else is
// HOST:PORT and needs a token. A socket file left by a dead owner is
// replaced; the store's owner lock guarantees nobody else serves it.
func Listen(addr string, haveToken bool) (net.Listener, error) {
	sock, isUnix := unixPath(addr)
	if !isUnix {
		if !haveToken {
			return nil, ErrTokenRequired
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		return ln, nil
	}
	// Bind under a temporary name, restrict it, then rename it into place,
	// so the socket is never reachable with a wider mode.
	tmp := filepath.Join(filepath.Dir(sock), "."+filepath.Base(sock)+fmt.Sprintf(".%d.tmp", os.Getpid()))
	_ = os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", sock, err)
	}
	ul := ln.(*net.UnixListener)
	// The rename below moves the name; stop Close from unlinking the old one.
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("listen %s: %w", sock, err)
	}
	if err := os.Rename(tmp, sock); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("listen %s: %w", sock, err)
	}
	return &unixListener{UnixListener: ul, path: sock}, nil
}

// unixListener removes its socket file on Close.
type unixListener struct {
	*net.UnixListener
	path string
}

// Addr is the socket's final name, not the temporary one it was bound to.
func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}
