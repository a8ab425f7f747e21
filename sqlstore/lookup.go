package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
)

// regularSize is an inode row's size when it is a regular file, else 0:
// what the totals count as data.
const regularSize = `(CASE WHEN %[1]s.mode & 61440 = 32768 THEN %[1]s.size ELSE 0 END)`

// totalsSchema (schema 5) keeps one row of totals over the live inodes,
// maintained then by triggers on inodes. Schema 6 drops the triggers
// (dropTotalsTriggers): every statement of a commit that wrote inodes ran
// them, and a statement that may fire triggers gets a statement journal
// from SQLite, which copies each page the statement touches that the
// transaction changed before (new small files: 36 -> 43 µs of CPU a file,
// BenchmarkCommitCreates). Whatever changes inodes now adds its change to
// the row itself, in the same transaction: a commit the delta of its
// batch (totalsDelta), a restore that of the inodes it changed, a fork's
// trim a recount.
var totalsSchema = fmt.Sprintf(`
	CREATE TABLE totals(id INTEGER PRIMARY KEY CHECK (id = 0), inodes INTEGER NOT NULL, bytes INTEGER NOT NULL);
	INSERT INTO totals SELECT 0, count(*), coalesce(sum(%[1]s), 0) FROM inodes i;
	CREATE TRIGGER inodes_totals_insert AFTER INSERT ON inodes BEGIN
		UPDATE totals SET inodes = inodes + 1, bytes = bytes + %[2]s;
	END;
	CREATE TRIGGER inodes_totals_delete AFTER DELETE ON inodes BEGIN
		UPDATE totals SET inodes = inodes - 1, bytes = bytes - %[3]s;
	END;
	CREATE TRIGGER inodes_totals_update AFTER UPDATE OF mode, size ON inodes BEGIN
		UPDATE totals SET bytes = bytes - %[3]s + %[2]s;
	END;
	CREATE INDEX inodes_unlinked ON inodes(ino) WHERE nlink = 0;`,
	fmt.Sprintf(regularSize, "i"), fmt.Sprintf(regularSize, "new"), fmt.Sprintf(regularSize, "old"))

// dropTotalsTriggers is schema 6. The triggers kept the totals right up
// to here, so the row stays as it is.
const dropTotalsTriggers = `DROP TRIGGER inodes_totals_insert; DROP TRIGGER inodes_totals_delete; DROP TRIGGER inodes_totals_update;`

// The statements that keep the totals. qInodesTotals sums the inodes of a
// JSON array of numbers, qAddTotals adds a change, qRecountTotals counts
// the table again.
var (
	qInodesTotals = fmt.Sprintf(`SELECT count(*), coalesce(sum(%s), 0) FROM inodes i WHERE i.ino IN (SELECT value FROM json_each(?))`,
		fmt.Sprintf(regularSize, "i"))
	qAddTotals     = `UPDATE totals SET inodes = inodes + ?, bytes = bytes + ? WHERE id = 0`
	qRecountTotals = fmt.Sprintf(`UPDATE totals SET (inodes, bytes) = (SELECT count(*), coalesce(sum(%s), 0) FROM inodes i) WHERE id = 0`,
		fmt.Sprintf(regularSize, "i"))
)

// Totals is what the live tree holds: its inodes (unlinked ones still
// stored included) and the bytes of its regular files (sum of sizes).
type Totals struct {
	Inodes, Bytes int64
}

// totals is what inode n adds to the totals.
func (n *Inode) totals() Totals {
	t := Totals{Inodes: 1}
	if n.Mode&0o170000 == 0o100000 {
		t.Bytes = n.Size
	}
	return t
}

func (t Totals) plus(u Totals) Totals  { return Totals{t.Inodes + u.Inodes, t.Bytes + u.Bytes} }
func (t Totals) minus(u Totals) Totals { return Totals{t.Inodes - u.Inodes, t.Bytes - u.Bytes} }

// inodesTotals is what the inodes inos (each once) add to the totals in
// transaction tx, in one query whatever their number.
func (s *Store) inodesTotals(ctx context.Context, tx *sql.Tx, inos []uint64) (Totals, error) {
	var t Totals
	if len(inos) == 0 {
		return t, nil
	}
	list := jsonInos(inos)
	st, err := s.stmt(ctx, tx, qInodesTotals)
	if err != nil {
		return t, err
	}
	defer st.Close()
	// A string: SQLite reads a blob as its binary JSON.
	if err := st.QueryRowContext(ctx, string(list)).Scan(&t.Inodes, &t.Bytes); err != nil {
		return t, fmt.Errorf("sum inodes: %w", err)
	}
	return t, nil
}

// jsonInos is inos as a JSON array, for json_each.
func jsonInos(inos []uint64) []byte {
	list := make([]byte, 0, 2+8*len(inos))
	list = append(list, '[')
	for i, ino := range inos {
		if i > 0 {
			list = append(list, ',')
		}
		list = strconv.AppendUint(list, ino, 10)
	}
	return append(list, ']')
}

