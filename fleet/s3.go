package fleet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3API is what the S3 lease calls of an S3 client.
type S3API interface {
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// S3Lease keeps each workspace's lease in the object PREFIX/ID.json of a
// bucket, changed only by conditional PUTs: If-None-Match: * creates it,
// If-Match: ETAG replaces it, and a server that saw another write in
// between answers 412. This is the protocol of Litestream's S3 leaser
// (github.com/benbjohnson/litestream, s3/leaser.go, v0.5.18, Apache-2.0),
// one object per workspace, a release written as a released record
// rather than a delete (the generation must survive it for fencing), and
// not imported: that package links Litestream's modernc.org/sqlite, which
// beside mattn/go-sqlite3 in one process breaks SQLite's locks.
//
// The server must apply a conditional PUT atomically: AWS S3 does,
// SeaweedFS does (each write under its path's lock), as does gofakes3.
type S3Lease struct {
	client S3API
	bucket string
	prefix string // "" or ending in "/"
}

// NewS3Lease keeps leases under prefix in bucket.
func NewS3Lease(client S3API, bucket, prefix string) *S3Lease {
	if prefix = strings.Trim(prefix, "/"); prefix != "" {
		prefix += "/"
	}
	return &S3Lease{client: client, bucket: bucket, prefix: prefix}
}

// OpenS3Lease connects to the leases a URL names, in the form of
// Litestream's replica URLs:
// s3://BUCKET/PREFIX?endpoint=http://HOST:PORT&forcePathStyle=true&region=R.
// Credentials come from the AWS SDK's usual places (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, the shared files, a role).
func OpenS3Lease(ctx context.Context, raw string) (*S3Lease, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("lease URL: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("lease URL %q: want s3://BUCKET/PREFIX[?endpoint=URL&forcePathStyle=true&region=R]", raw)
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "endpoint", "forcePathStyle", "region":
		default:
			return nil, fmt.Errorf("lease URL %q: unknown parameter %q (known: endpoint, forcePathStyle, region)", raw, k)
		}
	}
	pathStyle := false
	if v := q.Get("forcePathStyle"); v != "" {
		if pathStyle, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("lease URL %q: forcePathStyle: %w", raw, err)
		}
	}
	region := q.Get("region")
	if region == "" {
		region = "us-east-1"
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("lease URL %q: AWS configuration: %w", raw, err)
	}
	endpoint := q.Get("endpoint")
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		// S3-compatible servers need not know the SDK's newer checksums.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return NewS3Lease(client, u.Host, u.Path), nil
}

func (l *S3Lease) key(id string) string { return l.prefix + id + ".json" }

// stored is a record as its object holds it.
type stored struct {
	Record
	// Nonce makes every write's body, and so its ETag (an MD5 of it on
	// many servers), unique: a write that repeated an older body would let
	// a stale If-Match pass.
	Nonce string `json:"nonce"`
}

// Holder reads workspace id's record.
func (l *S3Lease) Holder(ctx context.Context, id string) (Record, error) {
	out, err := l.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &l.bucket, Key: aws.String(l.key(id))})
	if err != nil {
		if notFound(err) {
			return Record{}, nil
		}
		return Record{}, fmt.Errorf("reading lease of %s: %w", id, err)
	}
	defer out.Body.Close()
	var s stored
	if err := json.NewDecoder(out.Body).Decode(&s); err != nil {
		return Record{}, fmt.Errorf("lease of %s: %w", id, err)
	}
	if s.ID != id || s.Generation < 1 {
		return Record{}, fmt.Errorf("lease of %s: object %s holds a record of %q, generation %d", id, l.key(id), s.ID, s.Generation)
	}
	s.token = aws.ToString(out.ETag)
	if s.token == "" {
		return Record{}, fmt.Errorf("lease of %s: the server sent no ETag", id)
	}
	return s.Record, nil
}

