package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"syscall"
)

// PathChange is one line of a diff: Status 'A', 'M' or 'D' and the path.
type PathChange struct {
	Status byte
	Path   string
}

// Diff lists the paths that differ between generations from and to (to
// may be Live), sorted. It reads only what changed between them: the rows
// born or dead in (from, to], and the paths those rows name.
func (s *Store) Diff(ctx context.Context, from, to int64) ([]PathChange, error) {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, s.classify(err)
	}
	defer conn.Close()
	// One read transaction: both sides from one state of the store.
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.classify(err)
	}
	defer tx.Rollback()
	for _, g := range []int64{from, to} {
		if err := genExists(ctx, tx, g); err != nil {
			return nil, s.classify(err)
		}
	}
	back := to != Live && to < from
	if back {
		from, to = to, from
	}
	d := &differ{ctx: ctx, q: tx, from: from, to: to}
	defer d.close()
	out, err := d.run()
	if back {
		for i := range out {
			switch out[i].Status {
			case 'A':
				out[i].Status = 'D'
			case 'D':
				out[i].Status = 'A'
			}
		}
	}
	return out, s.classify(err)
}

type differ struct {
	ctx      context.Context
	q        *sql.Tx
	from, to int64
	stmts    map[string]*sql.Stmt
}

// query runs q as a statement prepared once per diff: a diff runs the same
// few lookups many times.
func (d *differ) query(q string, args ...any) (*sql.Rows, error) {
	st, err := d.stmt(q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(d.ctx, args...)
}

func (d *differ) queryRow(q string, args ...any) *sql.Row {
	st, err := d.stmt(q)
	if err != nil {
		// A Row carrying the error: the statement is re-prepared, fails
		// the same way, and Scan reports it.
		return d.q.QueryRowContext(d.ctx, q, args...)
	}
	return st.QueryRowContext(d.ctx, args...)
}

func (d *differ) stmt(q string) (*sql.Stmt, error) {
	if st, ok := d.stmts[q]; ok {
		return st, nil
	}
	st, err := d.q.PrepareContext(d.ctx, q)
	if err != nil {
		return nil, err
	}
	if d.stmts == nil {
		d.stmts = map[string]*sql.Stmt{}
	}
	d.stmts[q] = st
	return st, nil
}

func (d *differ) close() {
	for _, st := range d.stmts {
		st.Close()
	}
}

// side is one generation's view of the tree.
type side struct {
	d   *differ
	gen int64
}

// changedKeys returns the given columns of the rows of v that were born or
// died in (from, to].
func (d *differ) changedKeys(v versioned, cols string) (*sql.Rows, error) {
	to := d.to
	hist := fmt.Sprintf(`SELECT %[2]s FROM %[1]s_hist WHERE (born > ?1 AND born <= ?2) OR (died > ?1 AND died <= ?2)`, v.name, cols)
	if to == Live {
		to = 1 << 62
	}
	return d.q.QueryContext(d.ctx, fmt.Sprintf(`SELECT %[2]s FROM %[1]s WHERE born > 0 AND born > ?1 AND born <= ?2 UNION %[3]s`, v.name, cols, hist), d.from, to)
}

func (d *differ) run() ([]PathChange, error) {
	inos := map[uint64]bool{}
	for i, v := range versionedTables {
		if v.name == "dentries" {
			continue
		}
		col := []string{"ino", "", "key >> 24", "ino"}[i]
		rows, err := d.changedKeys(v, "DISTINCT "+col)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var ino int64
			if err := rows.Scan(&ino); err != nil {
				rows.Close()
				return nil, err
			}
			inos[uint64(ino)] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	var dents []Dentry
	rows, err := d.changedKeys(versionedTables[1], "parent, name")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var e Dentry
		if err := rows.Scan(&e.Parent, &e.Name); err != nil {
			rows.Close()
			return nil, err
		}
		dents = append(dents, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sides := []side{{d, d.from}, {d, d.to}}
	// Candidate paths: every path, on either side, of a changed inode, and
	// every path at or below a changed entry.
	cand := map[string]bool{}
	for _, sd := range sides {
		for ino := range inos {
			ps, err := sd.pathsOf(ino)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				cand[p] = true
			}
		}
		for _, e := range dents {
			dir, ok, err := sd.pathOfDir(e.Parent)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			ino, ok, err := sd.lookup(e.Parent, e.Name)
			if err != nil {
				return nil, err
			}
			if !ok {
				cand[path.Join(dir, e.Name)] = true
				continue
			}
			if err := sd.walk(path.Join(dir, e.Name), ino, func(p string, _ *Inode) error { cand[p] = true; return nil }); err != nil {
				return nil, err
			}
		}
	}
	var out []PathChange
	for p := range cand {
		a, err := sides[0].resolve(p)
		if err != nil {
			return nil, err
		}
		b, err := sides[1].resolve(p)
		if err != nil {
			return nil, err
		}
		switch {
		case a == nil && b == nil:
		case a == nil:
			out = append(out, PathChange{'A', p})
		case b == nil:
			out = append(out, PathChange{'D', p})
		default:
			same, err := d.same(a, b, inos[a.Ino])
			if err != nil {
				return nil, err
			}
			if !same {
				out = append(out, PathChange{'M', p})
			}
		}
	}
	slices.SortFunc(out, func(x, y PathChange) int { return strings.Compare(x.Path, y.Path) })
	return out, nil
}

func isDirMode(mode uint32) bool { return mode&syscall.S_IFMT == syscall.S_IFDIR }

// same reports whether a path's inode is the same file on both sides: what
// a directory holds is left to its entries, and times other than mtime,
// and link counts, do not count.
func (d *differ) same(a, b *Inode, changed bool) (bool, error) {
	if a.Ino != b.Ino || a.Mode != b.Mode || a.Uid != b.Uid || a.Gid != b.Gid {
		return false, nil
	}
	if !changed {
		return true, nil
	}
	if !isDirMode(a.Mode) && (a.Size != b.Size || a.Mtime != b.Mtime || a.Target != b.Target || a.Rdev != b.Rdev) {
		return false, nil
	}
	xa, err := side{d, d.from}.xattrs(a.Ino)
	if err != nil {
		return false, err
	}
	xb, err := side{d, d.to}.xattrs(b.Ino)
	if err != nil {
		return false, err
	}
	if !slices.EqualFunc(xa, xb, func(x, y Xattr) bool { return x.Name == y.Name && bytes.Equal(x.Value, y.Value) }) {
		return false, nil
	}
	if isDirMode(a.Mode) {
		return true, nil
	}
	// Data rewritten with the same size and mtime, or put back by a
	// restore: compare the chunks' checksums.
	ca, err := side{d, d.from}.chunkSums(a.Ino)
	if err != nil {
		return false, err
	}
	cb, err := side{d, d.to}.chunkSums(b.Ino)
	return slices.Equal(ca, cb), err
}

// chunkSums lists the keys and checksums of ino's chunks.
func (sd side) chunkSums(ino uint64) ([]int64, error) {
	rows, err := sd.d.query(`SELECT key, crc FROM `+versionedTables[2].asOf(sd.gen)+` WHERE key >= ? AND key < ? ORDER BY key`,
		chunkKey(ino, 0), chunkKey(ino+1, 0))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var k, c int64
		if err := rows.Scan(&k, &c); err != nil {
			return nil, err
		}
		out = append(out, k, c)
	}
	return out, rows.Err()
}

func (sd side) inode(ino uint64) (*Inode, error) {
	r, err := scanInode(sd.d.queryRow(`SELECT `+inodeCols+` FROM `+versionedTables[0].asOf(sd.gen)+` WHERE ino = ?`, ino))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func (sd side) lookup(parent uint64, name string) (uint64, bool, error) {
	var ino uint64
	err := sd.d.queryRow(`SELECT ino FROM `+versionedTables[1].asOf(sd.gen)+` WHERE parent = ? AND name = ?`, parent, name).Scan(&ino)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return ino, err == nil, err
}

// names lists the entries naming ino.
func (sd side) names(ino uint64) ([]Dentry, error) {
	rows, err := sd.d.query(`SELECT parent, name FROM `+versionedTables[1].asOf(sd.gen)+` WHERE ino = ?`, ino)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Dentry
	for rows.Next() {
		e := Dentry{Ino: ino}
		if err := rows.Scan(&e.Parent, &e.Name); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// pathOfDir is a directory's path on this side; ok is false when it is
// not in the tree there.
func (sd side) pathOfDir(ino uint64) (string, bool, error) {
	var parts []string
	for seen := 0; ino != Root; seen++ {
		if seen > 1<<16 {
			return "", false, fmt.Errorf("directory %d: %w: a cycle", ino, ErrStoreCorrupt)
		}
		ns, err := sd.names(ino)
		if err != nil || len(ns) == 0 {
			return "", false, err
		}
		parts = append(parts, ns[0].Name)
		ino = ns[0].Parent
	}
	slices.Reverse(parts)
	return "/" + strings.Join(parts, "/"), true, nil
}

// pathsOf lists ino's paths on this side.
func (sd side) pathsOf(ino uint64) ([]string, error) {
	if ino == Root {
		return nil, nil
	}
	ns, err := sd.names(ino)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ns {
		dir, ok, err := sd.pathOfDir(e.Parent)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, path.Join(dir, e.Name))
		}
	}
	return out, nil
}

// walk calls fn with p and every path below it when ino is a directory,
// and the inode each names (nil: none).
func (sd side) walk(p string, ino uint64, fn func(string, *Inode) error) error {
	n, err := sd.inode(ino)
	if err != nil {
		return err
	}
	if err := fn(p, n); err != nil || n == nil || !isDirMode(n.Mode) {
		return err
	}
	rows, err := sd.d.query(`SELECT name, ino FROM `+versionedTables[1].asOf(sd.gen)+` WHERE parent = ?`, ino)
	if err != nil {
		return err
	}
	var kids []Dentry
	for rows.Next() {
		var e Dentry
		if err := rows.Scan(&e.Name, &e.Ino); err != nil {
			rows.Close()
			return err
		}
		kids = append(kids, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range kids {
		if err := sd.walk(path.Join(p, k.Name), k.Ino, fn); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds the inode at p on this side (symlinks are not followed),
// nil when there is none.
func (sd side) resolve(p string) (*Inode, error) {
	ino := uint64(Root)
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if name == "" {
			continue
		}
		next, ok, err := sd.lookup(ino, name)
		if err != nil || !ok {
			return nil, err
		}
		ino = next
	}
	return sd.inode(ino)
}

func (sd side) xattrs(ino uint64) ([]Xattr, error) {
	rows, err := sd.d.query(`SELECT name, value FROM `+versionedTables[3].asOf(sd.gen)+` WHERE ino = ? ORDER BY name`, ino)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Xattr
	for rows.Next() {
		x := Xattr{Ino: ino}
		if err := rows.Scan(&x.Name, &x.Value); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// TreeEntry is one path of a checkpoint's tree.
type TreeEntry struct {
	Path   string
	Inode  Inode
	Xattrs []Xattr
}

// Tree is a path and everything below it as a generation had it, parents
// before children (Entries nil when the path did not exist then), the
// directories above it (the root excluded, outermost first), and the data
// of its regular files by inode and chunk index.
type Tree struct {
	Above, Entries []TreeEntry
	Data           map[uint64]map[int64][]byte
}

// TreesAt reads the Tree of each path at generation gen, all in one read
// transaction (its statements prepared once), so that a checkpoint deleted
// meanwhile is either whole or ErrCheckpointNotFound. A chunk that does not
// match its checksum ends the read with a *ChecksumError.
func (s *Store) TreesAt(ctx context.Context, gen int64, paths []string) ([]Tree, error) {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return nil, s.classify(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.classify(err)
	}
	defer tx.Rollback()
	if err := genExists(ctx, tx, gen); err != nil {
		return nil, s.classify(err)
	}
	d := &differ{ctx: ctx, q: tx, from: gen, to: gen}
	defer d.close()
	sd := side{d, gen}
	out := make([]Tree, len(paths))
	above := map[string]TreeEntry{} // the directories above several paths, read once
	for i, p := range paths {
		if out[i], err = sd.tree(p, above); err != nil {
			return nil, s.classify(err)
		}
	}
	return out, nil
}

func (sd side) tree(p string, above map[string]TreeEntry) (t Tree, err error) {
	// entry is ino's entry at q; ok is false when there is none.
	entry := func(q string, ino uint64) (e TreeEntry, ok bool, err error) {
		n, err := sd.inode(ino)
		if err != nil || n == nil {
			return e, false, err
		}
		xs, err := sd.xattrs(n.Ino)
		return TreeEntry{Path: q, Inode: *n, Xattrs: xs}, err == nil, err
	}
	p = path.Clean("/" + p)
	ino := uint64(Root)
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if name == "" {
			continue
		}
		next, ok, err := sd.lookup(ino, name)
		if err != nil || !ok {
			return t, err
		}
		ino = next
		q := path.Join(t.parentPath(), name)
		if q == p {
			break
		}
		e, ok := above[q]
		if !ok {
			if e, ok, err = entry(q, ino); err != nil || !ok {
				return t, err
			}
			above[q] = e
		}
		t.Above = append(t.Above, e)
	}
	t.Data = map[uint64]map[int64][]byte{}
	err = sd.walk(p, ino, func(q string, n *Inode) error {
		if n == nil {
			if q == p {
				return nil // p names no inode: no tree
			}
			return fmt.Errorf("%s at generation %d names a missing inode: %w", q, sd.gen, ErrStoreCorrupt)
		}
		xs, err := sd.xattrs(n.Ino)
		if err != nil {
			return err
		}
		t.Entries = append(t.Entries, TreeEntry{Path: q, Inode: *n, Xattrs: xs})
		if n.Mode&syscall.S_IFMT == syscall.S_IFREG && t.Data[n.Ino] == nil {
			t.Data[n.Ino], err = sd.chunks(n.Ino)
		}
		return err
	})
	if err != nil {
		return Tree{}, err
	}
	return t, nil
}

// parentPath is the path of the innermost directory in t.Above, "/" for none.
func (t Tree) parentPath() string {
	if len(t.Above) == 0 {
		return "/"
	}
	return t.Above[len(t.Above)-1].Path
}

// chunks reads the data of inode ino on this side.
func (sd side) chunks(ino uint64) (map[int64][]byte, error) {
	rows, err := sd.d.query(`SELECT key, crc, data FROM `+versionedTables[2].asOf(sd.gen)+` WHERE key >= ? AND key < ?`,
		chunkKey(ino, 0), chunkKey(ino+1, 0))
	if err != nil {
		return nil, fmt.Errorf("read chunks of inode %d at generation %d: %w", ino, sd.gen, err)
	}
	defer rows.Close()
	out := map[int64][]byte{}
	for rows.Next() {
		var key, crc int64
		var data []byte
		if err := rows.Scan(&key, &crc, &data); err != nil {
			return nil, err
		}
		if data, err = verify(key, crc, data); err != nil {
			return nil, err
		}
		out[key&(MaxChunks-1)] = data
	}
	return out, rows.Err()
}