// addTotals adds d to the stored totals in transaction tx.
func (s *Store) addTotals(ctx context.Context, tx *sql.Tx, d Totals) error {
	if d == (Totals{}) {
		return nil
	}
	st, err := s.stmt(ctx, tx, qAddTotals)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.ExecContext(ctx, d.Inodes, d.Bytes); err != nil {
		return fmt.Errorf("update totals: %w", err)
	}
	return nil
}

// OpenState is what the filesystem core reads when it opens a store: the
// root, the totals, the inodes left without a name (files unlinked while
// open when the last owner stopped) and the highest inode number in use.
// Each is a lookup by key or a small index, so opening costs the same
// whatever the size of the tree.
type OpenState struct {
	Root       Inode
	RootXattrs []Xattr
	Totals     Totals
	Unlinked   []Inode
	MaxIno     uint64 // of the live tree and every checkpoint
}

// The queries of OpenState, checked by a test to read no table whole.
const (
	qTotals      = `SELECT inodes, bytes FROM totals`
	qUnlinked    = `SELECT ` + inodeCols + ` FROM inodes WHERE nlink = 0`
	qMaxIno      = `SELECT coalesce(max(ino), 0) FROM inodes`
	qMaxHistIno  = `SELECT coalesce(max(ino), 0) FROM inodes_hist`
	qInode       = `SELECT ` + inodeCols + ` FROM inodes WHERE ino = ?`
	qInodeXattrs = `SELECT ino, name, value FROM xattrs WHERE ino = ?`
	qDir         = `SELECT d.name, d.ino, i.ino IS NOT NULL, coalesce(i.mode, 0), coalesce(i.uid, 0), coalesce(i.gid, 0),
		coalesce(i.nlink, 0), coalesce(i.size, 0), coalesce(i.atime_ns, 0), coalesce(i.mtime_ns, 0), coalesce(i.ctime_ns, 0),
		coalesce(i.rdev, 0), coalesce(i.target, ''), EXISTS (SELECT 1 FROM xattrs x WHERE x.ino = d.ino)
		FROM dentries d LEFT JOIN inodes i ON i.ino = d.ino WHERE d.parent = ?`
	qDirXattrs = `SELECT x.ino, x.name, x.value FROM dentries d JOIN xattrs x ON x.ino = d.ino WHERE d.parent = ?`
	qNamesOf   = `SELECT parent, name, ino FROM dentries WHERE ino = ?`
	// qNamesOfMany is qNamesOf for a JSON array of inodes.
	qNamesOfMany = `SELECT parent, name, ino FROM dentries WHERE ino IN (SELECT value FROM json_each(?))`
)

// openQueries are the queries OpenState runs.
var openQueries = []string{qInode, qInodeXattrs, qTotals, qUnlinked, qMaxIno, qMaxHistIno}

// Reads counts the metadata reads (OpenState, ReadDir, ReadInode,
// NamesOf, and Check's scans of whole tables): queries run and rows
// returned. Tests use it to pin how much a step reads.
type Reads struct {
	Queries, Rows int64
}

type readCounter struct{ queries, rows atomic.Int64 }

// MetadataReads reports the metadata reads so far.
func (s *Store) MetadataReads() Reads {
	return Reads{Queries: s.reads.queries.Load(), Rows: s.reads.rows.Load()}
}

// query runs q on the read pool, calling scan for each row.
func (s *Store) query(ctx context.Context, q string, scan func(*sql.Rows) error, args ...any) error {
	s.reads.queries.Add(1)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return s.classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		s.reads.rows.Add(1)
		if err := scan(rows); err != nil {
			return s.classify(err)
		}
	}
	return s.classify(rows.Err())
}

// OpenState reads what a filesystem core needs to start serving the store.
func (s *Store) OpenState(ctx context.Context) (OpenState, error) {
	var st OpenState
	root, ok, err := s.ReadInode(ctx, Root)
	if err != nil {
		return st, err
	}
	if !ok || root.Mode&0o170000 != 0o040000 {
		return st, fmt.Errorf("root directory missing: %w", ErrStoreCorrupt)
	}
	st.Root = root
	if st.RootXattrs, err = s.InodeXattrs(ctx, Root); err != nil {
		return st, err
	}
	found := false
	err = s.query(ctx, qTotals, func(r *sql.Rows) error {
		found = true
		return r.Scan(&st.Totals.Inodes, &st.Totals.Bytes)
	})
	if err != nil {
		return st, fmt.Errorf("read totals: %w", err)
	}
	if !found {
		return st, fmt.Errorf("totals missing: %w", ErrStoreCorrupt)
	}
	err = s.query(ctx, qUnlinked, func(r *sql.Rows) error {
		n, err := scanInode(r)
		if err == nil && n.Ino != Root {
			st.Unlinked = append(st.Unlinked, n)
		}
		return err
	})
	if err != nil {
		return st, fmt.Errorf("read unlinked inodes: %w", err)
	}
	for _, q := range []string{qMaxIno, qMaxHistIno} {
		err := s.query(ctx, q, func(r *sql.Rows) error {
			var n int64
			err := r.Scan(&n)
			st.MaxIno = max(st.MaxIno, uint64(n))
			return err
		})
		if err != nil {
			return st, fmt.Errorf("read highest inode: %w", err)
		}
	}
	return st, nil
}

