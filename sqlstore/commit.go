package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqlfs/sqlfs/metrics"
)

// Chunk is one chunk of a file's data; a nil Data deletes it.
type Chunk struct {
	Ino  uint64
	Idx  int64
	Data []byte
}

// Truncation deletes every chunk of Ino from index From on.
type Truncation struct {
	Ino  uint64
	From int64
}

// XattrKey names one extended attribute.
type XattrKey struct {
	Ino  uint64
	Name string
}

// Batch is everything one commit writes. Apply order: truncations, inode
// deletions, dentry deletions, then upserts, so a batch taken as one
// consistent snapshot of the filesystem lands as that snapshot.
type Batch struct {
	Truncations    []Truncation
	DeleteInodes   []uint64 // with their chunks and xattrs
	DeleteDentries []Dentry // Ino is ignored
	Dentries       []Dentry
	Inodes         []Inode
	Chunks         []Chunk
	DeleteXattrs   []XattrKey
	Xattrs         []Xattr
	Audit          []AuditEvent
	// Durable makes this commit survive a power loss before it returns.
	Durable bool
}

// Ops is the number of rows the batch touches.
func (b *Batch) Ops() int {
	return len(b.Truncations) + len(b.DeleteInodes) + len(b.DeleteDentries) + len(b.Dentries) +
		len(b.Inodes) + len(b.Chunks) + len(b.DeleteXattrs) + len(b.Xattrs) + len(b.Audit)
}

// Empty reports whether the batch writes nothing.
func (b *Batch) Empty() bool { return b.Ops() == 0 }

// Commit writes b in one transaction. Only one goroutine may commit at a
// time. On error nothing of b is written. A batch that grows the database
// is refused with ErrStoreFull unless the disk has room for its WAL frames
// and for the growth a checkpoint of them needs (see roomToCheckpoint).
// When the disk is full it empties the WAL into the database and tries
// once more, since the WAL only gives its space back after a checkpoint.
func (s *Store) Commit(ctx context.Context, b *Batch) error {
	return s.commitWith(ctx, b, nil)
}

// commitWith is Commit with extra run in the same transaction after b.
func (s *Store) commitWith(ctx context.Context, b *Batch, extra func(tx *sql.Tx) error) error {
	if err := b.validate(); err != nil {
		return err
	}
	err := s.commit(ctx, b, extra)
	if errors.Is(err, ErrStoreFull) {
		s.space = spaceSeen{} // the disk is not roomy: check it at every commit
		metrics.StoreBusyRetries.Inc()
		if _, cerr := s.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); cerr == nil {
			err = s.commit(ctx, b, extra)
		}
	}
	return err
}

func (s *Store) commit(ctx context.Context, b *Batch, extra func(tx *sql.Tx) error) error {
	if s.wk != nil {
		s.wk.committing.Add(1)
		defer s.wk.committing.Add(-1)
	}
	if err := s.prepareCommits(ctx); err != nil {
		return s.classify(fmt.Errorf("commit: %w", err))
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return s.classify(fmt.Errorf("commit: %w", err))
	}
	defer conn.Close()
	if err := s.setSynchronous(ctx, conn, b.Durable); err != nil {
		return s.classify(fmt.Errorf("commit: %w", err))
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return s.classify(fmt.Errorf("commit: begin: %w", err))
	}
	s.chunksKept = 0
	defer tx.Rollback()
	// extra (a checkpoint's or a restore's rows) writes what b's payload
	// does not tell: always checked.
	roomy := extra == nil && s.roomy(b)
	var pagesBefore int64
	if !roomy {
		if err := s.pageCount(ctx, tx, &pagesBefore); err != nil {
			return s.classify(fmt.Errorf("commit: page count: %w", err))
		}
	}
	if err := s.applyBatch(ctx, tx, b); err != nil {
		return s.classify(fmt.Errorf("commit: %w", err))
	}
	if extra != nil {
		if err := extra(tx); err != nil {
			return s.classify(err)
		}
	}
	if !roomy {
		if err := s.roomToCheckpoint(ctx, tx, pagesBefore); err != nil {
			return s.classify(fmt.Errorf("commit: %w", err))
		}
	}
	if err := tx.Commit(); err != nil {
		return s.classify(fmt.Errorf("commit: %w", err))
	}
	metrics.StoreChunksKept.Add(float64(s.chunksKept))
	if !roomy {
		// The WAL gives space back only after a checkpoint, which itself
		// needs room to grow the database: on a filling disk, checkpoint
		// at once, long before the WAL could take the last of the space.
		db, wal := s.fileBytesGauges()
		if wal > s.freeBytes()/2 {
			if _, err := conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
				slog.Warn("checkpoint on a filling disk failed", "err", err)
			}
		}
		s.space.db, s.space.wal = db, wal
	}
	if s.wk != nil {
		s.wk.committed(s.walBytes())
	}
	return nil
}

