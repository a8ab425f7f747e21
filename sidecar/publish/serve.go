package publish

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/metrics"
)

var (
	published = promauto.With(metrics.Registry).NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_publish_links_total", Help: "Public links made.",
	})
	downloads = promauto.With(metrics.Registry).NewCounterVec(prometheus.CounterOpts{
		Name: "sqlfs_publish_downloads_total", Help: "Requests to the public listener by outcome (file, dir, not_found).",
	}, []string{"outcome"})
	downloadBytes = promauto.With(metrics.Registry).NewCounter(prometheus.CounterOpts{
		Name: "sqlfs_publish_download_bytes_total", Help: "Bytes served by the public listener.",
	})
)

// Actor is whom the audit trail names for downloads.
const Actor = "publish:download"

// MaxRanges is the most ranges a request gets as parts; more, or overlapping
// or unsorted ones, get the whole file.
const MaxRanges = 16

// Handler serves GET and HEAD /p/PATH?e=EXPIRY&s=SIGNATURE: a file with its
// content type, Range and ETag/If-None-Match, or a directory as a .tar.gz
// stream. Everything else is a 404.
func Handler(fsys *sfs.FS, links *Links, log *slog.Logger) http.Handler {
	// Every read is the downloader's: the core audits a refusal under it.
	fsys = fsys.WithActor(Actor)
	audit := fsys
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := links.Signed(r)
		if !ok {
			notFound(w)
			return
		}
		a, err := fsys.Stat(p)
		if err != nil {
			audit.Record("download", p, err)
			notFound(w)
			return
		}
		var n int64
		if a.IsDir() {
			n, err = serveDir(w, r, fsys, p)
			downloads.WithLabelValues("dir").Inc()
		} else {
			n, err = serveFile(w, r, fsys, p, a)
			downloads.WithLabelValues("file").Inc()
		}
		downloadBytes.Add(float64(n))
		audit.Record("download", p, err)
		if err != nil {
			log.Warn("publish: download failed", "path", p, "err", err)
		}
	})
}

func notFound(w http.ResponseWriter) {
	downloads.WithLabelValues("not_found").Inc()
	http.Error(w, "404 page not found", http.StatusNotFound)
}

// countingWriter counts the body bytes a response carried.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

func serveFile(w http.ResponseWriter, r *http.Request, fsys *sfs.FS, p string, a sfs.Attr) (int64, error) {
	f, err := fsys.OpenFile(p, syscall.O_RDONLY, 0)
	if err != nil {
		http.Error(w, "cannot open", http.StatusInternalServerError)
		return 0, err
	}
	defer f.Close()
	ctype := mime.TypeByExtension(path.Ext(p))
	if ctype == "" {
		head := make([]byte, 512)
		n, _ := f.ReadAt(head, 0)
		ctype = http.DetectContentType(head[:n])
	}
	w.Header().Set("Content-Type", ctype)
	// The inode, size and change time name one version of the contents.
	w.Header().Set("ETag", fmt.Sprintf(`"%x-%x-%x"`, a.Ino, a.Size, a.Mtime.UnixNano()))
	w.Header().Set("Cache-Control", "private, max-age=0")
	if h := r.Header.Get("Range"); h != "" {
		if h = rangeHeader(h, a.Size); h == "" {
			r.Header.Del("Range")
		} else {
			r.Header.Set("Range", h)
		}
	}
	cw := &countingWriter{ResponseWriter: w}
	http.ServeContent(cw, r, path.Base(p), a.Mtime, f)
	return cw.n, nil
}

// byteRange is the bytes lo to hi of a file, both included.
type byteRange struct{ lo, hi int64 }

