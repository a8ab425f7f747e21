package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// level0 is every level-0 LTX object (one per upload of litestream's)
// under the replica of workspace id, with its size.
func level0(t *testing.T, o Options, id string) map[string]int64 {
	t.Helper()
	u := WorkspaceURL(o.URL, id, 0)
	b := newBucket(NewS3Client(o.URL, o.Credentials), u)
	out := map[string]int64{}
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.prefix + "0000/")}
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range page.Contents {
			out[*obj.Key] = aws.ToInt64(obj.Size)
		}
	}
	return out
}

// uploaded is what after holds that before did not: objects and bytes.
func uploaded(before, after map[string]int64) (objects int, bytes int64) {
	for k, n := range after {
		if _, ok := before[k]; !ok {
			objects++
			bytes += n
		}
	}
	return objects, bytes
}

// TestWakeUploadsOnlyWhatChanged hibernates a workspace of a few MiB and
// wakes it, with no change and with one small write: each wake uploads
// what changed, not the whole store again (litestream v0.5.18 found its
// WAL position gone, the WAL folded and removed by the park, and
// uploaded a full level-0 snapshot at every wake: 4.2 MB for a 5.4 MB
// store). Every write is in the replica after each hibernation.
func TestWakeUploadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	op, o := startOpener(t)
	d := op.Dir
	const id = "ws-1"
	if err := d.Create(id, nil); err != nil {
		t.Fatal(err)
	}
	// 3 MiB of random bytes (hex), as the README's measurement had.
	want := map[string]string{}
	ws, err := op.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		b := make([]byte, 512<<10)
		rand.Read(b)
		p := fmt.Sprintf("big/%d.bin", i)
		want[p] = hex.EncodeToString(b)
		if _, err := toolsOf(t, ws).Write(ctx, tools.WriteInput{Path: p, Content: want[p]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	full := 0
	for _, n := range level0(t, o, id) {
		full += int(n)
	}

	for i, change := range []string{"", "one small change\n", "", "another small change\n"} {
		before := level0(t, o, id)
		ws, err := op.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if change != "" {
			p := fmt.Sprintf("small/%d.txt", i)
			want[p] = change
			if _, err := toolsOf(t, ws).Write(ctx, tools.WriteInput{Path: p, Content: change}); err != nil {
				t.Fatal(err)
			}
		}
		if err := ws.Close(ctx); err != nil {
			t.Fatal(err)
		}
		objs, n := uploaded(before, level0(t, o, id))
		t.Logf("wake %d (change %q): %d level-0 objects, %d bytes uploaded (the store's first uploads: %d bytes)", i, change, objs, n, full)
		// A small change is a few 32 KiB pages; a snapshot is the store.
		if n > 256<<10 {
			t.Errorf("wake %d (change %q) uploaded %d bytes in %d objects: the whole store again (its first uploads: %d bytes)", i, change, n, objs, full)
		}
	}

	// Nothing lost: the replica holds every write, straight from the
	// object store.
	out := path.Join(t.TempDir(), "check.sqlfs")
	ro := o
	ro.URL = WorkspaceURL(o.URL, id, 0)
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := Restore(rctx, ro, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	f := openFS(t, out)
	for p, content := range want {
		b, err := f.ReadFile(p)
		if err != nil || string(b) != content {
			t.Errorf("the replica's %s: %d bytes (%v), want %d: %q", p, len(b), err, len(content), strings.TrimSpace(string(b[:min(len(b), 40)])))
		}
	}
}