// setSynchronous makes conn, the writer's connection, sync the WAL at
// commit (synchronous=FULL) when durable, and leave it unsynced (NORMAL)
// otherwise. It switches only when the last commit on conn was the other
// kind: setting FULL and back around every durable commit cost two
// statements a commit (7% of a small durable commit's CPU). A connection
// it has not seen is taken as NORMAL, as initSchema leaves it; should it
// run FULL (SQLite's default, on a connection the pool replaced), the
// commits are only slower.
func (s *Store) setSynchronous(ctx context.Context, conn *sql.Conn, durable bool) error {
	return conn.Raw(func(dc any) error {
		if (s.fullSyncConn == dc) == durable {
			return nil
		}
		mode := "NORMAL"
		if durable {
			mode = "FULL"
		}
		s.fullSyncConn = nil // not known to be FULL until the switch succeeds
		if _, err := dc.(driver.ExecerContext).ExecContext(ctx, "PRAGMA synchronous="+mode, nil); err != nil {
			return fmt.Errorf("synchronous=%s: %w", mode, err)
		}
		if durable {
			s.fullSyncConn = dc
		}
		return nil
	})
}

const (
	// walFrameHeader is the bytes the WAL adds to each page it holds.
	walFrameHeader = 24
	// walMarginPages is a margin for the b-tree, freelist and schema
	// pages a growing transaction rewrites besides the pages it adds.
	walMarginPages = 16
)

// roomToCheckpoint refuses a transaction that grows the database when,
// once committed, its WAL frames could leave too little space for a
// checkpoint. A checkpoint must grow the database file to the size the WAL
// records before the WAL can be reused; if a commit's own frames took
// that space, no checkpoint could ever complete, and every later commit,
// the deletions that would free space included, would need new WAL space
// too: the store would stay full for good. Transactions that add no pages
// (deletions, rewrites) always go ahead, since they are how space comes
// back.
func (s *Store) roomToCheckpoint(ctx context.Context, tx *sql.Tx, pagesBefore int64) error {
	var pages int64
	if err := s.pageCount(ctx, tx, &pages); err != nil {
		return fmt.Errorf("page count: %w", err)
	}
	added := pages - pagesBefore
	if added <= 0 {
		return nil
	}
	db, _ := s.FileBytes()
	growth := max(0, pages*s.pageSize-db)
	wal := (added + added/8 + walMarginPages) * (s.pageSize + walFrameHeader)
	if free := s.freeBytes(); growth+wal > free {
		return fmt.Errorf("%s: %w: the commit needs %d bytes of WAL and %d of database growth to checkpoint it, %d are free",
			s.path, ErrStoreFull, wal, growth, free)
	}
	return nil
}

// Tuning of the space checks a commit skips on a roomy disk; variables so
// tests can change them.
var (
	// freeCheckEvery is how long a commit trusts the last statfs of the
	// store's filesystem.
	freeCheckEvery = 250 * time.Millisecond
	// freeMargin is the space that makes a disk roomy (see roomy).
	freeMargin int64 = 1 << 30
)

// spaceSeen is what the last statfs found free, when, the sizes of the
// store file and its WAL then, and the bytes commits may have taken since
// (four times their payload: see roomy). Only the committing goroutine
// uses it; the zero value makes the next commit check.
type spaceSeen struct {
	at            time.Time
	free, db, wal int64
	spent         int64
}

