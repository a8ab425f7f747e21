package publish

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
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
