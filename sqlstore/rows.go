package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/mattn/go-sqlite3"
)

// Inode is one row of the inodes table. Times are Unix nanoseconds.
type Inode struct {
	Ino                 uint64
	Mode                uint32
	Uid, Gid            uint32
	Nlink               uint32
	Size                int64
	Atime, Mtime, Ctime int64
	Rdev                uint64
	Target              string // symlink target
}

// Dentry names an inode inside a directory.
type Dentry struct {
	Parent uint64
	Name   string
	Ino    uint64
}

// Xattr is one extended attribute.
type Xattr struct {
	Ino   uint64
	Name  string
	Value []byte
}

// scanRaw runs query with args on a read connection and calls fn with
// each row's values as the driver gives them (int64, []byte, string, nil):
// the check of every chunk's checksum reads the whole table, and skipping
// database/sql's conversions halves that time; a directory's first read
// (a host's wake reads two) spent a third of its CPU in them.
func (s *Store) scanRaw(ctx context.Context, query string, fn func(row []driver.Value) error, args ...any) error {
	return s.scanDriver(ctx, &s.reads, query, fn, args...)
}

// scanDriver is scanRaw counting its query and rows in rc, or nowhere when
// rc is nil: file data reads are not metadata reads.
func (s *Store) scanDriver(ctx context.Context, rc *readCounter, query string, fn func(row []driver.Value) error, args ...any) error {
	if rc != nil {
		rc.queries.Add(1)
	}
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return s.classify(err)
	}
	defer conn.Close()
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return s.classify(conn.Raw(func(dc any) error {
		rows, err := dc.(*sqlite3.SQLiteConn).QueryContext(ctx, query, named)
		if err != nil {
			return err
		}
		defer rows.Close()
		row := make([]driver.Value, len(rows.Columns()))
		for {
			if err := rows.Next(row); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if rc != nil {
				rc.rows.Add(1)
			}
			if err := fn(row); err != nil {
				return err
			}
		}
	}))
}

// rawRow reads the columns of a row from scanRaw, keeping the first that
// does not hold what it must (which Scan would have refused) as err.
type rawRow struct {
	row []driver.Value
	err error
}

func (r *rawRow) bad(i int, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("column %d holds %T %v, not %s: %w", i, r.row[i], r.row[i], want, ErrStoreCorrupt)
	}
}

func (r *rawRow) int(i int) int64 {
	v, ok := r.row[i].(int64)
	if !ok {
		r.bad(i, "an integer")
	}
	return v
}

func (r *rawRow) uint32(i int) uint32 {
	v := r.int(i)
	if v < 0 || v > math.MaxUint32 {
		r.bad(i, "a 32-bit unsigned integer")
	}
	return uint32(v)
}

func (r *rawRow) uint64(i int) uint64 {
	v := r.int(i)
	if v < 0 {
		r.bad(i, "an unsigned integer")
	}
	return uint64(v)
}

func (r *rawRow) text(i int) string {
	switch v := r.row[i].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	r.bad(i, "text")
	return ""
}

func asInt(v driver.Value) int64 {
	i, _ := v.(int64)
	return i
}

func chunkKey(ino uint64, idx int64) int64 { return int64(ino)<<chunkIdxBits | idx }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunkCRC is the checksum stored with a chunk's data.
func chunkCRC(data []byte) int64 { return int64(crc32.Checksum(data, castagnoli)) }

// ErrChecksum: a chunk read from the store does not match its checksum.
var ErrChecksum = errors.New("chunk checksum mismatch")

// ChecksumError names the chunk whose data does not match its stored
// checksum; errors.Is(err, ErrChecksum) holds.
type ChecksumError struct {
	Ino   uint64
	Index int64
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("chunk %d of inode %d: %v", e.Index, e.Ino, ErrChecksum)
}

func (e *ChecksumError) Unwrap() error { return ErrChecksum }

// verify returns data, or a *ChecksumError when it does not match crc.
func verify(key, crc int64, data []byte) ([]byte, error) {
	if chunkCRC(data) != crc {
		return nil, &ChecksumError{Ino: uint64(key >> chunkIdxBits), Index: key & (MaxChunks - 1)}
	}
	return data, nil
}

// ReadChunk returns chunk idx of inode ino, or nil when the chunk is a hole.
// Data that does not match its checksum is never returned: the error is a
// *ChecksumError.
func (s *Store) ReadChunk(ctx context.Context, ino uint64, idx int64) ([]byte, error) {
	var data []byte
	var crc int64
	key := chunkKey(ino, idx)
	err := s.readChunk.QueryRowContext(ctx, key).Scan(&data, &crc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify(fmt.Errorf("read chunk %d of inode %d: %w", idx, ino, err))
	}
	return verify(key, crc, data)
}

// ReadChunks calls fn for each stored chunk of inode ino with index in
// [from, to), in order; holes are skipped. One query serves a whole
// sequential read. fn owns the slice it is given: the driver's own copy of
// the blob, which database/sql's Scan would have copied once more. A chunk
// that does not match its checksum ends the read with a *ChecksumError.
func (s *Store) ReadChunks(ctx context.Context, ino uint64, from, to int64, fn func(idx int64, data []byte)) error {
	err := s.scanDriver(ctx, nil, `SELECT key, crc, data FROM chunks WHERE key >= ? AND key < ? ORDER BY key`, func(r []driver.Value) error {
		key, crc := asInt(r[0]), asInt(r[1])
		data, _ := r[2].([]byte)
		data, err := verify(key, crc, data)
		if err != nil {
			return err
		}
		fn(key&(MaxChunks-1), data)
		return nil
	}, chunkKey(ino, from), chunkKey(ino, to))
	if err != nil && !errors.Is(err, ErrChecksum) {
		return fmt.Errorf("read chunks %d-%d of inode %d: %w", from, to, ino, err)
	}
	return err
}