// roomy reports whether b, and every commit since the last statfs, cannot
// come near filling the disk: the last statfs, at most freeCheckEvery
// old, found more than freeMargin plus twice the WAL free beyond four
// times the payload committed since. Such a commit skips counting its
// pages (roomToCheckpoint) and checking for a filling disk after it; on
// the disk a host serves a thousand workspaces from, those took two
// statements, four stats and two statfs of every commit (11% of a small
// durable commit's CPU with the wal-index read). Four times the payload
// covers its WAL frames with their headers and the b-tree pages it
// rewrites, and the database growth a checkpoint of it needs. Should
// another process fill the disk meanwhile, SQLite's own refusal still
// fails the commit whole with ErrStoreFull, after which every commit
// checks (commitWith), as does every commit on a disk that is not roomy.
func (s *Store) roomy(b *Batch) bool {
	if time.Since(s.space.at) >= freeCheckEvery {
		db, wal := s.fileBytesGauges()
		s.space = spaceSeen{at: time.Now(), free: s.freeBytes(), db: db, wal: wal}
	}
	s.space.spent += 4 * b.payload()
	return s.space.free-s.space.spent > freeMargin+2*s.space.wal
}

// fileBytesGauges is FileBytes, also set as the size gauges.
func (s *Store) fileBytesGauges() (db, wal int64) {
	db, wal = s.FileBytes()
	metrics.StoreFileBytes.Set(float64(db))
	metrics.StoreWALBytes.Set(float64(wal))
	return db, wal
}

// payload is the bytes b writes: its chunks' and attributes' data and
// rowBytes for each row besides.
func (b *Batch) payload() int64 {
	n := int64(b.Ops()) * rowBytes
	for _, c := range b.Chunks {
		n += int64(len(c.Data))
	}
	for _, x := range b.Xattrs {
		n += int64(len(x.Value))
	}
	for _, a := range b.Audit {
		n += int64(len(a.Path) + len(a.Path2) + len(a.Actor))
	}
	return n
}

// rowBytes is more than a row's fixed columns and a name take with their
// keys in the table and its indexes.
const rowBytes = 512

func (s *Store) pageCount(ctx context.Context, tx *sql.Tx, pages *int64) error {
	st, err := s.stmt(ctx, tx, qPageCount)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.QueryRowContext(ctx).Scan(pages)
}

// validate refuses chunk indexes that do not fit the key's bits: they
// would address another inode's chunks.
func (b *Batch) validate() error {
	for _, c := range b.Chunks {
		if c.Idx < 0 || c.Idx >= MaxChunks {
			return fmt.Errorf("chunk %d of inode %d: %w: index outside [0, %d)", c.Idx, c.Ino, ErrBadBatch, MaxChunks)
		}
	}
	for _, t := range b.Truncations {
		if t.From < 0 || t.From > MaxChunks {
			return fmt.Errorf("truncation of inode %d from chunk %d: %w: outside [0, %d]", t.Ino, t.From, ErrBadBatch, MaxChunks)
		}
	}
	return nil
}

// The statements of a commit, prepared once on the writer when the store
// opens (preparing them in every commit cost ~70 µs of CPU a commit). Each
// row written carries the current generation, the last argument. A put is
// an upsert, not INSERT OR REPLACE: REPLACE on a table with an index (every
// versioned table has its born index) may delete a row before it inserts,
// so SQLite gives each such statement a statement journal, which copies
// every page the statement touches that an earlier statement of the same
// transaction changed, and every page it spills to the WAL. The upserts
// cut the CPU of committing new small files by ~22% (BenchmarkCommitCreates,
// 62 -> 49 µs a file) and of a 64 MiB file by ~5% (BenchmarkWriteSequential).
const (
	qDeleteChunks = `DELETE FROM chunks WHERE key >= ? AND key < ?`
	qDeleteInode  = `DELETE FROM inodes WHERE ino = ?`
	qDeleteXattrs = `DELETE FROM xattrs WHERE ino = ?`
	qDeleteDentry = `DELETE FROM dentries WHERE parent = ? AND name = ?`
	qPutDentry    = `INSERT INTO dentries(parent, name, ino, born) VALUES (?, ?, ?, ?)
			ON CONFLICT(parent, name) DO UPDATE SET ino = excluded.ino, born = excluded.born`
	qPutInode = `INSERT INTO inodes(ino, mode, uid, gid, nlink, size, atime_ns, mtime_ns, ctime_ns, rdev, target, born)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(ino) DO UPDATE SET mode = excluded.mode, uid = excluded.uid, gid = excluded.gid,
				nlink = excluded.nlink, size = excluded.size, atime_ns = excluded.atime_ns,
				mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, rdev = excluded.rdev,
				target = excluded.target, born = excluded.born`
	qPutChunk = `INSERT INTO chunks(key, data, crc, born) VALUES (?, ?, ?, ?)
			ON CONFLICT(key) DO UPDATE SET data = excluded.data, crc = excluded.crc, born = excluded.born`
	qDeleteXattr = `DELETE FROM xattrs WHERE ino = ? AND name = ?`
	qPutXattr    = `INSERT INTO xattrs(ino, name, value, born) VALUES (?, ?, ?, ?)
			ON CONFLICT(ino, name) DO UPDATE SET value = excluded.value, born = excluded.born`
	qPutAudit  = `INSERT INTO audit(time_ns, actor, op, path, path2, result) VALUES (?, ?, ?, ?, ?, ?)`
	qPageCount = `PRAGMA page_count`
)

