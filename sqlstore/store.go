// Package sqlstore is the only package that speaks SQL. It keeps a sqlfs
// workspace in one SQLite file: the schema and its migrations, the owner
// lock, the batched writer and the queries the filesystem core needs.
package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/mattn/go-sqlite3"
	"golang.org/x/sys/unix"
)

// Root is the inode number of the workspace's root directory.
const Root = 1

// DefaultChunkSize is the size of the chunks new stores split file data
// into. A store keeps the size it was created with.
const DefaultChunkSize = 128 << 10

// chunkIdxBits is how many low bits of a chunk's key hold its index: the key
// is ino<<chunkIdxBits | idx, so one integer primary key serves lookups and
// range deletes without a second index.
const chunkIdxBits = 24

// MaxChunks is the number of chunks one file may have.
const MaxChunks = 1 << chunkIdxBits

// Errors callers check with errors.Is.
var (
	ErrNotStore     = errors.New("not a sqlfs store")
	ErrNewerSchema  = errors.New("store schema is newer than this program")
	ErrStoreCorrupt = errors.New("store is corrupt")
	ErrStoreFull    = errors.New("no space left for the store")
	// ErrStoreBusy: another program (not sqlfs, which takes the owner lock
	// first) holds a lock on the SQLite file past the busy timeout.
	ErrStoreBusy = errors.New("store is locked by another program")
	// ErrHardLinked: the store file has more than one name. SQLite finds
	// a crash's write-ahead log by the name the store is opened by, so an
	// open by another name would come up without the committed changes
	// still in that log (and a later open by the first name would replay
	// it over newer data).
	ErrHardLinked = errors.New("store file has more than one hard link")
	// ErrBadBatch: a batch names a chunk outside a file's key range, which
	// would overwrite another inode's data; nothing of it is written.
	ErrBadBatch = errors.New("invalid batch")
)

// Options tune Open.
type Options struct {
	// Socket is the control socket this owner serves, advertised to a
	// second opener through OwnedError.
	Socket string
	// ChunkSize applies only when the store is created.
	ChunkSize int
	// AuditRetention bounds the audit trail; nil means
	// DefaultAuditRetention.
	AuditRetention *AuditRetention
	// ExternalWALCheckpoints leaves copying the WAL into the database to
	// another program (Litestream, which holds a read transaction to own
	// checkpointing): the store runs no WAL checkpoint of its own, not
	// even at Close, except to get space back on a full disk.
	ExternalWALCheckpoints bool
}

// Store is an open workspace store. Commit must be called from one goroutine
// at a time (the filesystem core's writer); reads are safe from any.
type Store struct {
	closeOnce sync.Once
	closeErr  error
	path      string
	chunkSize int
	pageSize  int64
	lock      *ownerLock
	w         *sql.DB    // one connection: the writer
	r         *sql.DB    // read pool
	wk        *walKeeper // nil with Options.ExternalWALCheckpoints
	jan       *janitor
	retention AuditRetention
	// gen is the current generation and lastCkpt the newest checkpoint's
	// (-1: none); only the committing goroutine uses them (snapshot.go).
	gen, lastCkpt int64
	// chunksKept counts the chunk versions the commit under way kept for
	// checkpoints; only the writer's one connection touches it.
	chunksKept int64
	readChunk  *sql.Stmt // prepared once: every read of file data runs it
	reads      readCounter
	// commitStmts are commit's statements by query, prepared on w at the
	// first commit (prepareCommits, under prepareMu).
	commitStmts map[string]*sql.Stmt
	prepareMu   sync.Mutex
	// fullSyncConn is the writer's driver connection when its last commit
	// was durable and left it at synchronous=FULL (setSynchronous).
	fullSyncConn any
	shm          *os.File // the wal-index, open as long as the store (openWALIndex)
	// space is what a commit knows of the disk's free space (roomy).
	space spaceSeen
}

// Open opens the store at path, creating it when path does not exist. An
// existing file is opened only if it is a sqlfs store: an empty file or a
// foreign one is refused with ErrNotStore, never turned into a new
// workspace. Open takes the exclusive owner lock first, so a second opener,
// by whatever name, fails with an *OwnedError naming the owner. A store
// file with a second hard link is refused with ErrHardLinked: SQLite would
// look for a crash's WAL under the wrong name.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store path %q: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if err := create(ctx, abs, opts); err != nil {
			return nil, err
		}
		fi, err = os.Stat(abs)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("store %s: %w", abs, err)
	case fi.IsDir():
		return nil, fmt.Errorf("store %s: is a directory: %w", abs, ErrNotStore)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("store %s: not a regular file: %w", abs, ErrNotStore)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", abs, err)
	}
	lock, err := acquireOwnerLock(real, opts.Socket)
	if err != nil {
		return nil, err
	}
	s := &Store{path: real, lock: lock, retention: DefaultAuditRetention}
	if opts.AuditRetention != nil {
		s.retention = *opts.AuditRetention
	}
	if err := s.open(ctx, opts); err != nil {
		s.closeDBs()
		lock.release()
		return nil, err
	}
	return s, nil
}