// ReadInode reads inode ino's row; ok is false when there is none.
func (s *Store) ReadInode(ctx context.Context, ino uint64) (n Inode, ok bool, err error) {
	err = s.query(ctx, qInode, func(r *sql.Rows) error {
		ok = true
		n, err = scanInode(r)
		return err
	}, ino)
	if err != nil {
		return n, false, fmt.Errorf("read inode %d: %w", ino, err)
	}
	return n, ok, nil
}

// InodeXattrs reads inode ino's extended attributes.
func (s *Store) InodeXattrs(ctx context.Context, ino uint64) ([]Xattr, error) {
	xs, err := s.xattrs(ctx, qInodeXattrs, ino)
	if err != nil {
		return nil, fmt.Errorf("read extended attributes of inode %d: %w", ino, err)
	}
	return xs, nil
}

func (s *Store) xattrs(ctx context.Context, q string, key uint64) ([]Xattr, error) {
	var xs []Xattr
	err := s.query(ctx, q, func(r *sql.Rows) error {
		var x Xattr
		err := r.Scan(&x.Ino, &x.Name, &x.Value)
		xs = append(xs, x)
		return err
	}, key)
	return xs, err
}

// DirEntry is one entry of a directory with the row of the inode it names.
type DirEntry struct {
	Name  string
	Inode Inode
}

// ReadDir reads directory dir's entries, each with its inode, and the
// extended attributes of those inodes, these only when one of them has
// any (most directories: none, and a query less). An entry naming no
// inode is ErrStoreCorrupt.
func (s *Store) ReadDir(ctx context.Context, dir uint64) ([]DirEntry, []Xattr, error) {
	var ents []DirEntry
	withXattrs := false
	err := s.scanRaw(ctx, qDir, func(row []driver.Value) error {
		r := rawRow{row: row}
		e := DirEntry{Name: r.text(0), Inode: Inode{
			Ino: r.uint64(1), Mode: r.uint32(3), Uid: r.uint32(4), Gid: r.uint32(5), Nlink: r.uint32(6),
			Size: r.int(7), Atime: r.int(8), Mtime: r.int(9), Ctime: r.int(10), Rdev: r.uint64(11), Target: r.text(12),
		}}
		if r.int(2) == 0 && r.err == nil {
			return fmt.Errorf("entry %q in %d names inode %d, which does not exist: %w", e.Name, dir, e.Inode.Ino, ErrStoreCorrupt)
		}
		withXattrs = withXattrs || r.int(13) != 0
		ents = append(ents, e)
		return r.err
	}, int64(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("read directory %d: %w", dir, err)
	}
	if !withXattrs {
		return ents, nil, nil
	}
	xs, err := s.xattrs(ctx, qDirXattrs, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read extended attributes in directory %d: %w", dir, err)
	}
	return ents, xs, nil
}

// NamesOf reads every entry naming inode ino.
func (s *Store) NamesOf(ctx context.Context, ino uint64) ([]Dentry, error) {
	var ds []Dentry
	err := s.query(ctx, qNamesOf, func(r *sql.Rows) error {
		var d Dentry
		err := r.Scan(&d.Parent, &d.Name, &d.Ino)
		ds = append(ds, d)
		return err
	}, ino)
	if err != nil {
		return nil, fmt.Errorf("read names of inode %d: %w", ino, err)
	}
	return ds, nil
}

// NamesOfMany is NamesOf for many inodes in one query: the core asks it
// for the names of a listing's files with several names at once.
func (s *Store) NamesOfMany(ctx context.Context, inos []uint64) ([]Dentry, error) {
	if len(inos) == 0 {
		return nil, nil
	}
	var ds []Dentry
	// A string: SQLite reads a blob as its binary JSON.
	err := s.query(ctx, qNamesOfMany, func(r *sql.Rows) error {
		var d Dentry
		err := r.Scan(&d.Parent, &d.Name, &d.Ino)
		ds = append(ds, d)
		return err
	}, string(jsonInos(inos)))
	if err != nil {
		return nil, fmt.Errorf("read names of %d inodes: %w", len(inos), err)
	}
	return ds, nil
}

// readTotals reads the totals inside transaction q.
func readTotals(ctx context.Context, q querier) (Totals, error) {
	var t Totals
	err := q.QueryRowContext(ctx, qTotals).Scan(&t.Inodes, &t.Bytes)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrStoreCorrupt
	}
	if err != nil {
		return t, fmt.Errorf("read totals: %w", err)
	}
	return t, nil
}
