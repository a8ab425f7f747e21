package main

import (
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServePprof: --pprof-addr :PORT serves the profiles on loopback
// only, and the API's listener does not serve them.
func TestServePprof(t *testing.T) {
	tmp := t.TempDir()
	tokFile, tok := operatorToken(t, tmp)
	_, port, _ := net.SplitHostPort(freeAddr(t))
	url, _ := startHost(t, filepath.Join(tmp, "ws"), tokFile, "--pprof-addr", ":"+port)
	resp, err := http.Get("http://127.0.0.1:" + port + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("profiles on loopback: %s", resp.Status)
	}
	// Loopback only: no listener on the port at any other address.
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		ip, _, _ := net.ParseCIDR(a.String())
		if ip == nil || ip.IsLoopback() {
			continue
		}
		if c, err := net.Dial("tcp", net.JoinHostPort(ip.String(), port)); err == nil {
			c.Close()
			t.Fatalf("--pprof-addr :%s listens on %s too", port, ip)
		}
	}
	if st, b := hostCall(t, url, tok, "GET", "/debug/pprof/cmdline", ""); st != http.StatusNotFound || strings.Contains(b, "sqlfs-exec") {
		t.Fatalf("the API listener answered the profiles: %d %s", st, b)
	}
}