// create makes a new store at path, which must not exist. The store is
// built under a temporary name and linked into place only once complete,
// so a crash never leaves an empty or half-made store at path; if another
// process created path meanwhile, its store wins and is opened instead.
func create(ctx context.Context, path string, opts Options) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer removeStoreFiles(tmp)
	s := &Store{path: tmp}
	if s.w, err = sql.Open("sqlite3", dsn(tmp, "_txlock=immediate")); err != nil {
		return fmt.Errorf("create store %s: %w", path, err)
	}
	err = s.initSchema(ctx, opts, true)
	// Closing the last connection checkpoints and removes the WAL, so the
	// file linked into place is the whole store.
	if cerr := s.w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create store %s: %w", path, err)
	}
	err = os.Link(tmp, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A filesystem without hard links may still rename without
		// replacing.
		err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create store %s: %w", path, err)
	}
	return nil
}

// tempPattern names the temporary files create builds a store under.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".new-*" }

// createTemp makes an empty, private file beside path.
func createTemp(path string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return "", fmt.Errorf("create store %s: %w", path, err)
	}
	defer f.Close()
	if err := tighten(f); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("create store %s: %w", path, err)
	}
	return f.Name(), nil
}

func removeStoreFiles(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(path + suffix)
	}
}

// tighten makes f readable and writable by its owner only, whatever the
// umask was when it was made, and says so when it was open to others.
func tighten(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	if perm == 0o600 {
		return nil
	}
	if perm&0o077 != 0 {
		slog.Warn("store file was readable by other users; mode tightened to 0600",
			"file", f.Name(), "mode", fmt.Sprintf("%#o", perm))
	}
	return f.Chmod(0o600)
}

// tightenExisting applies tighten to the store's WAL and shared-memory
// files left by an earlier owner; SQLite makes new ones with the store's
// own mode.
func tightenExisting(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return tighten(f)
}

func dsn(path string, query string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + query
}

func (s *Store) open(ctx context.Context, opts Options) error {
	if fi, err := s.lock.f.Stat(); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	} else if fi.Size() == 0 {
		return fmt.Errorf("store %s: empty file (0 bytes): %w; remove it to start a new workspace", s.path, ErrNotStore)
	}
	if err := tighten(s.lock.f); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := tightenExisting(s.path + suffix); err != nil {
			return fmt.Errorf("store %s: %w", s.path, err)
		}
	}
	// The writer connection runs every statement of a commit; a long busy
	// timeout rides out a foreign reader (say, the sqlite3 shell) briefly
	// holding a lock rather than failing a commit.
	w, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=10000&_txlock=immediate"))
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	s.w = w
	if err := s.initSchema(ctx, opts, false); err != nil {
		return err
	}
	if err := s.keepWALFiles(ctx); err != nil {
		return s.classify(fmt.Errorf("open store %s: %w", s.path, err))
	}
	s.openWALIndex()
	r, err := sql.Open("sqlite3", dsn(s.path, "_busy_timeout=10000&_query_only=1"))
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	s.r = r
	if s.readChunk, err = r.PrepareContext(ctx, `SELECT data, crc FROM chunks WHERE key=?`); err != nil {
		return s.classify(fmt.Errorf("prepare chunk read: %w", err))
	}
	if err := s.loadGenerations(ctx); err != nil {
		return err
	}
	if !opts.ExternalWALCheckpoints {
		if err := s.startWALKeeper(); err != nil {
			return err
		}
	}
	return s.startJanitor()
}

// keepWALFiles makes the writer's connection, the last to close, leave
// the WAL and the wal-index (the -shm file) in place instead of deleting
// them (SQLite's persistent WAL): the next open, a host's next wake of the
// workspace, then opens both instead of creating them. Creating a file
// took 0.5-1 ms of kernel time on these machines' ext4 under load (its
// inode allocator scans the recently deleted inodes), twice a wake, and
// deleting them twice a hibernation. The close still checkpoints the WAL
// and, journal_size_limit being set, truncates it to zero bytes, so the
// store file alone holds everything, as before; the first connection of
// the next open rebuilds the wal-index. Set only once the file is known
// to be a sqlfs store: a refused file is left as it was found.
func (s *Store) keepWALFiles(ctx context.Context) error {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		return dc.(*sqlite3.SQLiteConn).SetFileControlInt("main", sqlite3.SQLITE_FCNTL_PERSIST_WAL, 1)
	})
}

