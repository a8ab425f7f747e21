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
	if !fewSortedRanges(r.Header.Get("Range"), a.Size) {
		r.Header.Del("Range")
	}
	cw := &countingWriter{ResponseWriter: w}
	http.ServeContent(cw, r, path.Base(p), a.Mtime, f)
	return cw.n, nil
}

// fewSortedRanges reports whether a Range header may be served as parts:
// at most MaxRanges byte ranges, in order, none overlapping another. Many
// small or overlapping ranges cost far more to serve than the file (as in
// CVE-2011-3192), so they get the whole file instead, as Apache and nginx
// answer. A header this cannot read is left to http.ServeContent.
func fewSortedRanges(h string, size int64) bool {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok {
		return true
	}
	if strings.Count(spec, ",") >= MaxRanges {
		return false
	}
	end := int64(-1) // last byte of the previous range
	for _, r := range strings.Split(spec, ",") {
		first, last, ok := strings.Cut(strings.TrimSpace(r), "-")
		if !ok {
			return true
		}
		var lo, hi int64
		var err error
		if first == "" { // the last N bytes
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil {
				return true
			}
			lo, hi = max(size-n, 0), size-1
		} else {
			if lo, err = strconv.ParseInt(first, 10, 64); err != nil {
				return true
			}
			hi = size - 1
			if last != "" {
				if hi, err = strconv.ParseInt(last, 10, 64); err != nil {
					return true
				}
			}
		}
		if lo <= end {
			return false
		}
		end = hi
	}
	return true
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
