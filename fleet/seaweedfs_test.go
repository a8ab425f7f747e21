//go:build integration

package fleet

import (
	"testing"

	"github.com/sqlfs/sqlfs/internal/s3test"
)

// TestS3LeaseSeaweedFS runs the lease protocol against a real S3 server,
// SeaweedFS's weed mini on 127.0.0.1: its conditional PUTs must refuse
// the loser of every race (make test-integration).
func TestS3LeaseSeaweedFS(t *testing.T) {
	s := s3test.Start(t, s3test.Options{})
	s.Setenv(t)
	// One prefix per subtest: each starts from no lease.
	t.Run("protocol", func(t *testing.T) { testS3Lease(t, s.URL("protocol")) })
	t.Run("expiry", func(t *testing.T) { testS3LeaseExpiry(t, s.URL("expiry")) })
	t.Run("race", func(t *testing.T) { testS3LeaseRace(t, s.URL("race")) })
}
