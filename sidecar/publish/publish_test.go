package publish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

func setup(t *testing.T) (*sfs.FS, *Links, string, http.Handler) {
	t.Helper()
	store := filepath.Join(t.TempDir(), "ws.db")
	fsys, err := sfs.Open(context.Background(), store, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	links, err := Open(store, "http://public.example")
	if err != nil {
		t.Fatal(err)
	}
	return fsys, links, store, Handler(fsys, links, slog.New(slog.DiscardHandler))
}

func get(t *testing.T, h http.Handler, link string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, u.RequestURI(), nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestServeFile(t *testing.T) {
	fsys, links, store, h := setup(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 1000)...)
	if err := fsys.MkdirAll("/out dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/out dir/img.png", png, 0o644); err != nil {
		t.Fatal(err)
	}
	link, err := links.URL("out dir/img.png", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(KeyPath(store)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}

	rec := get(t, h, link, nil)
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), png) || rec.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("GET: %d %q, %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	etag := rec.Header().Get("ETag")
	if rec := get(t, h, link, map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", rec.Code)
	}
	if rec := get(t, h, link, map[string]string{"Range": "bytes=0-7"}); rec.Code != http.StatusPartialContent || rec.Body.String() != string(png[:8]) {
		t.Errorf("Range: %d %q", rec.Code, rec.Body.String())
	}

	u, _ := url.Parse(link)
	q := u.Query()
	exp, _ := strconv.ParseInt(q.Get("e"), 10, 64)
	key, _ := links.currentKey()
	expired := "/p/out%20dir/img.png?e=" + strconv.FormatInt(time.Now().Add(-time.Second).Unix(), 10) + "&s=" + sign(key, "/out dir/img.png", time.Now().Add(-time.Second).Unix())
	for name, bad := range map[string]string{
		"tampered signature": strings.Replace(link, "&s=", "&s=0", 1),
		"other path":         strings.Replace(link, "img.png", "img.PNG", 1),
		"longer expiry":      strings.Replace(link, "e="+q.Get("e"), "e="+strconv.FormatInt(exp+1, 10), 1),
		"expired":            "http://public.example" + expired,
		"no signature":       "http://public.example/p/out%20dir/img.png",
		"traversal":          strings.Replace(link, "/p/out%20dir/img.png", "/p/../out%20dir/img.png", 1) + "x",
	} {
		if rec := get(t, h, bad, nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, rec.Code)
		}
	}

	if err := RotateKey(store); err != nil {
		t.Fatal(err)
	}
	if rec := get(t, h, link, nil); rec.Code != http.StatusNotFound {
		t.Errorf("after rotation: %d, want 404", rec.Code)
	}

	if err := fsys.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs, err := fsys.Store().Audit(context.Background(), sqlstore.AuditFilter{Actor: Actor, Op: "download"})
	if err != nil || len(evs) < 3 {
		t.Errorf("download audit: %v, %+v", err, evs)
	}
}

