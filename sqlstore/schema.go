package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// appID marks a SQLite file as a sqlfs store (PRAGMA application_id), so a
// foreign database is refused before anything is written to it.
const appID = 0x73716c66 // "sqlf"

// migration brings a store's schema one version up: the statements, then
// fill, which computes in Go what SQL cannot.
type migration struct {
	sql  string
	fill func(ctx context.Context, tx *sql.Tx) error
}

// migrations[i] brings a store from schema version i to i+1. Append only.
var migrations = []migration{
	{sql: `CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
	CREATE TABLE inodes(
		ino INTEGER PRIMARY KEY,
		mode INTEGER NOT NULL,
		uid INTEGER NOT NULL,
		gid INTEGER NOT NULL,
		nlink INTEGER NOT NULL,
		size INTEGER NOT NULL,
		atime_ns INTEGER NOT NULL,
		mtime_ns INTEGER NOT NULL,
		ctime_ns INTEGER NOT NULL,
		rdev INTEGER NOT NULL DEFAULT 0,
		target BLOB);
	CREATE TABLE dentries(
		parent INTEGER NOT NULL,
		name TEXT NOT NULL,
		ino INTEGER NOT NULL,
		PRIMARY KEY(parent, name)) WITHOUT ROWID;
	CREATE INDEX dentries_ino ON dentries(ino);
	-- key = ino<<24 | chunk index (see chunkIdxBits)
	CREATE TABLE chunks(key INTEGER PRIMARY KEY, data BLOB NOT NULL);
	CREATE TABLE xattrs(
		ino INTEGER NOT NULL,
		name TEXT NOT NULL,
		value BLOB NOT NULL,
		PRIMARY KEY(ino, name)) WITHOUT ROWID;
	CREATE TABLE audit(
		seq INTEGER PRIMARY KEY,
		time_ns INTEGER NOT NULL,
		actor TEXT NOT NULL,
		op TEXT NOT NULL,
		path TEXT NOT NULL,
		path2 TEXT NOT NULL DEFAULT '',
		result TEXT NOT NULL);
	CREATE INDEX audit_actor ON audit(actor, seq);`},
	// v2: a CRC-32C of every chunk's data. The default -1 is no CRC-32
	// value, so a row written without one fails verification.
	{sql: `ALTER TABLE chunks ADD COLUMN crc INTEGER NOT NULL DEFAULT -1;`, fill: fillChunkCRCs},
	// v3: libfuse's high-level API renamed a file unlinked while open to
	// .fuse_hidden* until its last close, and the core hid those names. The
	// frontends now keep such files alive without a name, so the names left
	// by files open when an older owner stopped are dropped here, once; an
	// inode left without a name (nlink 0) is reclaimed by the core at open.
	// libfuse never hid a directory.
	{sql: `UPDATE inodes SET nlink = nlink - (SELECT count(*) FROM dentries d
		WHERE d.ino = inodes.ino AND d.name GLOB '.fuse_hidden*')
	WHERE mode & 61440 != 16384
		AND ino IN (SELECT ino FROM dentries WHERE name GLOB '.fuse_hidden*');
	DELETE FROM dentries WHERE name GLOB '.fuse_hidden*'
		AND ino IN (SELECT ino FROM inodes WHERE mode & 61440 != 16384);`},
	// v4: checkpoints. Every row carries the generation it was written in
	// (born); a row a checkpoint still sees moves to the table's _hist twin
	// when it is overwritten or deleted, with the generation it died in.
	// See snapshot.go.
	{sql: checkpointSchema},
	// v5: what the filesystem core needs at open without reading every
	// row (lookup.go): the totals of the live inodes, kept in the same
	// transaction as every change (commits, restores, a fork's trim), and
	// an index of the inodes with no name, reclaimed at open.
	{sql: totalsSchema},
	// v6: the totals without triggers; whatever changes inodes adds its
	// change (lookup.go).
	{sql: dropTotalsTriggers},
}

// walSizeLimit is the size SQLite cuts a WAL file back to when it starts
// it over (journal_size_limit): the WAL keeper's threshold.
const walSizeLimit = 64 << 20

// SchemaVersion is the schema this program writes.
var SchemaVersion = len(migrations)

