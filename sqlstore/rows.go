package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

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

// scanRaw runs query on a read connection and calls fn with each row's
// values as the driver gives them (int64, []byte, string, nil): the check
// of every chunk's checksum reads the whole table, and skipping
// database/sql's conversions halves that time.
func (s *Store) scanRaw(ctx context.Context, query string, fn func(row []driver.Value) error) error {
	s.reads.queries.Add(1)
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return s.classify(err)
	}
	defer conn.Close()
	return s.classify(conn.Raw(func(dc any) error {
		rows, err := dc.(*sqlite3.SQLiteConn).Query(query, nil)
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
			s.reads.rows.Add(1)
			if err := fn(row); err != nil {
				return err
			}
		}
	}))
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
// sequential read. fn owns the slice it is given. A chunk that does not
// match its checksum ends the read with a *ChecksumError.
func (s *Store) ReadChunks(ctx context.Context, ino uint64, from, to int64, fn func(idx int64, data []byte)) error {
	rows, err := s.r.QueryContext(ctx, `SELECT key, crc, data FROM chunks WHERE key >= ? AND key < ? ORDER BY key`,
		chunkKey(ino, from), chunkKey(ino, to))
	if err != nil {
		return s.classify(fmt.Errorf("read chunks %d-%d of inode %d: %w", from, to, ino, err))
	}
	defer rows.Close()
	for rows.Next() {
		var key, crc int64
		// A []byte destination is a copy of its own, valid after Next.
		var data []byte
		if err := rows.Scan(&key, &crc, &data); err != nil {
			return s.classify(fmt.Errorf("read chunks of inode %d: %w", ino, err))
		}
		if data, err = verify(key, crc, data); err != nil {
			return err
		}
		fn(key&(MaxChunks-1), data)
	}
	return s.classify(rows.Err())
}
