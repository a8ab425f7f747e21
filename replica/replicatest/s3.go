// Package replicatest serves an in-process S3 on 127.0.0.1 for the tests
// of replication (github.com/johannesboyne/gofakes3), and keeps a test
// process's S3 clients on loopback.
package replicatest

import (
	"net/http/httptest"
	"os"
	"path"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Keys are the test credentials (the fake server takes any).
const (
	AccessKeyID     = "sqlfs-test"
	SecretAccessKey = "sqlfs-test-secret"
	Bucket          = "sqlfs-test"
)

// IsolateEnv keeps every S3 client this process starts, child processes
// included, on loopback: no instance metadata lookup at 169.254.169.254
// (AWS_EC2_METADATA_DISABLED, with the keys set explicitly), no CA bundle
// (set on these machines, it stops the AWS SDK), no shared config or
// proxy. Call it from TestMain.
func IsolateEnv() {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Setenv("AWS_ACCESS_KEY_ID", AccessKeyID)
	os.Setenv("AWS_SECRET_ACCESS_KEY", SecretAccessKey)
	for _, v := range []string{"AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_ENDPOINT_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		os.Unsetenv(v)
	}
}

// S3 is an in-process S3 server on 127.0.0.1 with one bucket, Bucket.
type S3 struct {
	srv *httptest.Server
}

// NewS3 starts a server, closed at the end of t.
func NewS3(t testing.TB) *S3 {
	t.Helper()
	b := s3mem.New()
	if err := b.CreateBucket(Bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(b, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	return &S3{srv: srv}
}

// URL is the replica URL of prefix p in Bucket, in Litestream's form.
func (s *S3) URL(p string) string {
	return "s3://" + path.Join(Bucket, p) + "?endpoint=" + s.srv.URL + "&forcePathStyle=true"
}
