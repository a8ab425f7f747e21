//go:build integration

package s3test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoopbackOnly: every socket weed listens on is bound to 127.0.0.1,
// and the S3 gateway refuses a request without the server's keys.
func TestLoopbackOnly(t *testing.T) {
	s := Start(t, Options{})
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	addrs := listening(t, pid)
	if len(addrs) < 5 { // master, volume, filer, S3 and their gRPC at least
		t.Fatalf("weed listens on %v: expected its services' ports", addrs)
	}
	for _, a := range addrs {
		if !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("weed listens on %v, not loopback (all: %v)", a, addrs)
		}
	}
	resp, err := http.Get(s.Endpoint + "/" + s.Bucket + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous listing of the bucket: %s, want 403 Forbidden", resp.Status)
	}
}

// TestKillRestart: the bucket and its files survive a SIGKILL of the
// server, and Restart serves them on the same endpoint.
func TestKillRestart(t *testing.T) {
	s := Start(t, Options{Bucket: "bucket-one"})
	endpoint := s.Endpoint
	put(t, s.filer+"/buckets/bucket-one/kept", "survives")
	s.Kill(t)
	if _, err := http.Get(s.Endpoint); err == nil {
		t.Fatal("the S3 gateway still answers after Kill")
	}
	start := time.Now()
	s.Restart(t)
	t.Logf("restart ready in %v", time.Since(start))
	if s.Endpoint != endpoint {
		t.Fatalf("endpoint moved: %s then %s", endpoint, s.Endpoint)
	}
	if got := get(t, s.filer+"/buckets/bucket-one/kept"); got != "survives" {
		t.Fatalf("after restart the object reads %q", got)
	}
}

// listening returns the TCP addresses process pid listens on, from
// /proc/net/tcp{,6} and the process's socket descriptors.
func listening(t *testing.T, pid int) []*net.TCPAddr {
	t.Helper()
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []*net.TCPAddr
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !mine[f[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, parseProcAddr(t, f[1]))
		}
	}
	return out
}

// parseProcAddr parses /proc/net/tcp's HEXIP:HEXPORT (the IP in host
// byte order, 32-bit words).
func parseProcAddr(t *testing.T, s string) *net.TCPAddr {
	ipHex, portHex, _ := strings.Cut(s, ":")
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	ip := make(net.IP, len(ipHex)/2)
	for w := 0; w < len(ip); w += 4 {
		word, err := strconv.ParseUint(ipHex[2*w:2*w+8], 16, 32)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for i := range 4 {
			ip[w+i] = byte(word >> (8 * i))
		}
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}
}
