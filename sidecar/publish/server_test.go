package publish

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServer serves h within o on a loopback port until the test ends.
func startServer(t *testing.T, h http.Handler, o ServerOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, ln := NewServer(h, ln, o, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the server closes c (EOF or reset) within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// get sends one kept-alive request on c and reads the status.
func getOn(t *testing.T, c net.Conn, path string) int {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestServerBounds: the public server drops slow headers and idle
// kept-alive connections, caps connections in all and per client address,
// frees a slot when a connection ends, and refuses oversized headers.
func TestServerBounds(t *testing.T) {
	_, _, _, h := setup(t)
	o := DefaultServerOptions
	o.ReadHeaderTimeout, o.IdleTimeout = 300*time.Millisecond, 300*time.Millisecond
	o.MaxConns, o.MaxConnsPerClient = 6, 3

	t.Run("slow headers", func(t *testing.T) {
		addr := startServer(t, h, o)
		c := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(c, "GET /p/x HTTP/1.1\r\nHost: x\r\nX-A: ")
		if !closedWithin(c, 3*time.Second) {
			t.Error("a connection trickling its headers was kept past the header timeout")
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		addr := startServer(t, h, o)
		c := dialFrom(t, "127.0.0.1", addr)
		if code := getOn(t, c, "/p/nothing"); code != http.StatusNotFound {
			t.Fatalf("GET: %d", code)
		}
		if !closedWithin(c, 3*time.Second) {
			t.Error("an idle kept-alive connection was kept past the idle timeout")
		}
	})
	t.Run("caps", func(t *testing.T) {
		o := o
		o.IdleTimeout, o.ReadHeaderTimeout = time.Minute, time.Minute
		addr := startServer(t, h, o)
		var held []net.Conn
		for i := range o.MaxConnsPerClient {
			c := dialFrom(t, "127.0.0.1", addr)
			if code := getOn(t, c, "/p/nothing"); code != http.StatusNotFound {
				t.Fatalf("connection %d: %d", i, code)
			}
			held = append(held, c)
		}
		if c := dialFrom(t, "127.0.0.1", addr); !closedWithin(c, 3*time.Second) {
			t.Error("a client past its per-client cap was served")
		}
		// Other addresses fill the total cap.
		for _, src := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.3"} {
			if code := getOn(t, dialFrom(t, src, addr), "/p/nothing"); code != http.StatusNotFound {
				t.Fatalf("from %s: %d", src, code)
			}
		}
		if c := dialFrom(t, "127.0.0.4", addr); !closedWithin(c, 3*time.Second) {
			t.Error("a connection past the total cap was served")
		}
		held[0].Close()
		time.Sleep(100 * time.Millisecond) // the server notices the close
		c := dialFrom(t, "127.0.0.1", addr)
		if code := getOn(t, c, "/p/nothing"); code != http.StatusNotFound {
			t.Errorf("after a connection ended: %d", code)
		}
	})
	t.Run("header size", func(t *testing.T) {
		addr := startServer(t, h, o)
		c := dialFrom(t, "127.0.0.1", addr)
		go io.WriteString(c, "GET /p/x HTTP/1.1\r\nHost: x\r\nRange: bytes="+strings.Repeat("1-1,", 240_000)+"1-1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("a 960 KB header: %v %v", resp, err)
		}
	})
}
