//go:build integration

package replica

import (
	"testing"

	"github.com/sqlfs/sqlfs/internal/s3test"
)

// TestDeleteSeaweedFS deletes workspaces from a fleet over a real S3
// server, SeaweedFS's weed mini on 127.0.0.1 (make test-integration).
func TestDeleteSeaweedFS(t *testing.T) {
	s := s3test.Start(t, s3test.Options{})
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	testDelete(t, server{url: s.URL, keys: Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}})
}

// TestPruneSeaweedFS prunes old generations on the real S3 server.
func TestPruneSeaweedFS(t *testing.T) {
	s := s3test.Start(t, s3test.Options{})
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	testPrune(t, server{url: s.URL, keys: Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}})
}
