package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
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

// totalsCheck holds for the live tree only: a checkpoint keeps no totals.
const totalsCheck = `SELECT printf('the totals say %d inodes of %d bytes, the inodes are %d of %d bytes', t.inodes, t.bytes, a.n, a.b)
	FROM (SELECT count(*) AS n, coalesce(sum(CASE WHEN mode & 61440 = 32768 THEN size ELSE 0 END), 0) AS b FROM inodes) a
	LEFT JOIN totals t WHERE t.inodes IS NOT a.n OR t.bytes IS NOT a.b`

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
	for _, c := range slices.Concat(checks, []struct{ kind, query string }{{"totals", totalsCheck}}) {
		got, err := s.problems(ctx, s.r, c.kind, c.query)
		if err != nil {
			return nil, err
		}
		problems = append(problems, got...)
	}
	bad, err := s.checkChunkCRCs(ctx)
	if err != nil {
		return nil, err
	}
	problems = append(problems, bad...)
	bad, err = s.checkCheckpoints(ctx)
	return append(problems, bad...), err
}

// historyChecks hold for the _hist tables whatever the checkpoints: a row
// died after it was born, a key's old version died no later than its live
// one was born, and a row no checkpoint sees is gone once the janitor has
// run.
func historyChecks(v versioned) []struct{ kind, query string } {
	on := make([]string, len(v.key))
	for i, k := range v.key {
		on[i] = "h." + k + " = l." + k
	}
	return []struct{ kind, query string }{
		{"history-order", fmt.Sprintf(`SELECT printf('%[1]s: a row born in generation %%d died in %%d', born, died) FROM %[1]s_hist WHERE died <= born
			OR died > CAST((SELECT v FROM meta WHERE k = 'gen') AS INTEGER)`, v.name)},
		{"history-overlap", fmt.Sprintf(`SELECT printf('%[1]s: an old row (born %%d, died %%d) outlived the live one born %%d', h.born, h.died, l.born)
			FROM %[1]s_hist h JOIN %[1]s l ON %[2]s WHERE h.died > l.born`, v.name, strings.Join(on, " AND "))},
		{"history-unreferenced", fmt.Sprintf(`SELECT printf('%[1]s: a row (born %%d, died %%d) no checkpoint sees is kept', born, died)
			FROM (%[2]s) WHERE NOT EXISTS (SELECT 1 FROM meta WHERE k = 'gc_pending')`, v.name, garbageQuery(v, "born, died"))},
	}
}

// checkCheckpoints verifies every checkpoint's tree with the same
// invariants as the live one, and the history rows that hold them.
func (s *Store) checkCheckpoints(ctx context.Context) ([]Problem, error) {
	cps, err := s.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	for _, v := range versionedTables {
		for _, c := range historyChecks(v) {
			got, err := s.problems(ctx, s.r, c.kind, c.query)
			if err != nil {
				return nil, err
			}
			problems = append(problems, got...)
		}
	}
	if len(cps) == 0 {
		return problems, nil
	}
	// Each checkpoint's tables are copied, indexed, into TEMP tables of
	// the tables' names, which the checks then read (SQLite looks names up
	// in TEMP first): one copy per checkpoint, not a union read again by
	// every join of every check. The pool's connections answer queries
	// only, so this one is the check's own.
	db, err := sql.Open("sqlite3", dsn(s.path, "mode=ro&_busy_timeout=10000"))
	if err != nil {
		return nil, fmt.Errorf("check checkpoints: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, s.classify(fmt.Errorf("check checkpoints: %w", err))
	}
	defer conn.Close()
	for _, cp := range cps {
		if err := copyCheckpoint(ctx, conn, cp.Gen); errors.Is(err, ErrCheckpointNotFound) {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, s.classify(fmt.Errorf("check checkpoint %d: %w", cp.ID, err))
		}
		for _, c := range checks {
			got, err := s.problems(ctx, conn, fmt.Sprintf("checkpoint %d: %s", cp.ID, c.kind), c.query)
			if err != nil {
				return nil, err
			}
			problems = append(problems, got...)
		}
	}
	return problems, nil
}

// copyCheckpoint makes conn's TEMP tables generation gen's, in one read
// transaction of the store.
func copyCheckpoint(ctx context.Context, conn *sql.Conn, gen int64) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := genExists(ctx, tx, gen); err != nil {
		return err
	}
	for _, v := range versionedTables {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS temp.%[1]s; CREATE TEMP TABLE %[1]s AS SELECT * FROM %[2]s;
			CREATE INDEX temp.%[1]s_key ON %[1]s(%[3]s)`, v.name, v.asOf(gen), strings.Join(v.key, ", "))); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE INDEX temp.dentries_ino ON dentries(ino)`); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *Store) problems(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, kind, query string) ([]Problem, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, s.classify(fmt.Errorf("check %s: %w", kind, err))
	}
	defer rows.Close()
	var out []Problem
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return nil, s.classify(err)
		}
		out = append(out, Problem{kind, msg})
	}
	return out, s.classify(rows.Err())
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
