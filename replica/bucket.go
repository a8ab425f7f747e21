package replica

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/sqlfs/sqlfs/host"
)

// S3API is what the replica calls of an S3 client itself, beside
// Litestream: listings (a host's workspaces, a workspace's generations),
// the reads of a restore and the deletion of a workspace.
type S3API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObjects(ctx context.Context, in *s3.DeleteObjectsInput, opts ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// NewS3Client is a client of the object store u names, with keys c only:
// never the environment's, a shared file's or the instance metadata's.
func NewS3Client(u URL, c Credentials) S3API {
	q := u.u.Query()
	o := s3.Options{
		Region:       cmp.Or(q.Get("region"), "us-east-1"),
		UsePathStyle: q.Get("forcePathStyle") == "true",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, Source: "sqlfs"}, nil
		}),
		// S3-compatible servers need not know the SDK's newer checksums.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if e := q.Get("endpoint"); e != "" {
		o.BaseEndpoint = aws.String(e)
	}
	if q.Get("skipVerify") == "true" {
		o.HTTPClient = &http.Client{Transport: &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator asked for it
		}}
	}
	return s3.New(o)
}

// bucket is a host's replica URL as objects: PREFIX/ID/... for each
// workspace ID.
type bucket struct {
	client S3API
	name   string
	prefix string // the URL's path, ending in "/"
}

func newBucket(client S3API, u URL) bucket {
	return bucket{client: client, name: u.u.Host, prefix: strings.Trim(u.u.Path, "/") + "/"}
}

// children lists the names under PREFIX/sub/ up to the next slash.
func (b bucket) children(ctx context.Context, sub string) ([]string, error) {
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.prefix + sub), Delimiter: aws.String("/")}
	var out []string
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing %s/%s%s: %w", b.name, b.prefix, sub, err)
		}
		for _, cp := range page.CommonPrefixes {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), b.prefix+sub), "/"))
		}
		for _, obj := range page.Contents {
			out = append(out, strings.TrimPrefix(aws.ToString(obj.Key), b.prefix+sub))
		}
	}
	return out, nil
}

// ids are the workspaces the replica holds objects of.
func (b bucket) ids(ctx context.Context) ([]string, error) {
	names, err := b.children(ctx, "")
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(names, func(n string) bool { return host.CheckID(n) != nil }), nil
}

// generations are the lease generations of workspace id the replica holds
// anything of, newest first; 0 is the store a host without a fleet
// replicates (PREFIX/ID/workspace.sqlfs).
func (b bucket) generations(ctx context.Context, id string) ([]int64, error) {
	names, err := b.children(ctx, id+"/")
	if err != nil {
		return nil, err
	}
	var gens []int64
	for _, n := range names {
		if g, ok := host.ParseGeneration(n); ok {
			gens = append(gens, g)
		} else if n == host.StoreName {
			gens = append(gens, 0)
		}
	}
	slices.Sort(gens)
	slices.Reverse(gens)
	return gens, nil
}

// deleteAll deletes every object of workspace id.
func (b bucket) deleteAll(ctx context.Context, id string) (int, error) {
	return b.deleteUnder(ctx, id)
}

// genPath is where generation gen of workspace id lives under PREFIX/.
func genPath(id string, gen int64) string {
	if gen == 0 {
		return id + "/" + host.StoreName
	}
	return id + "/" + host.GenerationName(gen)
}

// oldest is the time of the oldest object under PREFIX/sub/ (zero: none).
func (b bucket) oldest(ctx context.Context, sub string) (time.Time, error) {
	var t time.Time
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.prefix + sub + "/")}
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return time.Time{}, fmt.Errorf("listing %s/%s%s: %w", b.name, b.prefix, sub, err)
		}
		for _, obj := range page.Contents {
			if m := aws.ToTime(obj.LastModified); t.IsZero() || m.Before(t) {
				t = m
			}
		}
	}
	return t, nil
}

// deleteUnder deletes every object under PREFIX/sub/, a thousand (S3's
// most) at a time.
func (b bucket) deleteUnder(ctx context.Context, sub string) (n int, err error) {
	top := b.prefix + sub
	dirs := map[string]bool{top: true}
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(top + "/")}
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("listing %s in the replica: %w", sub, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		objs := make([]types.ObjectIdentifier, len(page.Contents))
		for i, obj := range page.Contents {
			objs[i] = types.ObjectIdentifier{Key: obj.Key}
		}
		out, err := b.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &b.name, Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)}})
		if err != nil {
			return n, fmt.Errorf("deleting %s from the replica: %w", sub, err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return n, fmt.Errorf("deleting %s from the replica: %d objects refused, first %s: %s", sub, len(out.Errors), aws.ToString(e.Key), aws.ToString(e.Message))
		}
		n += len(objs)
		for _, obj := range page.Contents {
			for dir := path.Dir(aws.ToString(obj.Key)); len(dir) > len(top); dir = path.Dir(dir) {
				dirs[dir] = true
			}
		}
	}
	// Some servers (SeaweedFS) keep a folder per prefix, which listings
	// show after its objects are gone: the deepest go first.
	keys := slices.SortedFunc(maps.Keys(dirs), func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, dir := range keys {
		if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: aws.String(dir + "/")}); err != nil {
			return n, fmt.Errorf("deleting %s from the replica: %w", sub, err)
		}
	}
	return n, nil
}

// storeKey is where generation gen of workspace id keeps its store's
// replica under PREFIX/ (WorkspaceURL's path).
func storeKey(id string, gen int64) string {
	if gen == 0 {
		return id + "/" + host.StoreName
	}
	return id + "/" + host.GenerationName(gen) + "/" + host.StoreName
}

// newestTXID is the newest transaction the replica of workspace id's
// generation gen holds (0: none), from the names of Litestream's LTX
// files (LEVEL/MIN-MAX.ltx under the store's path: LEVEL 4 hex digits,
// MIN and MAX 16) at every level: a listing, no download.
func (b bucket) newestTXID(ctx context.Context, id string, gen int64) (uint64, error) {
	var newest uint64
	in := &s3.ListObjectsV2Input{Bucket: &b.name, Prefix: aws.String(b.prefix + storeKey(id, gen) + "/")}
	for p := s3.NewListObjectsV2Paginator(b.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("listing the transactions of %s in the replica: %w", storeKey(id, gen), err)
		}
		for _, obj := range page.Contents {
			if _, max, ok := parseLTXName(path.Base(aws.ToString(obj.Key))); ok && max > newest {
				newest = max
			}
		}
	}
	return newest, nil
}

// parseLTXName reads Litestream's LTX file name MIN-MAX.ltx.
func parseLTXName(name string) (min, max uint64, ok bool) {
	a, b, found := strings.Cut(strings.TrimSuffix(name, ".ltx"), "-")
	if !found || len(a) != 16 || len(b) != 16 || !strings.HasSuffix(name, ".ltx") {
		return 0, 0, false
	}
	min, err1 := strconv.ParseUint(a, 16, 64)
	max, err2 := strconv.ParseUint(b, 16, 64)
	return min, max, err1 == nil && err2 == nil
}

// formatTXID writes a transaction id as Litestream's -txid takes it.
func formatTXID(txid uint64) string { return fmt.Sprintf("%016x", txid) }
