package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Checkpoints are generations. The store counts generations (meta 'gen');
// a checkpoint is the last commit of one: the commit that takes it records
// the current generation g in the checkpoints table and starts g+1. Every
// row of inodes, dentries, chunks and xattrs carries the generation it was
// written in (born). Checkpoint g sees the live rows born <= g, and the
// rows of the _hist twin tables with born <= g < died.
//
// A commit that overwrites or deletes a live row born <= L, the newest
// checkpoint's generation, first copies it to the _hist table with died =
// the current generation; any other old row no checkpoint can see and is
// simply replaced. So taking a checkpoint copies nothing, a store without
// checkpoints writes as before, and the store grows by what changes after
// a checkpoint: a one-byte write into a large file preserves one chunk.
// Partial indexes on born > 0 find what changed since a checkpoint; a
// store never checkpointed (all rows born 0) keeps them empty and pays
// nothing for them. Queries on them say "born > 0 AND born > ?" so that
// SQLite can use them.
// A _hist row is kept while some checkpoint generation lies in [born,
// died); deleting a checkpoint leaves the others' rows and lets the
// janitor free the rest.
const checkpointSchema = `
	ALTER TABLE inodes ADD COLUMN born INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE dentries ADD COLUMN born INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE chunks ADD COLUMN born INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE xattrs ADD COLUMN born INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX inodes_born ON inodes(born) WHERE born > 0;
	CREATE INDEX dentries_born ON dentries(born) WHERE born > 0;
	CREATE INDEX chunks_born ON chunks(born) WHERE born > 0;
	CREATE INDEX xattrs_born ON xattrs(born) WHERE born > 0;
	CREATE TABLE inodes_hist(
		ino INTEGER NOT NULL, mode INTEGER NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL,
		nlink INTEGER NOT NULL, size INTEGER NOT NULL, atime_ns INTEGER NOT NULL,
		mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, rdev INTEGER NOT NULL, target BLOB,
		born INTEGER NOT NULL, died INTEGER NOT NULL);
	CREATE UNIQUE INDEX inodes_hist_key ON inodes_hist(ino, died);
	CREATE INDEX inodes_hist_died ON inodes_hist(died);
	CREATE TABLE dentries_hist(parent INTEGER NOT NULL, name TEXT NOT NULL, ino INTEGER NOT NULL,
		born INTEGER NOT NULL, died INTEGER NOT NULL);
	CREATE UNIQUE INDEX dentries_hist_key ON dentries_hist(parent, name, died);
	CREATE INDEX dentries_hist_ino ON dentries_hist(ino);
	CREATE INDEX dentries_hist_died ON dentries_hist(died);
	CREATE TABLE chunks_hist(key INTEGER NOT NULL, data BLOB NOT NULL, crc INTEGER NOT NULL,
		born INTEGER NOT NULL, died INTEGER NOT NULL);
	CREATE UNIQUE INDEX chunks_hist_key ON chunks_hist(key, died);
	CREATE INDEX chunks_hist_died ON chunks_hist(died);
	CREATE TABLE xattrs_hist(ino INTEGER NOT NULL, name TEXT NOT NULL, value BLOB NOT NULL,
		born INTEGER NOT NULL, died INTEGER NOT NULL);
	CREATE UNIQUE INDEX xattrs_hist_key ON xattrs_hist(ino, name, died);
	CREATE INDEX xattrs_hist_died ON xattrs_hist(died);
	CREATE TABLE checkpoints(
		id INTEGER PRIMARY KEY,
		name TEXT UNIQUE,
		gen INTEGER NOT NULL UNIQUE,
		time_ns INTEGER NOT NULL,
		auto INTEGER NOT NULL DEFAULT 0,
		exec_id TEXT NOT NULL DEFAULT '');
	INSERT INTO meta(k, v) VALUES ('gen', '0');`

// Errors of checkpoints, checked with errors.Is.
var (
	ErrCheckpointNotFound = errors.New("checkpoint not found")
	ErrCheckpointExists   = errors.New("a checkpoint with that name exists")
	ErrBadCheckpointRef   = errors.New("malformed checkpoint id or name")
)

// CheckpointInfo describes a checkpoint.
type CheckpointInfo struct {
	ID     int64
	Name   string // "" when unnamed
	Time   time.Time
	Auto   bool
	ExecID string
	// Gen is the generation the checkpoint closed; internal to the store.
	Gen int64
}

// NewCheckpoint is what CommitCheckpoint records.
type NewCheckpoint struct {
	Name   string
	Auto   bool
	ExecID string
}