func TestServeDirAsTarGz(t *testing.T) {
	fsys, links, _, h := setup(t)
	files := map[string]string{"/site/index.html": "<h1>hi</h1>", "/site/css/a.css": "body{}"}
	for p, c := range files {
		if err := fsys.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link, err := links.URL("/site", 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := get(t, h, link, nil)
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Disposition"), "site.tar.gz") {
		t.Fatalf("GET dir: %d %v", rec.Code, rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got[hdr.Name] = string(data)
	}
	if got["site/index.html"] != files["/site/index.html"] || got["site/css/a.css"] != files["/site/css/a.css"] {
		t.Errorf("tar: %v", got)
	}
}

func TestURLErrors(t *testing.T) {
	_, links, store, _ := setup(t)
	if _, err := links.URL("/x", 365*24*time.Hour); err == nil {
		t.Error("a year-long link was made")
	}
	noBase, err := Open(store, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noBase.URL("/x", 0); err != ErrNoBaseURL {
		t.Errorf("no base URL: %v", err)
	}
	os.Chmod(KeyPath(store), 0o644)
	if _, err := links.URL("/x", 0); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Errorf("world-readable key: %v", err)
	}
}

// TestRangeBound: a Range header of many, overlapping or unsorted ranges
// gets the whole file (200), as common servers answer, instead of a
// multipart body many times the file's size; a few sorted ranges still
// get their parts.
func TestRangeBound(t *testing.T) {
	fsys, links, _, h := setup(t)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	if err := fsys.WriteFile("/f.bin", data, 0o644); err != nil {
		t.Fatal(err)
	}
	link, err := links.URL("/f.bin", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	many := func(n int, overlap bool) string {
		var b strings.Builder
		b.WriteString("bytes=")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			if overlap {
				b.WriteString("0-")
			} else {
				fmt.Fprintf(&b, "%d-%d", 2*i, 2*i)
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, rng string
		code      int
	}{
		{"one", "bytes=0-9", http.StatusPartialContent},
		{"sixteen sorted", many(MaxRanges, false), http.StatusPartialContent},
		{"seventeen", many(MaxRanges+1, false), http.StatusOK},
		{"seventy thousand", many(70_000, false), http.StatusOK},
		{"overlapping", many(2, true), http.StatusOK},
		{"unsorted", "bytes=20-29,0-9", http.StatusOK},
		{"suffix overlapping", "bytes=9990-9995,-8", http.StatusOK},
		{"suffix after", "bytes=0-9,-8", http.StatusPartialContent},
	} {
		rec := get(t, h, link, map[string]string{"Range": tc.rng})
		if rec.Code != tc.code || (tc.code == http.StatusOK && !bytes.Equal(rec.Body.Bytes(), data)) || rec.Body.Len() > 2*len(data) {
			t.Errorf("%s: %d, %d bytes; want %d", tc.name, rec.Code, rec.Body.Len(), tc.code)
		}
	}
}

// TestRevokeWithinOneTick: a rotation revokes every link at once even
// when the key file's mtime does not move (two rotations within one tick
// of the file system's clock left the old key in force).
func TestRevokeWithinOneTick(t *testing.T) {
	fsys, links, store, h := setup(t)
	if err := fsys.WriteFile("/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		link, err := links.URL("/f", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if rec := get(t, h, link, nil); rec.Code != http.StatusOK {
			t.Fatalf("round %d: fresh link: %d", i, rec.Code)
		}
		before, err := os.Stat(KeyPath(store))
		if err != nil {
			t.Fatal(err)
		}
		if err := RotateKey(store); err != nil {
			t.Fatal(err)
		}
		// The same tick: the file looks as it did when the key was read.
		if err := os.Chtimes(KeyPath(store), before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		if rec := get(t, h, link, nil); rec.Code != http.StatusNotFound {
			t.Fatalf("round %d: a revoked link served: %d", i, rec.Code)
		}
	}
}

// TestRangeUnsatisfiable is a regression test: "bytes=-0" was answered 206
// with an empty body (http.ServeContent takes a zero suffix for a range).
// Ranges no byte of the file satisfies are answered as nginx does, within
// RFC 9110 (14.1.2, 15.5.17): left out of a set that has others, and 416
// with "Content-Range: bytes */SIZE" when none is left or the header
// cannot be read; an empty file has no range to cut and is answered
// whole, and so is a Range of another unit.
func TestRangeUnsatisfiable(t *testing.T) {
	fsys, links, _, h := setup(t)
	data := []byte("0123456789")
	if err := fsys.WriteFile("/f", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/empty", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, rng string
		code      int
		body      string // "" with a 206: multipart, checked by its parts
		parts     []string
	}{
		{"/f", "bytes=-0", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=5-4", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=10-", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=10-20", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=-0,10-,5-4", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=-0,2-3", http.StatusPartialContent, "23", nil},
		{"/f", "bytes=2-3,5-4", http.StatusPartialContent, "23", nil},
		{"/f", "bytes=0-1,20-30", http.StatusPartialContent, "01", nil},
		{"/f", "bytes=0-1, -0 ,8-", http.StatusPartialContent, "", []string{"01", "89"}},
		{"/f", "bytes=-20", http.StatusPartialContent, "0123456789", nil},
		{"/f", "bytes=9-9", http.StatusPartialContent, "9", nil},
		{"/f", "bytes=", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=a-b", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "bytes=--1", http.StatusRequestedRangeNotSatisfiable, "", nil},
		{"/f", "BYTES=2-3", http.StatusPartialContent, "23", nil},
		{"/f", "items=0-1", http.StatusOK, "0123456789", nil},
		{"/empty", "bytes=-0", http.StatusOK, "", nil},
		{"/empty", "bytes=0-0", http.StatusOK, "", nil},
		{"/empty", "bytes=-5", http.StatusOK, "", nil},
	} {
		link, err := links.URL(tc.file, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		rec := get(t, h, link, map[string]string{"Range": tc.rng})
		name := tc.file + " " + tc.rng
		if rec.Code != tc.code {
			t.Errorf("%s: %d %q, want %d", name, rec.Code, rec.Body.String(), tc.code)
			continue
		}
		switch {
		case tc.code == http.StatusRequestedRangeNotSatisfiable:
			if cr := rec.Header().Get("Content-Range"); cr != "bytes */10" {
				t.Errorf("%s: Content-Range %q, want bytes */10", name, cr)
			}
		case tc.parts != nil:
			_, params, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			mr := multipart.NewReader(rec.Body, params["boundary"])
			var got []string
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				got = append(got, string(b))
			}
			if !slices.Equal(got, tc.parts) {
				t.Errorf("%s: parts %q, want %q", name, got, tc.parts)
			}
		case rec.Body.String() != tc.body:
			t.Errorf("%s: body %q, want %q", name, rec.Body.String(), tc.body)
		}
	}
	// Preconditions come first: a stale If-Range gets the whole file,
	// a matching If-None-Match a 304, as without the Range.
	link, _ := links.URL("/f", time.Minute)
	etag := get(t, h, link, nil).Header().Get("ETag")
	if rec := get(t, h, link, map[string]string{"Range": "bytes=-0", "If-Range": `"stale"`}); rec.Code != http.StatusOK || rec.Body.String() != string(data) {
		t.Errorf("stale If-Range: %d %q", rec.Code, rec.Body.String())
	}
	if rec := get(t, h, link, map[string]string{"Range": "bytes=-0", "If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", rec.Code)
	}
}
