package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// ScanInodes calls fn for every inode.
func (s *Store) ScanInodes(ctx context.Context, fn func(Inode) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT ino, mode, uid, gid, nlink, size, atime_ns, mtime_ns, ctime_ns, rdev, coalesce(target, '') FROM inodes`)
	if err != nil {
		return s.classify(fmt.Errorf("scan inodes: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		var n Inode
		if err := rows.Scan(&n.Ino, &n.Mode, &n.Uid, &n.Gid, &n.Nlink, &n.Size, &n.Atime, &n.Mtime, &n.Ctime, &n.Rdev, &n.Target); err != nil {
			return s.classify(fmt.Errorf("scan inodes: %w", err))
		}
		if err := fn(n); err != nil {
			return err
		}
	}
	return s.classify(rows.Err())
}

// ScanDentries calls fn for every directory entry.
func (s *Store) ScanDentries(ctx context.Context, fn func(Dentry) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT parent, name, ino FROM dentries`)
	if err != nil {
		return s.classify(fmt.Errorf("scan dentries: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		var d Dentry
		if err := rows.Scan(&d.Parent, &d.Name, &d.Ino); err != nil {
			return s.classify(fmt.Errorf("scan dentries: %w", err))
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return s.classify(rows.Err())
}

// ScanXattrs calls fn for every extended attribute.
func (s *Store) ScanXattrs(ctx context.Context, fn func(Xattr) error) error {
	rows, err := s.r.QueryContext(ctx, `SELECT ino, name, value FROM xattrs`)
	if err != nil {
		return s.classify(fmt.Errorf("scan xattrs: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		var x Xattr
		if err := rows.Scan(&x.Ino, &x.Name, &x.Value); err != nil {
			return s.classify(fmt.Errorf("scan xattrs: %w", err))
		}
		if err := fn(x); err != nil {
			return err
		}
	}
	return s.classify(rows.Err())
}

func chunkKey(ino uint64, idx int64) int64 { return int64(ino)<<chunkIdxBits | idx }

// ReadChunk returns chunk idx of inode ino, or nil when the chunk is a hole.
func (s *Store) ReadChunk(ctx context.Context, ino uint64, idx int64) ([]byte, error) {
	st, err := s.readChunkStmt(ctx)
	if err != nil {
		return nil, err
	}
	var data sql.RawBytes // a fresh slice per row already; see ReadChunks
	err = st.QueryRowContext(ctx, chunkKey(ino, idx)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.classify(fmt.Errorf("read chunk %d of inode %d: %w", idx, ino, err))
	}
	return data, nil
}

func (s *Store) readChunkStmt(ctx context.Context) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readChunkSt == nil {
		st, err := s.r.PrepareContext(ctx, `SELECT data FROM chunks WHERE key=?`)
		if err != nil {
			return nil, s.classify(fmt.Errorf("prepare chunk read: %w", err))
		}
		s.readChunkSt = st
	}
	return s.readChunkSt, nil
}

// ReadChunks calls fn for each stored chunk of inode ino with index in
// [from, to), in order; holes are skipped. One query serves a whole
// sequential read.
func (s *Store) ReadChunks(ctx context.Context, ino uint64, from, to int64, fn func(idx int64, data []byte)) error {
	rows, err := s.r.QueryContext(ctx, `SELECT key, data FROM chunks WHERE key >= ? AND key < ? ORDER BY key`,
		chunkKey(ino, from), chunkKey(ino, to))
	if err != nil {
		return s.classify(fmt.Errorf("read chunks %d-%d of inode %d: %w", from, to, ino, err))
	}
	defer rows.Close()
	for rows.Next() {
		var key int64
		// RawBytes spares database/sql's copy of every chunk: go-sqlite3
		// already hands each row a fresh slice (C.GoBytes), which fn may keep.
		var data sql.RawBytes
		if err := rows.Scan(&key, &data); err != nil {
			return s.classify(fmt.Errorf("read chunks of inode %d: %w", ino, err))
		}
		fn(key&(MaxChunks-1), data)
	}
	return s.classify(rows.Err())
}