// maxCheckpointName bounds a checkpoint's name.
const maxCheckpointName = 255

// ValidCheckpointName refuses names that could not be told from an id or
// would not print on one line.
func ValidCheckpointName(name string) error {
	if name == "" || len(name) > maxCheckpointName {
		return fmt.Errorf("name %q: %w: 1 to %d bytes", name, ErrBadCheckpointRef, maxCheckpointName)
	}
	if strings.IndexFunc(name, func(r rune) bool { return r < '0' || r > '9' }) < 0 {
		return fmt.Errorf("name %q: %w: all digits would read as an id", name, ErrBadCheckpointRef)
	}
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return fmt.Errorf("name %q: %w: control characters", name, ErrBadCheckpointRef)
	}
	return nil
}

const checkpointCols = `id, coalesce(name, ''), gen, time_ns, auto, exec_id`

func scanCheckpoint(row interface{ Scan(...any) error }) (CheckpointInfo, error) {
	var ci CheckpointInfo
	var t int64
	err := row.Scan(&ci.ID, &ci.Name, &ci.Gen, &t, &ci.Auto, &ci.ExecID)
	ci.Time = time.Unix(0, t)
	return ci, err
}

// Checkpoints lists the checkpoints, oldest first.
func (s *Store) Checkpoints(ctx context.Context) ([]CheckpointInfo, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+checkpointCols+` FROM checkpoints ORDER BY gen`)
	if err != nil {
		return nil, s.classify(fmt.Errorf("list checkpoints: %w", err))
	}
	defer rows.Close()
	var out []CheckpointInfo
	for rows.Next() {
		ci, err := scanCheckpoint(rows)
		if err != nil {
			return nil, s.classify(fmt.Errorf("list checkpoints: %w", err))
		}
		out = append(out, ci)
	}
	return out, s.classify(rows.Err())
}

// ResolveCheckpoint finds a checkpoint by decimal id or by name.
func (s *Store) ResolveCheckpoint(ctx context.Context, ref string) (CheckpointInfo, error) {
	return resolveCheckpoint(ctx, s.r, ref)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func resolveCheckpoint(ctx context.Context, q querier, ref string) (CheckpointInfo, error) {
	var row *sql.Row
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 && strconv.FormatInt(id, 10) == ref {
		row = q.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM checkpoints WHERE id = ?`, id)
	} else if err := ValidCheckpointName(ref); err != nil {
		return CheckpointInfo{}, fmt.Errorf("checkpoint %q: %w", ref, ErrBadCheckpointRef)
	} else {
		row = q.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM checkpoints WHERE name = ?`, ref)
	}
	ci, err := scanCheckpoint(row)
	if errors.Is(err, sql.ErrNoRows) {
		return CheckpointInfo{}, fmt.Errorf("checkpoint %q: %w", ref, ErrCheckpointNotFound)
	}
	if err != nil {
		return CheckpointInfo{}, fmt.Errorf("checkpoint %q: %w", ref, err)
	}
	return ci, nil
}