// List returns the ids of the records under the prefix.
func (l *S3Lease) List(ctx context.Context) ([]string, error) {
	var ids []string
	in := &s3.ListObjectsV2Input{Bucket: &l.bucket, Prefix: aws.String(l.prefix)}
	for p := s3.NewListObjectsV2Paginator(l.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing leases: %w", err)
		}
		for _, obj := range page.Contents {
			if id, ok := strings.CutSuffix(strings.TrimPrefix(aws.ToString(obj.Key), l.prefix), ".json"); ok && !strings.Contains(id, "/") {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// Delete checks r still holds the lease, then deletes its object. S3
// deletes are not conditional everywhere: a host taking the lease between
// the check and the delete could only do so after r expired, TTL later.
func (l *S3Lease) Delete(ctx context.Context, r Record) error {
	cur, err := l.Holder(ctx, r.ID)
	if err != nil {
		return err
	}
	if cur.Instance != r.Instance || cur.Generation != r.Generation || cur.Released {
		return fmt.Errorf("deleting the lease of %s, generation %d: %w", r.ID, r.Generation, ErrLost)
	}
	if _, err := l.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &l.bucket, Key: aws.String(l.key(r.ID))}); err != nil {
		return fmt.Errorf("deleting the lease of %s: %w", r.ID, err)
	}
	return nil
}

// Acquire takes workspace id's lease for c.
func (l *S3Lease) Acquire(ctx context.Context, id string, c Claim) (Record, error) {
	old, err := l.Holder(ctx, id)
	if err != nil {
		return Record{}, err
	}
	r, err := next(id, old, c, time.Now())
	if err != nil {
		return Record{}, err
	}
	r, err = l.put(ctx, r, old.token)
	if errors.Is(err, ErrLost) {
		// Another host wrote first: name it if it holds the lease now.
		if cur, rerr := l.Holder(ctx, id); rerr == nil && cur.Live(time.Now()) {
			return Record{}, &HeldError{Record: cur}
		}
		return Record{}, fmt.Errorf("acquiring the lease of %s: %w", id, err)
	}
	return r, err
}

// Renew extends r by its TTL.
func (l *S3Lease) Renew(ctx context.Context, r Record) (Record, error) {
	return l.replace(ctx, r, func(n *Record) { n.Expires = time.Now().Add(r.TTL) })
}

// Release writes r back released.
func (l *S3Lease) Release(ctx context.Context, r Record) error {
	_, err := l.replace(ctx, r, func(n *Record) { n.Released, n.Expires = true, time.Now() })
	return err
}

// replace writes r changed by change over r. When the object changed
// since r, it may be r's own earlier write whose answer was lost (a
// timeout): a record of the same instance and generation, not released,
// is still this holder's, and is replaced in turn.
func (l *S3Lease) replace(ctx context.Context, r Record, change func(*Record)) (Record, error) {
	n := r
	change(&n)
	w, err := l.put(ctx, n, r.token)
	if !errors.Is(err, ErrLost) {
		return w, err
	}
	cur, rerr := l.Holder(ctx, r.ID)
	if rerr != nil || cur.Instance != r.Instance || cur.Generation != r.Generation || cur.Released {
		return Record{}, err
	}
	return l.put(ctx, n, cur.token)
}

// put writes r over the object whose ETag is token ("": no object), or
// fails with ErrLost when the object changed.
func (l *S3Lease) put(ctx context.Context, r Record, token string) (Record, error) {
	body, err := json.Marshal(stored{Record: r, Nonce: rand.Text()})
	if err != nil {
		return Record{}, err
	}
	in := &s3.PutObjectInput{
		Bucket: &l.bucket, Key: aws.String(l.key(r.ID)),
		Body: bytes.NewReader(body), ContentType: aws.String("application/json"),
	}
	if token == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(token)
	}
	out, err := l.client.PutObject(ctx, in)
	if err != nil {
		if preconditionFailed(err) {
			return Record{}, fmt.Errorf("lease of %s, generation %d: %w", r.ID, r.Generation, ErrLost)
		}
		return Record{}, fmt.Errorf("writing the lease of %s: %w", r.ID, err)
	}
	r.token = aws.ToString(out.ETag)
	if r.token == "" {
		return Record{}, fmt.Errorf("lease of %s: the server sent no ETag", r.ID)
	}
	return r, nil
}

// preconditionFailed: 412, or 409 ConditionalRequestConflict, which AWS
// answers when a concurrent conditional write to the key is in progress.
func preconditionFailed(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && (api.ErrorCode() == "PreconditionFailed" || api.ErrorCode() == "ConditionalRequestConflict") {
		return true
	}
	return httpStatus(err) == http.StatusPreconditionFailed
}

func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var api smithy.APIError
	return errors.As(err, &nsk) || errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound") ||
		httpStatus(err) == http.StatusNotFound
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
