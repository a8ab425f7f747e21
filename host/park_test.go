package host

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// walHeader is the first 32 bytes of store's WAL (salts included), nil
// without one.
func walHeader(t *testing.T, store string) []byte {
	t.Helper()
	b, err := os.ReadFile(store + "-wal")
	if errors.Is(err, os.ErrNotExist) || len(b) < walHeaderSize {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b[:walHeaderSize]
}

// TestParkStoreKeepsWAL parks a store whose WAL holds commits and wakes
// it: the WAL comes back as it was (Litestream resumes from it instead of
// uploading the whole store) only beside the very database it was folded
// into; whatever happened in between, the store holds every commit.
func TestParkStoreKeepsWAL(t *testing.T) {
	const want = "committed before the park\n"
	tests := []struct {
		name string
		// between runs while the store is parked.
		between     func(t *testing.T, parked string)
		hold        bool // a reader holds the store through the park
		kept, woken bool
		notes       string
	}{
		{name: "kept and put back", kept: true, woken: true, notes: want},
		{name: "a reader holds the store", hold: true, notes: want},
		{name: "the parked database written", kept: true, notes: "changed while parked\n",
			between: func(t *testing.T, parked string) {
				f, err := sfs.Open(context.Background(), parked, sfs.Options{ExternalWALCheckpoints: true})
				if err != nil {
					t.Fatal(err)
				}
				if err := f.WriteFile("/notes.txt", []byte("changed while parked\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				// Its own WAL folded and gone: only the record can tell.
				if err := MoveStore(parked, parked+".tmp"); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(parked+".tmp", parked); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "another database in its place", kept: true, notes: want,
			between: func(t *testing.T, parked string) {
				copyFile(t, parked, parked+".copy")
				if err := os.Rename(parked+".copy", parked); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the record lost", kept: true, notes: want,
			between: func(t *testing.T, parked string) {
				if err := os.Remove(parked + keptRecordSuffix); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the kept WAL written", kept: true, notes: want,
			between: func(t *testing.T, parked string) {
				f, err := os.OpenFile(parked+keptWALSuffix, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(make([]byte, 100))
				f.Close()
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store, parked := filepath.Join(dir, StoreName), filepath.Join(dir, ParkedName)
			crashImage(t, store, want)
			header := walHeader(t, store)
			release := func() {}
			if tt.hold {
				release = holdRead(t, store)
			}
			kept, err := ParkStore(store, parked)
			release()
			if err != nil {
				t.Fatal(err)
			}
			if kept != tt.kept {
				t.Fatalf("ParkStore kept the WAL: %v, want %v", kept, tt.kept)
			}
			if _, err := os.Lstat(parked + "-wal"); err == nil {
				t.Fatal("the parked store has a WAL SQLite reads")
			}
			if tt.between != nil {
				tt.between(t, parked)
			}
			woken, err := WakeStore(parked, store)
			if err != nil {
				t.Fatal(err)
			}
			if woken != tt.woken {
				t.Fatalf("WakeStore put the WAL back: %v, want %v", woken, tt.woken)
			}
			if tt.woken && !bytes.Equal(walHeader(t, store), header) {
				t.Fatalf("the WAL put back has header %x, want the parked one's %x", walHeader(t, store), header)
			}
			if ents, _ := filepath.Glob(parked + keptWALSuffix + "*"); len(ents) > 0 {
				t.Fatalf("the wake left %v", ents)
			}
			if got := notes(t, store); got != tt.notes {
				t.Fatalf("notes.txt holds %q, want %q", got, tt.notes)
			}
		})
	}
}

// TestParkStoreCrash cuts a park and a wake at each step, then takes the
// path the next start takes: every commit is in the store it opens, and
// no WAL with content lies where SQLite would read it without its
// database.
func TestParkStoreCrash(t *testing.T) {
	const want = "committed before the park\n"
	for _, step := range []string{"folded", "kept wal", "cleared", "removed", "emptied", "moved", "woken"} {
		for _, cut := range []string{"park", "wake"} {
			t.Run(cut+" cut after "+step, func(t *testing.T) {
				dir := t.TempDir()
				store, parked := filepath.Join(dir, StoreName), filepath.Join(dir, ParkedName)
				crashImage(t, store, want)
				if cut == "park" {
					crashAt(t, step)
				}
				_, err := ParkStore(store, parked)
				noCrash()
				if err != nil && !errors.Is(err, errCrash) {
					t.Fatal(err)
				}
				if cut == "wake" {
					if err != nil {
						t.Fatalf("park: %v", err)
					}
					crashAt(t, step)
					_, err = WakeStore(parked, store)
					noCrash()
					if err != nil && !errors.Is(err, errCrash) {
						t.Fatal(err)
					}
				}
				for _, p := range []string{store, parked} {
					if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
						if fi, err := os.Lstat(p + "-wal"); err == nil && fi.Size() > 0 {
							t.Fatalf("%s-wal holds %d bytes, without its database", filepath.Base(p), fi.Size())
						}
					}
				}
				// The next request wakes a parked store without one in place.
				if _, err := os.Lstat(parked); err == nil {
					if _, err := os.Lstat(store); err == nil {
						t.Fatalf("both %s and %s exist", StoreName, ParkedName)
					}
					if _, err := WakeStore(parked, store); err != nil {
						t.Fatal(err)
					}
				}
				if got := notes(t, store); got != want {
					t.Fatalf("notes.txt holds %q, want %q", got, want)
				}
				// And parks and wakes again as ever.
				if _, err := ParkStore(store, parked); err != nil {
					t.Fatal(err)
				}
				if _, err := WakeStore(parked, store); err != nil {
					t.Fatal(err)
				}
				if got := notes(t, store); got != want {
					t.Fatalf("after another park and wake, notes.txt holds %q, want %q", got, want)
				}
			})
		}
	}
}