// genExists fails with ErrCheckpointNotFound unless gen is Live or a
// checkpoint's generation in q's view. A read of a generation checks it in
// its own transaction: a checkpoint deleted after the caller resolved it
// may have lost its rows to the janitor already.
func genExists(ctx context.Context, q querier, gen int64) error {
	if gen == Live {
		return nil
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM checkpoints WHERE gen = ?`, gen).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("generation %d: %w (deleted meanwhile)", gen, ErrCheckpointNotFound)
	}
	return nil
}

// loadGenerations reads the current generation and the newest
// checkpoint's. Called at open, before the writer runs.
func (s *Store) loadGenerations(ctx context.Context) error {
	var g string
	if err := s.w.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = 'gen'`).Scan(&g); err != nil {
		return s.classify(fmt.Errorf("%s: read generation: %w", s.path, err))
	}
	gen, err := strconv.ParseInt(g, 10, 64)
	if err != nil || gen < 0 {
		return fmt.Errorf("%s: generation %q: %w", s.path, g, ErrStoreCorrupt)
	}
	var last int64
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(gen), -1) FROM checkpoints`).Scan(&last); err != nil {
		return s.classify(fmt.Errorf("%s: read checkpoints: %w", s.path, err))
	}
	if last >= gen {
		return fmt.Errorf("%s: checkpoint of generation %d at generation %d: %w", s.path, last, gen, ErrStoreCorrupt)
	}
	s.gen, s.lastCkpt = gen, last
	return nil
}

// CommitCheckpoint commits b and records a checkpoint after it, in one
// transaction: the checkpoint holds b and every commit before it.
func (s *Store) CommitCheckpoint(ctx context.Context, b *Batch, nc NewCheckpoint) (CheckpointInfo, error) {
	if nc.Name != "" {
		if err := ValidCheckpointName(nc.Name); err != nil {
			return CheckpointInfo{}, err
		}
	}
	ci := CheckpointInfo{Name: nc.Name, Auto: nc.Auto, ExecID: nc.ExecID, Time: time.Now(), Gen: s.gen}
	err := s.commitWith(ctx, b, func(tx *sql.Tx) error {
		var name any
		if nc.Name != "" {
			name = nc.Name
		}
		// The id follows the generation, which only grows, so a deleted
		// checkpoint's id never names another (a stale "restore 3" fails
		// instead of restoring some later tree).
		res, err := tx.ExecContext(ctx, `INSERT INTO checkpoints(id, name, gen, time_ns, auto, exec_id) VALUES (?, ?, ?, ?, ?, ?)`,
			s.gen+1, name, s.gen, ci.Time.UnixNano(), nc.Auto, nc.ExecID)
		if err != nil {
			if strings.Contains(err.Error(), "UNIQUE constraint failed: checkpoints.name") {
				return fmt.Errorf("checkpoint %q: %w", nc.Name, ErrCheckpointExists)
			}
			return fmt.Errorf("record checkpoint: %w", err)
		}
		if ci.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return setGen(ctx, tx, s.gen+1)
	})
	if err != nil {
		return CheckpointInfo{}, err
	}
	s.lastCkpt, s.gen = s.gen, s.gen+1
	return ci, nil
}

func setGen(ctx context.Context, tx *sql.Tx, gen int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE meta SET v = ? WHERE k = 'gen'`, strconv.FormatInt(gen, 10))
	if err != nil {
		return fmt.Errorf("record generation: %w", err)
	}
	return nil
}

// CommitDeleteCheckpoint commits b and deletes checkpoint ref in one
// transaction. The rows only it saw are freed later by the janitor.
func (s *Store) CommitDeleteCheckpoint(ctx context.Context, b *Batch, ref string) (CheckpointInfo, error) {
	var ci CheckpointInfo
	last := s.lastCkpt
	err := s.commitWith(ctx, b, func(tx *sql.Tx) error {
		var err error
		if ci, err = resolveCheckpoint(ctx, tx, ref); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE id = ?`, ci.ID); err != nil {
			return fmt.Errorf("delete checkpoint: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(k, v) VALUES ('gc_pending', '1')`); err != nil {
			return fmt.Errorf("delete checkpoint: %w", err)
		}
		return tx.QueryRowContext(ctx, `SELECT coalesce(max(gen), -1) FROM checkpoints`).Scan(&last)
	})
	if err != nil {
		return CheckpointInfo{}, err
	}
	s.lastCkpt = last
	if s.jan != nil {
		s.jan.kick()
	}
	return ci, nil
}

// versioned describes a table under checkpoints: its key columns, then
// the others, born excluded.
type versioned struct {
	name string
	key  []string
	cols []string
}

var versionedTables = []versioned{
	{"inodes", []string{"ino"}, []string{"mode", "uid", "gid", "nlink", "size", "atime_ns", "mtime_ns", "ctime_ns", "rdev", "target"}},
	{"dentries", []string{"parent", "name"}, []string{"ino"}},
	{"chunks", []string{"key"}, []string{"data", "crc"}},
	{"xattrs", []string{"ino", "name"}, []string{"value"}},
}

func (v versioned) all() string {
	return strings.Join(append(append([]string(nil), v.key...), v.cols...), ", ")
}

// asOf is a subquery of the table's rows as checkpoint generation gen saw
// them, or the live rows when gen is live.
func (v versioned) asOf(gen int64) string {
	if gen == Live {
		return v.name
	}
	g := strconv.FormatInt(gen, 10)
	// main. names the tables where a common table expression takes
	// their names (Check).
	return fmt.Sprintf("(SELECT %[1]s, born FROM main.%[2]s WHERE born <= %[3]s UNION ALL SELECT %[1]s, born FROM main.%[2]s_hist WHERE born <= %[3]s AND died > %[3]s)",
		v.all(), v.name, g)
}

// Live names the live tree where a generation is taken.
const Live int64 = -1

// saveQuery copies the live rows a statement is about to overwrite or
// delete to the _hist table when a checkpoint sees them: ?1 is the
// current generation, ?2 the newest checkpoint's, and where the
// statement's own condition on ?3... follows.
func (v versioned) saveQuery(where string) string {
	return fmt.Sprintf(`INSERT INTO %[1]s_hist(%[2]s, born, died) SELECT %[2]s, born, ?1 FROM %[1]s WHERE born <= ?2 AND %[3]s`,
		v.name, v.all(), where)
}

