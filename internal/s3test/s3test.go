// Package s3test runs S3 servers on loopback for tests, behind one API:
// Start runs a real one, SeaweedFS's `weed mini` (master, volume, filer and
// S3 gateway in one process) bound to 127.0.0.1 only, with telemetry off,
// explicit keys from an -s3.config file, its data and log in the test's
// temporary directory; StartFake serves an in-process one
// (github.com/johannesboyne/gofakes3, in memory) for the fast unit tests.
// Both are stopped when the test ends, also when it fails, and both can be
// stopped and restarted on the same endpoint and data, as an outage.
//
// The weed binary comes from `make tools-integration` ($(TOOLS)/bin/weed, on
// PATH under make) or $SQLFS_WEED. Without it a test skips, or fails when
// SQLFS_TEST_PRIVILEGED is set (internal/testenv).
//
// Every process that talks to a server with an AWS SDK (litestream, the
// replica and fleet packages) must run with the environment Env makes:
// explicit keys, no instance metadata lookups (169.254.169.254 is not
// loopback), no AWS_CA_BUNDLE (set on these machines; the SDK then fails
// to start) and none of the machine's other AWS_ or proxy settings. Child
// processes get it from Server.Env, the test process from Server.Setenv
// or, for all its tests, from Isolate in TestMain.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// WeedEnv names the variable that may point at the weed binary; without
// it weed is looked up on PATH.
const WeedEnv = "SQLFS_WEED"

// Options configure Start and StartFake. The zero value is a server with
// one bucket, "sqlfs-test".
type Options struct {
	// Bucket is created at start ("sqlfs-test" when empty; 3 to 63
	// characters, S3's rule: weed ignores a shorter name, and Start then
	// times out waiting for the bucket).
	Bucket string
	// ReadyTimeout bounds the wait for weed's S3 gateway and the bucket (60
	// s when zero: ~5 s on a quiet machine, much more on a loaded one).
	ReadyTimeout time.Duration
}

// Server is a running S3 server, weed mini or the fake. Its methods may be
// called from the test goroutine only.
type Server struct {
	// Endpoint is the S3 gateway, http://127.0.0.1:PORT.
	Endpoint string
	// Bucket exists once Start returns.
	Bucket string
	// AccessKey and SecretKey are the only identity weed knows, with every
	// permission, fresh random values per server; the fake takes any keys
	// and reports FakeAccessKey and FakeSecretKey.
	AccessKey, SecretKey string
	// Dir holds weed's data; Log is its output (stdout and stderr). Both
	// are empty for the fake, which keeps its data in memory.
	Dir, Log string

	fake *fake // nil for weed

	weed    string
	args    []string
	filer   string // http://127.0.0.1:PORT of the filer, for readiness
	timeout time.Duration

	mu   sync.Mutex
	cmd  *exec.Cmd
	done <-chan struct{} // closed when cmd has been waited for
}

