package s3test

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// StartFake serves an in-process S3 (gofakes3, in memory) on 127.0.0.1 for
// t, closed in t.Cleanup. Its conditional PUTs check and write under one
// lock, as a real server's must (the fleet's leases rely on that). Stop and
// Kill close it; Restart serves the same data on the same endpoint again.
func StartFake(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Bucket == "" {
		o.Bucket = "sqlfs-test"
	}
	backend := s3mem.New()
	if err := backend.CreateBucket(o.Bucket); err != nil {
		t.Fatal(err)
	}
	f := &fake{
		handler: gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server(),
		addr:    "127.0.0.1:0",
	}
	if err := f.start(); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	t.Cleanup(func() { f.stop() })
	return &Server{
		Endpoint: "http://" + f.addr, Bucket: o.Bucket,
		AccessKey: FakeAccessKey, SecretKey: FakeSecretKey, fake: f,
	}
}

type fake struct {
	handler http.Handler
	addr    string // 127.0.0.1:0 until the first start

	mu  sync.Mutex
	srv *http.Server
}

func (f *fake) start() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.srv != nil {
		return fmt.Errorf("Restart of a running server")
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("fake S3: %w", err)
	}
	f.addr = ln.Addr().String()
	f.srv = &http.Server{Handler: f.handler}
	go f.srv.Serve(ln)
	return nil
}

// stop closes the listener and every connection, as a server gone.
func (f *fake) stop() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.srv == nil {
		return nil
	}
	err := f.srv.Close()
	f.srv = nil
	return err
}
