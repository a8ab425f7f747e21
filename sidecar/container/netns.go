package container

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/egress"
)

// ProxyAddr is where a container with Options.Egress finds the owner's
// proxy, inside its own network namespace.
const ProxyAddr = "127.0.0.1:3128"

const proxyPort = 3128

// proxyEnv points the usual tools (curl, wget, git, npm, pip) at the
// proxy; loopback stays direct, for servers inside the container.
func proxyEnv() map[string]string {
	u := "http://" + ProxyAddr
	return map[string]string{
		"HTTP_PROXY": u, "HTTPS_PROXY": u, "http_proxy": u, "https_proxy": u,
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
	}
}

// netns is a network namespace with loopback only, in which the owner
// listens at ProxyAddr: the container joins it, so the owner's proxy is its
// one way out.
type netns struct {
	ns  *os.File // held open, so the namespace outlives the thread that made it
	srv *http.Server
}

// newNetns makes the namespace on a thread of its own and serves p in it.
// The thread is left locked when its goroutine ends, so the runtime
// discards it instead of reusing a thread in the wrong namespace.
func newNetns(p *egress.Proxy) (*netns, error) {
	type made struct {
		ns  *os.File
		ln  net.Listener
		err error
	}
	ch := make(chan made, 1)
	go func() {
		runtime.LockOSThread()
		var m made
		defer func() { ch <- m }()
		if m.err = unix.Unshare(unix.CLONE_NEWNET); m.err != nil {
			m.err = fmt.Errorf("network namespace: %w", m.err)
			return
		}
		if m.err = loopbackUp(); m.err != nil {
			return
		}
		if m.ln, m.err = net.Listen("tcp", ProxyAddr); m.err != nil {
			return
		}
		if m.ns, m.err = os.Open("/proc/thread-self/ns/net"); m.err != nil {
			m.ln.Close()
		}
	}()
	m := <-ch
	if m.err != nil {
		return nil, fmt.Errorf("%w: egress proxy: %w", ErrNotStarted, m.err)
	}
	n := &netns{ns: m.ns, srv: p.Server()}
	n.srv.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, peerKey{}, new(peer))
	}
	go n.srv.Serve(m.ln) //nolint:errcheck // ends with Close
	return n, nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// path is the namespace as the container's init joins it.
func (n *netns) path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.ns.Fd()) }

func (n *netns) close() {
	_ = n.srv.Close()
	_ = n.ns.Close()
}

// errNoExec refuses a proxy connection no exec that asked for the network
// stands behind.
var errNoExec = errors.New("egress refused: the connection is from no exec that asked for the network (allow_network)")

// peer is the exec behind one proxy connection, found at its first
// request: finding it reads the namespace's TCP table and the execs'
// file descriptors, which for every request of an npm install cost more
// CPU than the FUSE mount serving the install.
type peer struct {
	once sync.Once
	dir  string // the exec's cgroup; "" for none
}

type peerKey struct{}

// reqActor names the exec behind req's connection, which must still be
// running with AllowNetwork: a connection outliving its exec is refused.
func (b *Backend) reqActor(req *http.Request, initPID int) (string, error) {
	p, _ := req.Context().Value(peerKey{}).(*peer)
	if p == nil {
		p = new(peer)
	}
	p.once.Do(func() { p.dir = b.connExec(req.RemoteAddr, initPID) })
	b.actorsMu.RLock()
	defer b.actorsMu.RUnlock()
	if e, ok := b.actors[p.dir]; ok && e.network && p.dir != "" {
		return e.actor, nil
	}
	return "", errNoExec
}

// connExec is the cgroup of the exec whose process holds the other end of
// a proxy connection from remote (its "127.0.0.1:PORT"), by the socket's
// inode in the namespace's TCP table and the execs' cgroups; "" when no
// exec with AllowNetwork holds it.
func (b *Backend) connExec(remote string, initPID int) string {
	_, port, err := net.SplitHostPort(remote)
	if err != nil {
		return ""
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return ""
	}
	inode := socketInode(initPID, uint16(p))
	if inode == "" {
		return ""
	}
	b.actorsMu.RLock()
	defer b.actorsMu.RUnlock()
	for dir, e := range b.actors {
		if !e.network {
			continue
		}
		procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			continue
		}
		for pid := range strings.FieldsSeq(string(procs)) {
			fds, _ := filepath.Glob("/proc/" + pid + "/fd/*")
			for _, fd := range fds {
				if l, _ := os.Readlink(fd); l == "socket:["+inode+"]" {
					return dir
				}
			}
		}
	}
	return ""
}

// socketInode finds the client socket 127.0.0.1:port -> ProxyAddr in the
// TCP table of initPID's network namespace.
func socketInode(initPID int, port uint16) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", initPID))
	if err != nil {
		return ""
	}
	defer f.Close()
	local := fmt.Sprintf("0100007F:%04X", port)
	remote := fmt.Sprintf("0100007F:%04X", proxyPort)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ..."
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[1] == local && fields[2] == remote {
			return fields[9]
		}
	}
	return ""
}

// Errors of DialPort.
var (
	ErrHostNetwork = errors.New("the container shares the host's network (--network): its ports are the host's, so none is exposed")
	ErrNotRunning  = errors.New("the container is not running: start the server in an exec first")
	ErrProxyPort   = errors.New("port 3128 is the owner's egress proxy, not a server of the container")
)

// DialPort connects to 127.0.0.1:port inside the container's network
// namespace: how the owner reaches a server an exec started there (a
// preview URL). The socket is made on a thread that joined the namespace,
// so the connection cannot reach anything of the host's, the owner's API
// included; with Config.Network the container's ports are the host's and
// DialPort refuses.
func (b *Backend) DialPort(ctx context.Context, port uint16) (net.Conn, error) {
	if b.cfg.Network {
		return nil, ErrHostNetwork
	}
	if port == 0 {
		return nil, fmt.Errorf("port 0: want 1-65535")
	}
	type dialed struct {
		c   net.Conn
		err error
	}
	joined, ch := make(chan error, 1), make(chan dialed, 1)
	b.mu.Lock()
	r := b.ctr
	var ns *os.File
	if r != nil {
		ns = r.netNS
		if r.net != nil {
			ns = r.net.ns
		}
	}
	switch {
	case ns == nil:
		b.mu.Unlock()
		return nil, ErrNotRunning
	case r.net != nil && port == proxyPort:
		b.mu.Unlock()
		return nil, ErrProxyPort
	}
	go func() {
		// The thread stays locked: the runtime discards it rather than
		// run other goroutines in the container's namespace.
		runtime.LockOSThread()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			joined <- fmt.Errorf("join the container's network namespace: %w", err)
			return
		}
		joined <- nil
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
		ch <- dialed{c, err}
	}()
	// b.mu keeps the namespace's file open (stopLocked closes it) until
	// the thread has joined.
	err := <-joined
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	got := <-ch
	return got.c, got.err
}