// classify turns SQLite's errors about the file itself into the store's own.
func (s *Store) classify(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrNotADB:
			return fmt.Errorf("%s: %w: %w", s.path, ErrNotStore, err)
		case sqlite3.ErrCorrupt:
			return fmt.Errorf("%s: %w: %w", s.path, ErrStoreCorrupt, err)
		case sqlite3.ErrFull:
			return fmt.Errorf("%s: %w: %w", s.path, ErrStoreFull, err)
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%s: %w: %w", s.path, ErrStoreBusy, err)
		}
	}
	return err
}

// Path is the store's absolute file name.
func (s *Store) Path() string { return s.path }

// ChunkSize is the size of this store's data chunks.
func (s *Store) ChunkSize() int { return s.chunkSize }

// Close checkpoints the WAL into the main file and releases the lock.
func (s *Store) Close() error {
	// A second Close (a deferred one after an explicit one) must not
	// close the WAL keeper's channel again.
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	var err error
	if s.jan != nil {
		err = s.jan.close()
	}
	if s.wk != nil {
		err = errors.Join(err, s.wk.close())
	}
	if s.w != nil && err == nil && s.wk != nil {
		_, err = s.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if cerr := s.closeDBs(); err == nil {
		err = cerr
	}
	s.lock.release()
	return err
}

func (s *Store) closeDBs() error {
	var errs []error
	if s.readChunk != nil {
		errs = append(errs, s.readChunk.Close())
	}
	for _, st := range s.commitStmts {
		errs = append(errs, st.Close())
	}
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.shm != nil {
		errs = append(errs, s.shm.Close())
	}
	return errors.Join(errs...)
}

// FileBytes is the size of the store file plus its WAL.
func (s *Store) FileBytes() (db, wal int64) {
	if fi, err := os.Stat(s.path); err == nil {
		db = fi.Size()
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		wal = fi.Size()
	}
	return db, wal
}

// walBytes is what the WAL holds since SQLite last started it over (used)
// and what of that no checkpoint has copied yet (pending), from the
// wal-index header. The WAL file's size does not tell: SQLite reuses a
// checkpointed WAL from its start without shrinking it. Zeros when there
// is no wal-index to read.
func (s *Store) walBytes() (used, pending int64) {
	h, err := s.walIndex()
	if err != nil {
		return 0, 0
	}
	return h.frames * h.frameSize, max(0, h.frames-h.backfilled) * h.frameSize
}

// walIndexHeader is what the wal-index header in the -shm file says (its
// layout is part of SQLite's documented file format,
// https://sqlite.org/walformat.html): the WAL's valid frames (mxFrame),
// those copied into the database (nBackfill), and a frame's size.
type walIndexHeader struct {
	frames, backfilled, frameSize int64
}

// errWALIndex: the wal-index header could not be read whole.
var errWALIndex = errors.New("wal-index header unreadable")

// errNoWALIndex: the -shm file could not be opened with the store.
var errNoWALIndex = errors.New("no wal-index")

// openWALIndex opens the -shm file, which every commit reads (walBytes),
// once: opening and closing it at each commit cost two system calls and
// a path lookup. The file stays the same while the store is open: SQLite
// removes or rebuilds it only when its last connection closes or opens,
// and the writer's connection lives as long as the store.
func (s *Store) openWALIndex() {
	f, err := os.Open(s.path + "-shm")
	if err != nil {
		slog.Debug("wal-index not opened; WAL sizes read as zero", "path", s.path, "err", err)
		return
	}
	s.shm = f
}

// walIndex reads the wal-index header. SQLite writes its two copies one
// after the other: copies that differ were read mid-update, and are read
// again, as SQLite's readers do.
func (s *Store) walIndex() (walIndexHeader, error) {
	f := s.shm
	if f == nil {
		return walIndexHeader{}, errNoWALIndex
	}
	var hdr [walIndexHdrSize]byte
	for range 100 {
		if _, err := f.ReadAt(hdr[:], 0); err != nil {
			return walIndexHeader{}, err
		}
		if hdr[12] != 1 || !bytes.Equal(hdr[:48], hdr[48:96]) {
			continue // not initialized, or mid-update
		}
		order := binary.NativeEndian
		frameSize := int64(order.Uint16(hdr[14:]))
		if frameSize == 1 {
			frameSize = 1 << 16
		}
		return walIndexHeader{
			frames:     int64(order.Uint32(hdr[16:])),
			backfilled: int64(order.Uint32(hdr[96:])),
			frameSize:  frameSize + walFrameHeader,
		}, nil
	}
	return walIndexHeader{}, errWALIndex
}

// walIndexHdrSize covers the wal-index header (two copies of 48 bytes) and
// the checkpoint information's nBackfill after it.
const walIndexHdrSize = 100
