// Package archivetest builds the tar archives archive/tar cannot write,
// for tests: GNU sparse members in PAX 1.0 and old GNU format.
package archivetest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SparsePAX is a GNU PAX 1.0 sparse member of realSize bytes holding data
// at offset off: the map travels in the first block of the data. The PAX
// header is written raw since archive/tar drops GNU.sparse records.
func SparsePAX(name string, realSize, off int64, data string) ([]byte, error) {
	var recs string
	for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", name},
		{"GNU.sparse.realsize", strconv.FormatInt(realSize, 10)}} {
		rec := " " + kv[0] + "=" + kv[1] + "\n"
		recs += strconv.Itoa(len(rec)+2) + rec // records here are 10-99 bytes long
	}
	var buf bytes.Buffer
	buf.Write(pad(append(RawHeader("PaxHeaders/"+name, 'x', int64(len(recs)), nil), recs...)))
	sparseMap := fmt.Sprintf("1\n%d\n%d\n", off, len(data))
	body := sparseMap + strings.Repeat("\x00", 512-len(sparseMap)) + data
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "GNUSparseFile.0/" + name, Mode: 0o644,
		Size: int64(len(body)), Format: tar.FormatUSTAR}); err != nil {
		return nil, err
	}
	if _, err := io.WriteString(tw, body); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GNUOldSparse is an old-format GNU sparse member ('S') of realSize bytes
// holding data at offset off, with the end-of-archive blocks.
func GNUOldSparse(name string, realSize, off int64, data string) []byte {
	blk := RawHeader(name, 'S', int64(len(data)), func(blk []byte) {
		copy(blk[257:265], "ustar  \x00") // GNU magic
		octal(blk[386:398], off)          // sparse[0].offset
		octal(blk[398:410], int64(len(data)))
		octal(blk[483:495], realSize)
	})
	return append(pad(append(blk, data...)), make([]byte, 1024)...)
}

func octal(b []byte, v int64) { copy(b, fmt.Sprintf("%0*o\x00", len(b)-1, v)) }

// RawHeader is a ustar header block; edit changes it before the checksum.
func RawHeader(name string, typ byte, size int64, edit func([]byte)) []byte {
	blk := make([]byte, 512)
	copy(blk, name)
	octal(blk[100:108], 0o644)
	octal(blk[108:116], 0)
	octal(blk[116:124], 0)
	octal(blk[124:136], size)
	octal(blk[136:148], 1e9)
	blk[156] = typ
	copy(blk[257:265], "ustar\x0000")
	if edit != nil {
		edit(blk)
	}
	copy(blk[148:156], "        ")
	sum := 0
	for _, c := range blk {
		sum += int(c)
	}
	copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return blk
}

// pad fills b to a whole number of blocks.
func pad(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }

// Member is one entry of a test archive; Mode 0 means 0644.
type Member struct {
	Type         byte
	Name, Link   string
	Mode         int64
	Data         string
	Major, Minor int64
}

// Tar writes ms as a tar stream. Data is written for any type, so a
// header-only type with Data makes a malformed member.
func Tar(ms ...Member) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		mode := m.Mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Typeflag: m.Type, Name: m.Name, Linkname: m.Link, Mode: mode, Size: int64(len(m.Data)),
			Devmajor: m.Major, Devminor: m.Minor, ModTime: time.Unix(1e9, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if _, err := io.WriteString(tw, m.Data); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}