// parseRanges reads the byte ranges of a Range header's spec ("0-9,-5")
// of a file of size into those some byte of the file satisfies, in their
// order, as nginx does (RFC 9110 14.1.2 lets a server leave out the
// others): a suffix of 0 bytes ("-0"), a first byte at or past the end
// and a last before the first satisfy none. ok is false for a spec it
// cannot read, or one that names no range.
func parseRanges(spec string, size int64) (rs []byteRange, ok bool) {
	num := func(s string) (int64, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && n >= 0 && s[0] != '+'
	}
	specs := 0
	for _, r := range strings.Split(spec, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		specs++
		first, last, ok := strings.Cut(r, "-")
		if !ok || first == "" && last == "" {
			return nil, false
		}
		br := byteRange{hi: size - 1}
		if first == "" { // the last N bytes
			n, ok := num(last)
			if !ok {
				return nil, false
			}
			if n == 0 {
				continue
			}
			br.lo = max(size-n, 0)
		} else {
			if br.lo, ok = num(first); !ok {
				return nil, false
			}
			if last != "" {
				hi, ok := num(last)
				if !ok {
					return nil, false
				}
				if hi < br.lo {
					continue
				}
				br.hi = min(hi, size-1)
			}
		}
		if br.lo < size {
			rs = append(rs, br)
		}
	}
	return rs, specs > 0
}

// rangeHeader is the Range header http.ServeContent gets for h, so that
// it answers as nginx does (RFC 9110 14.2, 15.5.17), after If-Range and
// the other preconditions, which it checks first:
//   - another unit than bytes: none, the whole file (RFC 9110 says to
//     ignore it; ServeContent would answer 416);
//   - no range some byte satisfies, or one it cannot read: one it answers
//     416 with "Content-Range: bytes */SIZE" (ServeContent answered
//     "bytes=-0" 206 with no body, and "bytes=5-4" 416 without the size);
//   - an empty file: none, the whole file, as there is nothing to cut;
//   - more than MaxRanges ranges, or overlapping or unsorted ones: none.
//     Many small or overlapping ranges cost far more to serve than the
//     file (as in CVE-2011-3192), so they get the whole file instead, as
//     Apache and nginx answer;
//   - else the satisfiable ranges.
func rangeHeader(h string, size int64) string {
	unit, spec, ok := strings.Cut(h, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return ""
	}
	rs, ok := parseRanges(spec, size)
	switch {
	case !ok || size > 0 && len(rs) == 0:
		return fmt.Sprintf("bytes=%d-", size)
	case size == 0 || len(rs) > MaxRanges:
		return ""
	}
	var b strings.Builder
	b.WriteString("bytes=")
	for i, r := range rs {
		if i > 0 {
			if r.lo <= rs[i-1].hi {
				return ""
			}
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d-%d", r.lo, r.hi)
	}
	return b.String()
}

// serveDir streams the tree below p as a gzipped tar: regular files,
// directories and symlinks, as `tar czf` would.
func serveDir(w http.ResponseWriter, r *http.Request, fsys *sfs.FS, p string) (int64, error) {
	name := path.Base(p)
	if p == "/" {
		name = "workspace"
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.tar.gz"`, name))
	if r.Method == http.MethodHead {
		return 0, nil
	}
	cw := &countingWriter{ResponseWriter: w}
	gz := gzip.NewWriter(cw)
	tw := tar.NewWriter(gz)
	err := writeTree(tw, fsys, p, name)
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := gz.Close(); err == nil {
		err = cerr
	}
	return cw.n, err
}

func writeTree(tw *tar.Writer, fsys *sfs.FS, p, name string) error {
	a, err := fsys.Lstat(p)
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: name, Mode: int64(a.Mode & 0o7777), ModTime: a.Mtime.Truncate(time.Second), Uid: int(a.Uid), Gid: int(a.Gid)}
	switch a.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		ents, err := fsys.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := writeTree(tw, fsys, path.Join(p, e.Name), name+"/"+e.Name); err != nil {
				return err
			}
		}
		return nil
	case syscall.S_IFLNK:
		target, err := fsys.Readlink(p)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		return tw.WriteHeader(hdr)
	case syscall.S_IFREG:
		f, err := fsys.OpenFile(p, syscall.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		hdr.Typeflag, hdr.Size = tar.TypeReg, a.Size
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, a.Size)
		return err
	}
	return nil // FIFOs, sockets and devices are not content
}