// Start runs a weed mini for t and stops it in t.Cleanup.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	weed := os.Getenv(WeedEnv)
	if weed == "" {
		path, err := exec.LookPath("weed")
		testenv.Require(t, "this test needs SeaweedFS's weed (make tools-integration, or $"+WeedEnv+")", err)
		weed = path
	}
	if o.Bucket == "" {
		o.Bucket = "sqlfs-test"
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	tmp := t.TempDir()
	s := &Server{
		Bucket: o.Bucket, AccessKey: "AK" + randomHex(t, 9), SecretKey: randomHex(t, 20),
		Dir: filepath.Join(tmp, "data"), Log: filepath.Join(tmp, "weed.log"),
		weed: weed, timeout: o.ReadyTimeout,
	}
	if err := os.Mkdir(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(tmp, "s3.json")
	if err := os.WriteFile(config, s.identityConfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	// Unix socket paths must stay under 108 bytes; a test's TempDir can be
	// longer than that.
	sockets, err := os.MkdirTemp("", "s3test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockets) })
	ports := freePorts(t, 10)
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	s.filer = "http://127.0.0.1:" + strconv.Itoa(ports[1])
	// Every port is given: weed's defaults are fixed numbers (8333, 9333,
	// ...) that parallel tests would fight over, and gRPC ports default to
	// HTTP+10000, which may be taken or out of range.
	s.args = []string{"mini",
		"-dir=" + s.Dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.telemetry=false", "-admin.ui=false", "-webdav=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-admin.port.legacy=0",
		"-s3.config=" + config, "-bucket=" + s.Bucket,
		"-s3.port=" + strconv.Itoa(ports[0]), "-filer.port=" + strconv.Itoa(ports[1]),
		"-master.port=" + strconv.Itoa(ports[2]), "-volume.port=" + strconv.Itoa(ports[3]),
		"-admin.port=" + strconv.Itoa(ports[4]),
		"-s3.port.grpc=" + strconv.Itoa(ports[5]), "-filer.port.grpc=" + strconv.Itoa(ports[6]),
		"-master.port.grpc=" + strconv.Itoa(ports[7]), "-volume.port.grpc=" + strconv.Itoa(ports[8]),
		"-admin.port.grpc=" + strconv.Itoa(ports[9]),
		"-filer.localSocket=" + filepath.Join(sockets, "filer.sock"),
		"-s3.localSocket=" + filepath.Join(sockets, "s3.sock"),
	}
	t.Cleanup(func() {
		// Its data is thrown away: a weed slow to shut down (it was, after
		// a client was SIGKILLed mid-request) is killed, not a failure.
		if err := s.stop(syscall.SIGTERM); err != nil {
			t.Logf("s3test: stopping weed: %v (log %s)", err, s.Log)
		}
	})
	s.Restart(t)
	return s
}

// Restart starts the server again after Stop or Kill, on the same data,
// ports and keys, and waits until it serves the bucket.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if s.fake != nil {
		if err := s.fake.start(); err != nil {
			t.Fatalf("s3test: %v", err)
		}
		return
	}
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if running {
		t.Fatal("s3test: Restart of a running server")
	}
	log, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(s.weed, s.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = s.Dir
	// Without keys in its environment: weed would add an identity of them.
	cmd.Env = scrub(os.Environ())
	// Its own process group, so that stop can kill all of it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done, err := testenv.StartChild(cmd)
	if err != nil {
		t.Fatalf("s3test: starting %s: %v", s.weed, err)
	}
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(t.Context(), done); err != nil {
		t.Fatalf("s3test: %v\n%s", err, testenv.Tail(s.Log, 4000))
	}
}

// Stop stops the server with SIGTERM (SIGKILL after 15 s; the fake closes
// its listener and every connection); the data stays for Restart. A weed
// that had to be killed is down all the same, and Restart takes it up as
// after a crash, so that is logged, not failed: weed's graceful stop took
// over 15 s once in CI at load 4.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.stop(syscall.SIGTERM); errors.Is(err, errKilled) {
		t.Logf("s3test: %v", err)
	} else if err != nil {
		t.Fatalf("s3test: %v", err)
	}
}

// Kill stops the server with SIGKILL, as a crash would.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if err := s.stop(syscall.SIGKILL); err != nil {
		t.Fatalf("s3test: %v", err)
	}
}

// errKilled: weed ignored the signal asked for and was killed.
var errKilled = errors.New("weed killed")

func (s *Server) stop(sig syscall.Signal) error {
	if s.fake != nil {
		return s.fake.stop()
	}
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling weed: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(15 * time.Second):
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return fmt.Errorf("%w: it did not stop within 15 s of %v", errKilled, sig)
}

// URL is the replica URL of path in the bucket, in Litestream's form.
func (s *Server) URL(path string) string {
	return "s3://" + s.Bucket + "/" + strings.TrimPrefix(path, "/") +
		"?endpoint=" + s.Endpoint + "&forcePathStyle=true"
}

// Env returns environ for a process that talks to the server with an AWS
// SDK: the server's keys set explicitly, instance metadata lookups off, a
// region, and AWS_CA_BUNDLE and every other AWS_, LITESTREAM_ or proxy
// setting of the machine dropped.
func (s *Server) Env(environ []string) []string {
	return Env(environ, s.AccessKey, s.SecretKey)
}