// The statements that keep what a checkpoint sees before the one of the
// same condition overwrites or deletes it (see saveQuery); run only while
// the store has checkpoints.
var (
	inodesV, dentriesV, chunksV, xattrsV = versionedTables[0], versionedTables[1], versionedTables[2], versionedTables[3]

	qSaveChunks = chunksV.saveQuery("key >= ?3 AND key < ?4")
	qSaveInode  = inodesV.saveQuery("ino = ?3")
	qSaveXattrs = xattrsV.saveQuery("ino = ?3")
	qSaveDentry = dentriesV.saveQuery("parent = ?3 AND name = ?4")
	qSaveChunk  = chunksV.saveQuery("key = ?3")
	qSaveXattr  = xattrsV.saveQuery("ino = ?3 AND name = ?4")
	commitSaves = []string{qSaveChunks, qSaveInode, qSaveXattrs, qSaveDentry, qSaveChunk, qSaveXattr}
	saveFor     = map[string]string{qDeleteChunks: qSaveChunks, qDeleteInode: qSaveInode, qDeleteXattrs: qSaveXattrs,
		qDeleteDentry: qSaveDentry, qPutDentry: qSaveDentry, qPutInode: qSaveInode, qPutChunk: qSaveChunk,
		qDeleteXattr: qSaveXattr, qPutXattr: qSaveXattr}
)

var commitQueries = append([]string{qDeleteChunks, qDeleteInode, qDeleteXattrs, qDeleteDentry, qPutDentry,
	qPutInode, qPutChunk, qDeleteXattr, qPutXattr, qPutAudit, qPageCount, qInodesTotals, qAddTotals}, commitSaves...)

// prepareCommits prepares commitQueries on the writer, once: at the first
// commit, not at open, which a store opened for a few reads (a host's
// workspace woken for one request) would pay for nothing (0.9 ms of CPU,
// a sixth of a wake). It must run while no transaction holds the writer's
// one connection.
func (s *Store) prepareCommits(ctx context.Context) error {
	s.prepareMu.Lock()
	defer s.prepareMu.Unlock()
	if s.commitStmts != nil {
		return nil
	}
	stmts := make(map[string]*sql.Stmt, len(commitQueries))
	for _, q := range commitQueries {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			for _, st := range stmts {
				st.Close()
			}
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		stmts[q] = st
	}
	s.commitStmts = stmts
	return nil
}

// stmt is query as a statement of tx: the writer's prepared one, else
// prepared now.
func (s *Store) stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st, ok := s.commitStmts[query]; ok {
		return tx.StmtContext(ctx, st), nil
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", query, err)
	}
	return st, nil
}

// step runs one statement over n rows. keys is how many leading
// arguments name the row (a put's) or all of them (a deletion's, keys 0);
// born appends the current generation (puts).
func (s *Store) step(ctx context.Context, tx *sql.Tx, query string, n, keys int, born bool, args func(i int) []any) error {
	if n == 0 {
		return nil
	}
	st, err := s.stmt(ctx, tx, query)
	if err != nil {
		return err
	}
	defer st.Close()
	var save *sql.Stmt
	if q := saveFor[query]; q != "" && s.lastCkpt >= 0 {
		if save, err = s.stmt(ctx, tx, q); err != nil {
			return err
		}
		defer save.Close()
	}
	for i := range n {
		a := args(i)
		if save != nil {
			k := a
			if keys > 0 {
				k = a[:keys]
			}
			res, err := save.ExecContext(ctx, append([]any{s.gen, s.lastCkpt}, k...)...)
			if err != nil {
				return fmt.Errorf("%q: %w", saveFor[query], err)
			}
			if query == qPutChunk || query == qDeleteChunks {
				if n, err := res.RowsAffected(); err == nil {
					s.chunksKept += n
				}
			}
		}
		if born {
			a = append(a, s.gen)
		}
		if _, err := st.ExecContext(ctx, a...); err != nil {
			return fmt.Errorf("%q: %w", query, err)
		}
	}
	return nil
}