// initSchema checks the store's header and brings its schema up to date;
// create says the file is a new, empty one to make into a store.
func (s *Store) initSchema(ctx context.Context, opts Options, create bool) error {
	conn := s.w
	var id int
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return s.classify(fmt.Errorf("read store header: %w", err))
	}
	var tables int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return s.classify(fmt.Errorf("read store schema: %w", err))
	}
	fresh := create && id == 0 && tables == 0
	if !fresh && id != appID {
		return fmt.Errorf("%s: %w (a SQLite database of another application)", s.path, ErrNotStore)
	}
	if fresh {
		// 32 KiB pages. SQLite moves file data a page at a time: two
		// write(2)s per page into the WAL, and a read and a write per page
		// when the checkpoint copies it into the database. With 4 KiB
		// pages those calls cost 2.5-3x the CPU per MiB of large writes
		// (BenchmarkWriteSequential: ~7.5 vs ~2.9 ms CPU a MiB); 64 KiB
		// measured the same as 32. A synced small commit writes whole
		// pages, but create+sync measured the same CPU and time per file
		// at 4 and 32 KiB (BenchmarkCreateSync), the fsync dominating. The
		// size only applies before the first table and the WAL exist, so
		// older stores keep theirs.
		if _, err := conn.ExecContext(ctx, "PRAGMA page_size=32768"); err != nil {
			return fmt.Errorf("set page size: %w", err)
		}
	}
	// WAL lets the read pool run beside the writer; NORMAL syncs only at
	// checkpoints, and commits that must be durable switch to FULL. The
	// writer never checkpoints itself: the WAL keeper does, on its own
	// connection, so copying the WAL into the database overlaps new writes
	// (or Litestream, see Options.ExternalWALCheckpoints). When the writer
	// starts a checkpointed WAL over, SQLite cuts the file back to
	// journal_size_limit: without it the file keeps the size of the largest
	// burst that ever ran ahead of the checkpoints (measured 150-520 MiB
	// after 480 MiB written), since only a TRUNCATE checkpoint shrinks it.
	for _, p := range []string{
		"PRAGMA journal_mode=WAL",
		"PRAGMA synchronous=NORMAL",
		"PRAGMA wal_autocheckpoint=0",
		fmt.Sprintf("PRAGMA journal_size_limit=%d", walSizeLimit),
	} {
		if _, err := conn.ExecContext(ctx, p); err != nil {
			return s.classify(fmt.Errorf("%s: %w", p, err))
		}
	}
	version := 0
	if !fresh {
		var v string
		err := conn.QueryRowContext(ctx, "SELECT v FROM meta WHERE k='schema_version'").Scan(&v)
		if err != nil {
			return s.classify(fmt.Errorf("%s: read schema version: %w: %w", s.path, ErrNotStore, err))
		}
		if version, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("%s: schema version %q: %w", s.path, v, ErrStoreCorrupt)
		}
	}
	if version > SchemaVersion {
		return fmt.Errorf("%s: schema version %d, this program knows %d: %w", s.path, version, SchemaVersion, ErrNewerSchema)
	}
	if version < SchemaVersion {
		if err := s.migrate(ctx, version, fresh, opts); err != nil {
			return err
		}
	}
	var cs string
	if err := conn.QueryRowContext(ctx, "SELECT v FROM meta WHERE k='chunk_size'").Scan(&cs); err != nil {
		return s.classify(fmt.Errorf("%s: read chunk size: %w", s.path, err))
	}
	n, err := strconv.Atoi(cs)
	if err != nil || n <= 0 || n > 16<<20 {
		return fmt.Errorf("%s: chunk size %q: %w", s.path, cs, ErrStoreCorrupt)
	}
	s.chunkSize = n
	if err := conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&s.pageSize); err != nil {
		return s.classify(fmt.Errorf("%s: read page size: %w", s.path, err))
	}
	return nil
}

func (s *Store) migrate(ctx context.Context, from int, fresh bool, opts Options) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.classify(fmt.Errorf("migrate %s: %w", s.path, err))
	}
	defer tx.Rollback()
	for v := from; v < SchemaVersion; v++ {
		m := migrations[v]
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return s.classify(fmt.Errorf("migrate %s to schema %d: %w", s.path, v+1, err))
		}
		if m.fill == nil || fresh {
			continue
		}
		start := time.Now()
		if err := m.fill(ctx, tx); err != nil {
			return s.classify(fmt.Errorf("migrate %s to schema %d: %w", s.path, v+1, err))
		}
		slog.Info("store migrated", "store", s.path, "schema", v+1, "took", time.Since(start).Round(time.Millisecond))
	}
	if fresh {
		chunk := opts.ChunkSize
		if chunk <= 0 {
			chunk = DefaultChunkSize
		}
		now := time.Now().UnixNano()
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(k, v) VALUES ('chunk_size', ?), ('created', ?)`,
			strconv.Itoa(chunk), time.Now().UTC().Format(time.RFC3339)); err != nil {
			return fmt.Errorf("init meta: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO inodes(ino, mode, uid, gid, nlink, size, atime_ns, mtime_ns, ctime_ns)
			VALUES (?, ?, 0, 0, 2, 0, ?, ?, ?)`, Root, 0o040755, now, now, now); err != nil {
			return fmt.Errorf("create root: %w", err)
		}
		if _, err := tx.ExecContext(ctx, qRecountTotals); err != nil {
			return fmt.Errorf("count root: %w", err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id=%d", appID)); err != nil {
			return fmt.Errorf("set application id: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(k, v) VALUES ('schema_version', ?)
		ON CONFLICT(k) DO UPDATE SET v=excluded.v`, strconv.Itoa(SchemaVersion)); err != nil {
		return fmt.Errorf("record schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return s.classify(fmt.Errorf("migrate %s: %w", s.path, err))
	}
	return nil
}

// fillChunkCRCs computes the checksum of every chunk stored before schema 2,
// a few chunks at a time so memory stays bounded on a large store.
func fillChunkCRCs(ctx context.Context, tx *sql.Tx) error {
	const batch = 64
	update, err := tx.PrepareContext(ctx, `UPDATE chunks SET crc = ? WHERE key = ?`)
	if err != nil {
		return err
	}
	defer update.Close()
	type chunk struct {
		key  int64
		data []byte
	}
	for after := int64(-1); ; {
		rows, err := tx.QueryContext(ctx, `SELECT key, data FROM chunks WHERE key > ? ORDER BY key LIMIT ?`, after, batch)
		if err != nil {
			return err
		}
		var got []chunk
		for rows.Next() {
			var c chunk
			if err := rows.Scan(&c.key, &c.data); err != nil {
				rows.Close()
				return err
			}
			got = append(got, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range got {
			if _, err := update.ExecContext(ctx, chunkCRC(c.data), c.key); err != nil {
				return err
			}
		}
		if len(got) < batch {
			return nil
		}
		after = got[len(got)-1].key
	}
}
