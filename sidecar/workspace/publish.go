package workspace

import (
	"context"
	"os"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar/publish"
)

// publishFunc is how the tools and the js backend make links, or nil when
// the workspace has no public base URL.
type publishFunc = func(ctx context.Context, actor, path string, ttl time.Duration) (string, error)

// newPublisher makes links for the store at store, served at base (or at
// the base URL a serving process recorded beside the store).
func newPublisher(store string, f *sfs.FS, base string) (publishFunc, error) {
	if base == "" {
		b, err := os.ReadFile(publish.BaseURLPath(store))
		if err != nil {
			// No public listener runs for this store: publishing is unavailable.
			return nil, nil
		}
		base = string(b)
	}
	links, err := publish.Open(store, base)
	if err != nil {
		return nil, err
	}
	return publish.Publisher{Links: links, FS: f}.PublishAs, nil
}
