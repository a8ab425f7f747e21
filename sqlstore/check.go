package sqlstore

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
)

// Problem is one inconsistency found by Check.
type Problem struct {
	Kind   string // integrity, dangling-dentry, orphan-chunk, nlink, size, …
	Detail string
}

func (p Problem) String() string { return p.Kind + ": " + p.Detail }

// checks are the project's own invariants beyond SQLite's integrity_check;
// each query returns one text column describing a violation.
var checks = []struct{ kind, query string }{
	{"dangling-dentry", `SELECT printf('entry %d/%s names missing inode %d', d.parent, d.name, d.ino)
		FROM dentries d LEFT JOIN inodes i ON i.ino = d.ino WHERE i.ino IS NULL`},
	{"dangling-parent", `SELECT printf('entry %s in missing or non-directory inode %d', d.name, d.parent)
		FROM dentries d LEFT JOIN inodes p ON p.ino = d.parent WHERE p.ino IS NULL OR (p.mode & 61440) != 16384`},
	{"orphan-chunk", `SELECT printf('chunk %d of missing inode %d', c.key & 16777215, c.key >> 24)
		FROM chunks c LEFT JOIN inodes i ON i.ino = c.key >> 24 WHERE i.ino IS NULL`},
	{"orphan-xattr", `SELECT printf('xattr %s of missing inode %d', x.name, x.ino)
		FROM xattrs x LEFT JOIN inodes i ON i.ino = x.ino WHERE i.ino IS NULL`},
	// Reads copy at most a chunk's worth: longer data is a misplaced write.
	{"chunk-size", `SELECT printf('chunk %d of inode %d holds %d bytes, more than a chunk', c.key & 16777215, c.key >> 24, length(c.data))
		FROM chunks c WHERE length(c.data) > (SELECT CAST(v AS INTEGER) FROM meta WHERE k = 'chunk_size')`},
	{"chunk-past-eof", `SELECT printf('inode %d (size %d) has chunk %d', i.ino, i.size, c.key & 16777215)
		FROM chunks c JOIN inodes i ON i.ino = c.key >> 24
		WHERE (c.key & 16777215) * (SELECT CAST(v AS INTEGER) FROM meta WHERE k = 'chunk_size') >= i.size`},
	{"chunk-not-file", `SELECT printf('inode %d of mode %o has data chunks', i.ino, i.mode)
		FROM inodes i WHERE (i.mode & 61440) != 32768 AND EXISTS (SELECT 1 FROM chunks c WHERE c.key >= i.ino << 24 AND c.key < (i.ino + 1) << 24)`},
	{"nlink", `SELECT printf('inode %d has nlink %d but %d names', i.ino, i.nlink, count(d.ino))
		FROM inodes i LEFT JOIN dentries d ON d.ino = i.ino
		WHERE (i.mode & 61440) != 16384 GROUP BY i.ino HAVING count(d.ino) != i.nlink`},
	{"dir-nlink", `SELECT printf('directory %d has nlink %d, expected %d', i.ino, i.nlink,
			2 + (SELECT count(*) FROM dentries d JOIN inodes c ON c.ino = d.ino WHERE d.parent = i.ino AND (c.mode & 61440) = 16384))
		FROM inodes i WHERE (i.mode & 61440) = 16384 AND i.nlink !=
			2 + (SELECT count(*) FROM dentries d JOIN inodes c ON c.ino = d.ino WHERE d.parent = i.ino AND (c.mode & 61440) = 16384)`},
	// A directory's parent is the one entry naming it, so one name each
	// keeps parent pointers and entries the same thing.
	{"dir-links", `SELECT printf('directory %d has %d names', d.ino, count(*))
		FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE (i.mode & 61440) = 16384 GROUP BY d.ino HAVING count(*) > 1`},
	{"root-named", `SELECT printf('entry %d/%s names the root', parent, name) FROM dentries WHERE ino = 1`},
	// UNION keeps each (start, ancestor) pair once, so the walk ends even
	// on a cycle.
	{"cycle", `WITH RECURSIVE up(start, cur) AS (
			SELECT d.ino, d.parent FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE (i.mode & 61440) = 16384
			UNION
			SELECT up.start, d.parent FROM up JOIN dentries d ON d.ino = up.cur WHERE up.cur != up.start)
		SELECT DISTINCT printf('directory %d is its own ancestor', start) FROM up WHERE cur = start`},
	{"unreachable", `WITH RECURSIVE reach(ino) AS (
			SELECT 1 UNION SELECT d.ino FROM dentries d JOIN reach r ON d.parent = r.ino)
		SELECT printf('inode %d (mode %o, nlink %d) is not reachable from the root', i.ino, i.mode, i.nlink)
		FROM inodes i WHERE i.nlink > 0 AND i.ino NOT IN (SELECT ino FROM reach)`},
	{"root", `SELECT 'root inode 1 is missing or not a directory' WHERE NOT EXISTS
		(SELECT 1 FROM inodes WHERE ino = 1 AND (mode & 61440) = 16384)`},
}

// Check verifies the store: SQLite's integrity_check, then the filesystem's
// own invariants. Inodes with nlink 0 are orphans of files that were open
// when the owner stopped; they are reclaimed at the next open, not errors.
func (s *Store) Check(ctx context.Context) ([]Problem, error) {
	var problems []Problem
	rows, err := s.r.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return nil, s.classify(fmt.Errorf("integrity check: %w", err))
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return nil, s.classify(err)
		}
		if msg != "ok" {
			problems = append(problems, Problem{"integrity", msg})
		}
	}
	rows.Close()
	for _, c := range checks {
		rows, err := s.r.QueryContext(ctx, c.query)
		if err != nil {
			return nil, s.classify(fmt.Errorf("check %s: %w", c.kind, err))
		}
		for rows.Next() {
			var msg string
			if err := rows.Scan(&msg); err != nil {
				rows.Close()
				return nil, s.classify(err)
			}
			problems = append(problems, Problem{c.kind, msg})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, s.classify(err)
		}
	}
	bad, err := s.checkChunkCRCs(ctx)
	return append(problems, bad...), err
}

// checkChunkCRCs reads every chunk and compares it with its checksum.
func (s *Store) checkChunkCRCs(ctx context.Context) ([]Problem, error) {
	var problems []Problem
	err := s.scanRaw(ctx, `SELECT key, crc, data FROM chunks`, func(r []driver.Value) error {
		key, crc := asInt(r[0]), asInt(r[1])
		data, _ := r[2].([]byte)
		if _, err := verify(key, crc, data); err != nil {
			problems = append(problems, Problem{"checksum", fmt.Sprintf("%v (stored %#x, data has %#x)", err, crc, chunkCRC(data))})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check checksums: %w", err)
	}
	return problems, nil
}

// FormatProblems renders problems one per line.
func FormatProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}
