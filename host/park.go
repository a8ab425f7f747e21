package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// A hibernated store's WAL, kept for its wake (ParkStore, WakeStore).
//
// Litestream v0.5.18 resumes a store it opens afresh (a wake registers
// the store anew) only from the WAL it last read: the same WAL header
// salts and the last frame it shipped still at its offset. Finding the WAL
// gone or restarted, it takes the store for one another process
// checkpointed behind its back and uploads the whole database again as a
// level-0 snapshot (4.2 MB at each wake of a 5.4 MB store, 3 Dec 2026).
// MoveStore's TRUNCATE fold, then SQLite's removal of the WAL at close,
// left it nothing to resume from.
//
// So a hibernation folds the WAL with a FULL checkpoint, which copies
// every frame into the database without touching the WAL file, keeps that
// file under a name SQLite never reads as a WAL (the parked store's name
// with ".wal", not "-wal"), with a record of the database file it was
// folded into, and the wake puts it back as the store's WAL only beside
// that same database file, unchanged since (the same inode, size and
// modification time, as the WAL's): every frame of it is then in the
// database already, so SQLite replaying it changes nothing, and
// Litestream resumes at its position. Anything else (the record missing
// or not matching, the WAL's name still taken, a crash between steps)
// drops the kept WAL: the database holds the whole store regardless, and
// Litestream snapshots as before. MoveStore's invariant holds at every
// step: a WAL with content beside a database lies only beside the
// database it belongs to.
const (
	keptWALSuffix    = ".wal"
	keptRecordSuffix = ".wal.json"
)

// keptWAL identifies a parked database file and the WAL kept for it.
type keptWAL struct {
	DB  fileID `json:"db"`
	WAL fileID `json:"wal"`
}

type fileID struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
}

func statID(path string) (fileID, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileID{}, fmt.Errorf("%s: not a regular file", path)
	}
	return fileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, nil
}

// ParkStore is MoveStore for a hibernation, from the closed store from
// (which nothing holds open any more: Litestream let go of it) to to,
// keeping from's WAL, folded, for WakeStore to put back. It says whether
// it kept one.
func ParkStore(from, to string) (kept bool, err error) {
	if err := removeKeptWAL(to); err != nil {
		return false, err
	}
	wal, tmp := from+"-wal", to+keptWALSuffix+".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	// Linked before the fold: SQLite removes the WAL's name when the
	// fold's connection, the last, closes; the file stays as it is.
	if fi, err := os.Lstat(wal); err == nil && fi.Mode().IsRegular() && fi.Size() >= walHeaderSize {
		if err := os.Link(wal, tmp); err != nil {
			return false, err
		}
	}
	err = moveStore(from, to, "FULL", func() error {
		if _, err := os.Lstat(tmp); err != nil {
			return nil // no WAL to keep
		}
		if _, err := os.Lstat(wal); err == nil {
			// Its name outlived the fold's close: another connection
			// holds the store, and may yet write to that WAL.
			return os.Remove(tmp)
		}
		db, derr := statID(from)
		w, werr := statID(tmp)
		if derr != nil || werr != nil {
			return errors.Join(derr, werr, os.Remove(tmp))
		}
		if err := writeRecord(to+keptRecordSuffix, keptWAL{DB: db, WAL: w}); err != nil {
			return errors.Join(err, os.Remove(tmp))
		}
		if err := os.Rename(tmp, to+keptWALSuffix); err != nil {
			return err
		}
		kept = true
		return crashPoint("kept wal")
	})
	if err != nil {
		// What was kept is of no use to a store not parked.
		return false, errors.Join(err, removeKeptWAL(to), removeMissing(tmp))
	}
	return kept, nil
}

// walHeaderSize is the size of a WAL's header: a WAL no longer has
// nothing in it.
const walHeaderSize = 32

// WakeStore is MoveStore back from a hibernation (from, the parked store,
// to to), putting the WAL ParkStore kept back beside the database when it
// is still that database's (see keptWAL). It says whether it did.
func WakeStore(from, to string) (restored bool, err error) {
	k, ok := readRecord(from + keptRecordSuffix)
	if ok {
		db, derr := statID(from)
		w, werr := statID(from + keptWALSuffix)
		// A WAL of from's own would change the database as it folds.
		_, lerr := os.Lstat(from + "-wal")
		ok = derr == nil && werr == nil && db == k.DB && w == k.WAL && errors.Is(lerr, os.ErrNotExist)
	}
	if err := MoveStore(from, to); err != nil {
		return false, err
	}
	if err := crashPoint("woken"); err != nil {
		return false, err
	}
	if ok {
		// A name already taken is someone's WAL (a process that opened
		// the store in the moment since the rename): left alone.
		if err := os.Link(from+keptWALSuffix, to+"-wal"); err == nil {
			restored = true
			if err := syncDir(filepath.Dir(to)); err != nil {
				return restored, err
			}
		}
	}
	return restored, removeKeptWAL(from)
}

// removeKeptWAL removes the WAL kept for the parked store at parked, and
// its record: the record first, so that a crash between leaves a kept WAL
// no record vouches for, never a record of a missing one.
func removeKeptWAL(parked string) error {
	return errors.Join(removeMissing(parked+keptRecordSuffix), removeMissing(parked+keptWALSuffix))
}

func removeMissing(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func writeRecord(path string, k keptWAL) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readRecord(path string) (keptWAL, bool) {
	var k keptWAL
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &k) != nil {
		return keptWAL{}, false
	}
	return k, true
}