// RestoreResult is what a restore changed in the live tables, for the
// filesystem core to bring its RAM copy in line: the rows now live of
// every inode, entry and extended attribute that changed, and the keys of
// those that went.
type RestoreResult struct {
	Inodes       []Inode
	GoneInodes   []uint64
	Dentries     []Dentry
	GoneDentries []Dentry
	XattrInodes  []uint64 // inodes whose extended attributes changed: Xattrs holds all they have now
	Xattrs       []Xattr
	ChunkInodes  []uint64 // inodes whose data changed
	// Names holds a name of each changed inode that has one, so the
	// caller need not search its tree for one.
	Names         map[uint64]Dentry
	Checkpoint    CheckpointInfo
	ProtectedGone []uint64 // GoneInodes the caller kept alive: their rows stay, with nlink 0
	// Totals is what the live tree holds after the restore.
	Totals Totals
}

// CommitRestore commits b, then makes the live tree checkpoint ref's, in
// one transaction. keep is called, inside the transaction, with the
// inodes the restore removes (they did not exist at the checkpoint) and
// returns those that must live on without names (open files): their rows,
// data and attributes stay, with nlink 0. check is called last with the
// result and may refuse it (a quota), rolling everything back.
func (s *Store) CommitRestore(ctx context.Context, b *Batch, ref string,
	keep func(gone []uint64) []uint64, check func(*RestoreResult) error) (*RestoreResult, error) {
	res := &RestoreResult{}
	err := s.commitWith(ctx, b, func(tx *sql.Tx) error {
		ci, err := resolveCheckpoint(ctx, tx, ref)
		if err != nil {
			return err
		}
		res.Checkpoint = ci
		if err := s.restoreTx(ctx, tx, ci.Gen, res, keep); err != nil {
			return err
		}
		return check(res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Store) restoreTx(ctx context.Context, tx *sql.Tx, g int64, res *RestoreResult, keep func([]uint64) []uint64) error {
	// What differs between the live tables and generation g: live rows
	// born after it, and _hist rows it saw.
	changed := func(v versioned, cols string) (*sql.Rows, error) {
		return tx.QueryContext(ctx, fmt.Sprintf(`SELECT %[2]s FROM %[1]s WHERE born > 0 AND born > ?1
			UNION SELECT %[2]s FROM %[1]s_hist WHERE born <= ?1 AND died > ?1`, v.name, cols), g)
	}
	ints := func(v versioned, col string) ([]uint64, error) {
		rows, err := changed(v, col)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []uint64
		for rows.Next() {
			var i int64
			if err := rows.Scan(&i); err != nil {
				return nil, err
			}
			out = append(out, uint64(i))
		}
		return out, rows.Err()
	}
	inos, err := ints(versionedTables[0], "ino")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// The restore changes the rows of these inodes only: the totals
	// change by what they add after it less what they add now.
	before, err := s.inodesTotals(ctx, tx, inos)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	var dents []Dentry
	rows, err := changed(versionedTables[1], "parent, name")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for rows.Next() {
		var d Dentry
		if err := rows.Scan(&d.Parent, &d.Name); err != nil {
			rows.Close()
			return fmt.Errorf("restore: %w", err)
		}
		dents = append(dents, d)
	}
	rows.Close()
	if res.ChunkInodes, err = ints(versionedTables[2], "DISTINCT key >> 24"); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if res.XattrInodes, err = ints(versionedTables[3], "DISTINCT ino"); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// Inodes the restore would remove: changed, with no version at g.
	var gone []uint64
	for _, ino := range inos {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+versionedTables[0].asOf(g)+` WHERE ino = ?`, ino).Scan(&n); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if n == 0 {
			gone = append(gone, ino)
		}
	}
	kept := keep(gone)
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS restore_keep(ino INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM temp.restore_keep`); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, ino := range kept {
		if _, err := tx.ExecContext(ctx, `INSERT INTO temp.restore_keep(ino) VALUES (?)`, ino); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	newest := g == s.lastCkpt
	// Kept inodes lose their names; their rows stay, rewritten as nlink 0.
	notKept := map[string]string{
		"inodes": "ino NOT IN temp.restore_keep", "chunks": "(key >> 24) NOT IN temp.restore_keep",
		"xattrs": "ino NOT IN temp.restore_keep", "dentries": "1",
	}
	for _, v := range versionedTables {
		if _, err := tx.ExecContext(ctx, v.saveQuery("born > 0 AND born > ?3 AND "+notKept[v.name]), s.gen, s.lastCkpt, g); err != nil {
			return fmt.Errorf("restore %s: %w", v.name, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE born > 0 AND born > ? AND %s`, v.name, notKept[v.name]), g); err != nil {
			return fmt.Errorf("restore %s: %w", v.name, err)
		}
		if newest {
			// No checkpoint lies after g: the rows g saw go back as they
			// were, born when they were, and leave the history. What
			// changes next is then all that differs from g, so a restore
			// or diff after this one reads only that.
			for _, q := range []string{`INSERT INTO %[1]s(%[2]s, born) SELECT %[2]s, born FROM %[1]s_hist WHERE born <= ? AND died > ?`,
				`DELETE FROM %[1]s_hist WHERE born <= ? AND died > ?`} {
				if _, err := tx.ExecContext(ctx, fmt.Sprintf(q, v.name, v.all()), g, g); err != nil {
					return fmt.Errorf("restore %s: %w", v.name, err)
				}
			}
			continue
		}
		// Later checkpoints see the rows now live, saved above: g's come
		// back as new versions.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %[1]s(%[2]s, born) SELECT %[2]s, ?1 FROM %[1]s_hist WHERE born <= ?2 AND died > ?2`,
			v.name, v.all()), s.gen, g); err != nil {
			return fmt.Errorf("restore %s: %w", v.name, err)
		}
	}
	inodes := versionedTables[0]
	if _, err := tx.ExecContext(ctx, inodes.saveQuery("ino IN temp.restore_keep"), s.gen, s.lastCkpt); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE inodes SET nlink = 0, born = ? WHERE ino IN temp.restore_keep`, s.gen); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	res.ProtectedGone = kept
	after, err := s.inodesTotals(ctx, tx, inos)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := s.addTotals(ctx, tx, after.minus(before)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// The rows now live, for the caller's RAM copy.
	for _, ino := range inos {
		r, ok, err := readInode(ctx, tx, ino)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if ok {
			res.Inodes = append(res.Inodes, r)
		} else {
			res.GoneInodes = append(res.GoneInodes, ino)
		}
	}
	for _, d := range dents {
		err := tx.QueryRowContext(ctx, `SELECT ino FROM dentries WHERE parent = ? AND name = ?`, d.Parent, d.Name).Scan(&d.Ino)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			res.GoneDentries = append(res.GoneDentries, d)
		case err != nil:
			return fmt.Errorf("restore: %w", err)
		default:
			res.Dentries = append(res.Dentries, d)
		}
	}
	res.Names = map[uint64]Dentry{}
	for _, ino := range slices.Concat(inos, res.ChunkInodes, res.XattrInodes) {
		if _, ok := res.Names[ino]; ok {
			continue
		}
		d := Dentry{Ino: ino}
		err := tx.QueryRowContext(ctx, `SELECT parent, name FROM dentries WHERE ino = ? LIMIT 1`, ino).Scan(&d.Parent, &d.Name)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("restore: %w", err)
		default:
			res.Names[ino] = d
		}
	}
	for _, ino := range res.XattrInodes {
		rows, err := tx.QueryContext(ctx, `SELECT name, value FROM xattrs WHERE ino = ?`, ino)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		for rows.Next() {
			x := Xattr{Ino: ino}
			if err := rows.Scan(&x.Name, &x.Value); err != nil {
				rows.Close()
				return fmt.Errorf("restore: %w", err)
			}
			res.Xattrs = append(res.Xattrs, x)
		}
		rows.Close()
	}
	if res.Totals, err = readTotals(ctx, tx); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

const inodeCols = `ino, mode, uid, gid, nlink, size, atime_ns, mtime_ns, ctime_ns, rdev, coalesce(target, '')`

func scanInode(row interface{ Scan(...any) error }) (Inode, error) {
	var r Inode
	err := row.Scan(&r.Ino, &r.Mode, &r.Uid, &r.Gid, &r.Nlink, &r.Size, &r.Atime, &r.Mtime, &r.Ctime, &r.Rdev, &r.Target)
	return r, err
}

func readInode(ctx context.Context, q querier, ino uint64) (Inode, bool, error) {
	r, err := scanInode(q.QueryRowContext(ctx, `SELECT `+inodeCols+` FROM inodes WHERE ino = ?`, ino))
	if errors.Is(err, sql.ErrNoRows) {
		return Inode{}, false, nil
	}
	return r, err == nil, err
}
