package fs_test

import (
	"database/sql"
	"errors"
	"slices"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// libfuse's high-level API once renamed files unlinked while open to
// these names; the core no longer knows them.
const hiddenName = ".fuse_hidden0000000a00000001"

func names(t *testing.T, f *sfs.FS, dir string) []string {
	t.Helper()
	ents, err := f.ReadDir(dir)
	must(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	return out
}

// A name that starts like libfuse's hidden names is an ordinary name:
// listed, in the way of rmdir, and kept across a reopen.
func TestFuseHiddenNamesAreOrdinary(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/d", 0o755))
	must(t, f.WriteFile("/d/"+hiddenName, []byte("mine"), 0o644))
	if got := names(t, f, "/d"); !slices.Equal(got, []string{hiddenName}) {
		t.Fatalf("listing = %q", got)
	}
	if err := f.Rmdir("/d"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("rmdir of a directory holding %s: %v, want ENOTEMPTY", hiddenName, err)
	}
	g := reopen(t, f, store, sfs.Options{})
	if b, err := g.ReadFile("/d/" + hiddenName); err != nil || string(b) != "mine" {
		t.Fatalf("after reopen: %q %v", b, err)
	}
	check(t, g)
}

// A store written before schema 3 may hold libfuse's hidden names of files
// that were open when its owner stopped. The first open under schema 3
// drops those names once (their inodes go with the last name, the data
// with them); a hidden-looking name made afterwards stays.
func TestOldHiddenNamesDroppedOnce(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/d", 0o755))
	must(t, f.WriteFile("/d/"+hiddenName, []byte("orphan data"), 0o644))
	must(t, f.WriteFile("/d/linked", []byte("kept"), 0o644))
	must(t, f.Link("/d/linked", "/d/.fuse_hidden0000000b00000002"))
	must(t, f.Mkdir("/d/.fuse_hiddendir", 0o755)) // libfuse never hid a directory
	must(t, f.Close())

	db, err := sql.Open("sqlite3", store)
	must(t, err)
	must(t, downgradeToV3(db))
	_, err = db.Exec(`UPDATE meta SET v = '2' WHERE k = 'schema_version'`)
	must(t, err)
	must(t, db.Close())

	g, err := sfs.Open(t.Context(), store, sfs.Options{})
	must(t, err)
	t.Cleanup(func() { g.Close() })
	if got := names(t, g, "/d"); !slices.Equal(got, []string{".fuse_hiddendir", "linked"}) {
		t.Fatalf("after migration: %q", got)
	}
	if st, err := g.Stat("/d/linked"); err != nil || st.Nlink != 1 {
		t.Fatalf("the other name of a hard link: %+v %v", st, err)
	}
	// Root, /d, /d/linked, /d/.fuse_hiddendir; the orphan's data is gone.
	if u := g.Usage(); u.Inodes != 4 || u.Bytes != int64(len("kept")) {
		t.Fatalf("usage after migration: %+v", u)
	}
	check(t, g)

	must(t, g.WriteFile("/d/"+hiddenName, []byte("new"), 0o644))
	h := reopen(t, g, store, sfs.Options{})
	if b, err := h.ReadFile("/d/" + hiddenName); err != nil || string(b) != "new" {
		t.Fatalf("a hidden-looking name made after the migration: %q %v", b, err)
	}
}