// Setenv gives the test process Server.Env for the rest of t (t.Setenv's
// rules: not in parallel tests), for the SDK clients it makes itself.
func (s *Server) Setenv(t testing.TB) {
	t.Helper()
	want := map[string]string{}
	for _, kv := range s.Env(nil) {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, keep := want[k]; !keep && len(scrub([]string{kv})) == 0 {
			t.Setenv(k, "") // restored at the end of t
			os.Unsetenv(k)
		}
	}
	for k, v := range want {
		t.Setenv(k, v)
	}
}

// FakeAccessKey and FakeSecretKey are the keys Isolate sets; the fake
// server takes them (it takes any).
const (
	FakeAccessKey = "s3test"
	FakeSecretKey = "s3test-secret"
)

// Isolate gives the whole test process Env with the fake's keys, so that
// no SDK client a test makes, nor any child process it starts, looks for
// credentials or configuration anywhere but there. Call it from TestMain
// of every package whose tests use an S3 client; tests against weed then
// call Server.Setenv or pass Server.Env to their children.
func Isolate() {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); len(scrub([]string{kv})) == 0 {
			os.Unsetenv(k)
		}
	}
	for _, kv := range Env(nil, FakeAccessKey, FakeSecretKey) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

// Env returns environ without AWS_CA_BUNDLE or any other AWS_ or
// LITESTREAM_ setting of the machine (profiles, keys, regions) and without
// proxies, with the keys given (for the AWS SDK and Litestream),
// AWS_EC2_METADATA_DISABLED=true and a region, so that no SDK asks the
// network for credentials or configuration or reaches anything but the
// loopback server.
func Env(environ []string, accessKey, secretKey string) []string {
	return append(scrub(environ),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID="+accessKey, "AWS_SECRET_ACCESS_KEY="+secretKey,
		"LITESTREAM_ACCESS_KEY_ID="+accessKey, "LITESTREAM_SECRET_ACCESS_KEY="+secretKey,
	)
}

// scrub is environ without the settings Env drops.
func scrub(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "AWS_"), strings.HasPrefix(name, "LITESTREAM_"):
		case strings.EqualFold(name, "HTTP_PROXY"), strings.EqualFold(name, "HTTPS_PROXY"), strings.EqualFold(name, "ALL_PROXY"), strings.EqualFold(name, "NO_PROXY"):
		default:
			out = append(out, kv)
		}
	}
	return out
}

// waitReady waits until the S3 gateway accepts connections and the filer
// lists the bucket (weed creates -bucket after its services are up).
func (s *Server) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s3addr := strings.TrimPrefix(s.Endpoint, "http://")
	client := &http.Client{Timeout: 5 * time.Second}
	var last error
	for {
		last = s.probe(ctx, client, s3addr)
		if last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("weed exited before it was ready (%v)", last)
		case <-ctx.Done():
			return fmt.Errorf("weed not ready within %v: %v", s.timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) probe(ctx context.Context, client *http.Client, s3addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s3addr)
	if err != nil {
		return err
	}
	c.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.filer+"/buckets/"+s.Bucket+"/", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bucket %s: filer answers %s", s.Bucket, resp.Status)
	}
	return nil
}

func (s *Server) identityConfig(t testing.TB) []byte {
	type cred struct {
		AccessKey string `json:"accessKey"`
		SecretKey string `json:"secretKey"`
	}
	type identity struct {
		Name        string   `json:"name"`
		Credentials []cred   `json:"credentials"`
		Actions     []string `json:"actions"`
	}
	b, err := json.Marshal(map[string][]identity{"identities": {{
		Name:        "sqlfs-test",
		Credentials: []cred{{s.AccessKey, s.SecretKey}},
		Actions:     []string{"Admin", "Read", "List", "Tagging", "Write"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// freePorts returns n distinct ports free on 127.0.0.1 now, below Linux's
// ephemeral range (32768-60999), where an outgoing connection of weed's own
// could take one before weed listens on it.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			t.Fatal("s3test: no free ports on 127.0.0.1 between 20000 and 32767")
		}
		port := 20000 + mrand.IntN(12768)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		lns = append(lns, ln)
		ports = append(ports, port)
	}
	return ports
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