// totalsDelta is what b changes of the totals: what the inodes it puts or
// deletes add as b leaves them, less what they add now. Run before b is
// applied.
func (s *Store) totalsDelta(ctx context.Context, tx *sql.Tx, b *Batch) (Totals, error) {
	if len(b.Inodes)+len(b.DeleteInodes) == 0 {
		return Totals{}, nil
	}
	after := make(map[uint64]Totals, len(b.Inodes)+len(b.DeleteInodes))
	for _, ino := range b.DeleteInodes {
		after[ino] = Totals{}
	}
	for _, n := range b.Inodes { // put after the deletions, the last put winning
		after[n.Ino] = n.totals()
	}
	var d Totals
	inos := make([]uint64, 0, len(after))
	for ino, t := range after {
		inos = append(inos, ino)
		d = d.plus(t)
	}
	before, err := s.inodesTotals(ctx, tx, inos)
	return d.minus(before), err
}

func (s *Store) applyBatch(ctx context.Context, tx *sql.Tx, b *Batch) error {
	delta, err := s.totalsDelta(ctx, tx, b)
	if err != nil {
		return err
	}
	steps := []struct {
		query string
		n     int
		keys  int // > 0: a put whose first keys arguments name its row
		args  func(i int) []any
	}{
		{qDeleteChunks, len(b.Truncations), 0, func(i int) []any {
			t := b.Truncations[i]
			return []any{chunkKey(t.Ino, t.From), chunkKey(t.Ino+1, 0)}
		}},
		{qDeleteInode, len(b.DeleteInodes), 0, func(i int) []any { return []any{b.DeleteInodes[i]} }},
		{qDeleteChunks, len(b.DeleteInodes), 0, func(i int) []any {
			return []any{chunkKey(b.DeleteInodes[i], 0), chunkKey(b.DeleteInodes[i]+1, 0)}
		}},
		{qDeleteXattrs, len(b.DeleteInodes), 0, func(i int) []any { return []any{b.DeleteInodes[i]} }},
		{qDeleteDentry, len(b.DeleteDentries), 0, func(i int) []any {
			return []any{b.DeleteDentries[i].Parent, b.DeleteDentries[i].Name}
		}},
		{qPutDentry, len(b.Dentries), 2, func(i int) []any {
			d := b.Dentries[i]
			return []any{d.Parent, d.Name, d.Ino}
		}},
		{qPutInode, len(b.Inodes), 1, func(i int) []any {
			n := b.Inodes[i]
			var target any
			if n.Target != "" {
				target = n.Target
			}
			return []any{n.Ino, n.Mode, n.Uid, n.Gid, n.Nlink, n.Size, n.Atime, n.Mtime, n.Ctime, n.Rdev, target}
		}},
		{qPutChunk, len(b.Chunks), 1, func(i int) []any {
			c := b.Chunks[i]
			return []any{chunkKey(c.Ino, c.Idx), c.Data, chunkCRC(c.Data)}
		}},
		{qDeleteXattr, len(b.DeleteXattrs), 0, func(i int) []any {
			return []any{b.DeleteXattrs[i].Ino, b.DeleteXattrs[i].Name}
		}},
		{qPutXattr, len(b.Xattrs), 2, func(i int) []any {
			x := b.Xattrs[i]
			return []any{x.Ino, x.Name, x.Value}
		}},
	}
	for _, st := range steps {
		if err := s.step(ctx, tx, st.query, st.n, st.keys, st.keys > 0, st.args); err != nil {
			return err
		}
	}
	if err := s.addTotals(ctx, tx, delta); err != nil {
		return err
	}
	err = s.step(ctx, tx, qPutAudit, len(b.Audit), 0, false, func(i int) []any {
		a := b.Audit[i]
		return []any{a.Time.UnixNano(), a.Actor, a.Op, a.Path, a.Path2, a.Result}
	})
	if err != nil {
		return err
	}
	if b.Durable && b.Empty() {
		// A synced commit must write something: syncing the WAL is what
		// makes the unsynced commits before it durable too.
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(k, v) VALUES ('last_sync', ?)`,
			time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			return fmt.Errorf("record sync: %w", err)
		}
	}
	return nil
}
