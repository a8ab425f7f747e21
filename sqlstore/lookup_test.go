package sqlstore_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// totalsAgree fails the test when Check finds the totals off, and returns
// what OpenState reads of them.
func totalsAgree(t *testing.T, st *sqlstore.Store, when string) sqlstore.Totals {
	t.Helper()
	ps, err := st.Check(t.Context())
	if err != nil || len(ps) > 0 {
		t.Fatalf("%s: check: %v\n%s", when, err, sqlstore.FormatProblems(ps))
	}
	os, err := st.OpenState(t.Context())
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	return os.Totals
}

// TestTotalsFollowEveryChange: the totals keep up with a commit's inserts,
// its upserts of rows that exist and its deletes, a restore moving rows
// back from history, and a fork's trim; Check reports totals that drifted.
func TestTotalsFollowEveryChange(t *testing.T) {
	st, path := newStore(t)
	if got := totalsAgree(t, st, "new store"); got != (sqlstore.Totals{Inodes: 1}) {
		t.Fatalf("new store totals %+v, want the root only", got)
	}
	commitTree(t, st) // root, a, a/x, a/x/f (4 bytes), g (4 bytes)
	if got := totalsAgree(t, st, "tree"); got != (sqlstore.Totals{Inodes: 5, Bytes: 8}) {
		t.Fatalf("tree totals %+v, want 5 inodes of 8 bytes", got)
	}
	ci, err := st.CommitCheckpoint(t.Context(), &sqlstore.Batch{}, sqlstore.NewCheckpoint{})
	if err != nil {
		t.Fatal(err)
	}
	// g grows to 100 bytes (a replace), f goes, a file of 7 bytes comes.
	err = st.Commit(t.Context(), &sqlstore.Batch{
		Inodes: []sqlstore.Inode{
			{Ino: 5, Mode: 0o100644, Nlink: 1, Size: 100}, {Ino: 3, Mode: 0o040755, Nlink: 2},
			{Ino: 6, Mode: 0o100644, Nlink: 1, Size: 7},
		},
		DeleteInodes:   []uint64{4},
		DeleteDentries: []sqlstore.Dentry{{Parent: 3, Name: "f"}},
		Dentries:       []sqlstore.Dentry{{Parent: sqlstore.Root, Name: "h", Ino: 6}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := totalsAgree(t, st, "changed"); got != (sqlstore.Totals{Inodes: 5, Bytes: 107}) {
		t.Fatalf("changed totals %+v, want 5 inodes of 107 bytes", got)
	}
	fork := filepath.Join(t.TempDir(), "fork.db")
	if err := st.Fork(t.Context(), ci.Gen, fork); err != nil {
		t.Fatal(err)
	}
	res, err := st.CommitRestore(t.Context(), &sqlstore.Batch{}, strconv.FormatInt(ci.ID, 10), func([]uint64) []uint64 { return nil },
		func(*sqlstore.RestoreResult) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := sqlstore.Totals{Inodes: 5, Bytes: 8}
	if got := totalsAgree(t, st, "restored"); got != want || res.Totals != want {
		t.Fatalf("restored totals %+v (the restore said %+v), want %+v", got, res.Totals, want)
	}
	fst, err := sqlstore.Open(t.Context(), fork, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fst.Close()
	if got := totalsAgree(t, fst, "fork"); got != want {
		t.Fatalf("fork totals %+v, want %+v", got, want)
	}
	execSQL(t, rawDB(t, path), `UPDATE totals SET bytes = bytes + 1`)
	ps, err := st.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if text := sqlstore.FormatProblems(ps); !strings.Contains(text, "totals: the totals say 5 inodes of 9 bytes, the inodes are 5 of 8 bytes") {
		t.Fatalf("check missed the drifted totals:\n%s", text)
	}
}

// TestTotalsAfterMigrationFromV5: a store of schema 5, whose totals
// triggers kept, has the same totals after the migration drops them, and
// its commits count once (a trigger left behind would count them again).
func TestTotalsAfterMigrationFromV5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v5.db")
	db := rawDB(t, path)
	execSQL(t, db, sqlstore.SchemaUpTo(5),
		`INSERT INTO meta(k, v) VALUES ('schema_version', '5'), ('chunk_size', '131072')`,
		`INSERT INTO inodes(ino, mode, uid, gid, nlink, size, atime_ns, mtime_ns, ctime_ns) VALUES
			(1, 16877, 0, 0, 3, 0, 0, 0, 0), (2, 16877, 0, 0, 2, 4096, 0, 0, 0),
			(3, 33188, 0, 0, 1, 10, 0, 0, 0), (4, 33188, 0, 0, 1, 20, 0, 0, 0), (5, 41471, 0, 0, 1, 3, 0, 0, 0)`,
		`UPDATE inodes SET size = 30 WHERE ino = 4`,
		`INSERT INTO dentries(parent, name, ino) VALUES (1, 'd', 2), (1, 'f', 3), (2, 'g', 4), (1, 'l', 5)`,
		fmt.Sprintf("PRAGMA application_id=%d", 0x73716c66))
	db.Close()
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := totalsAgree(t, st, "migrated"); got != (sqlstore.Totals{Inodes: 5, Bytes: 40}) {
		t.Fatalf("migrated totals %+v, want 5 inodes of 40 bytes (regular files only)", got)
	}
	var triggers int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'`).Scan(&triggers); err != nil || triggers != 0 {
		t.Fatalf("%d triggers left after the migration (%v)", triggers, err)
	}
	err = st.Commit(t.Context(), &sqlstore.Batch{
		DeleteInodes:   []uint64{3},
		DeleteDentries: []sqlstore.Dentry{{Parent: 1, Name: "f"}},
		Inodes:         []sqlstore.Inode{{Ino: 4, Mode: 0o100644, Nlink: 1, Size: 5}, {Ino: 6, Mode: 0o100644, Nlink: 1, Size: 7}},
		Dentries:       []sqlstore.Dentry{{Parent: 1, Name: "h", Ino: 6}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := totalsAgree(t, st, "changed"); got != (sqlstore.Totals{Inodes: 5, Bytes: 12}) {
		t.Fatalf("changed totals %+v, want 5 inodes of 12 bytes", got)
	}
}

// TestTotalsOfBatchesThatCancel: a batch that deletes and puts the same
// inode, or puts one twice, leaves the totals of its last put; a commit
// that fails after its batch was applied leaves them as they were.
func TestTotalsOfBatchesThatCancel(t *testing.T) {
	st, _ := newStore(t)
	commitTree(t, st) // 5 inodes of 8 bytes
	err := st.Commit(t.Context(), &sqlstore.Batch{
		DeleteInodes: []uint64{5, 4},
		Inodes: []sqlstore.Inode{
			{Ino: 5, Mode: 0o100644, Nlink: 1, Size: 50}, {Ino: 7, Mode: 0o100644, Nlink: 0, Size: 1},
			{Ino: 7, Mode: 0o100644, Nlink: 0, Size: 2}, {Ino: 5, Mode: 0o100644, Nlink: 1, Size: 60},
		},
		DeleteDentries: []sqlstore.Dentry{{Parent: 3, Name: "f"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := sqlstore.Totals{Inodes: 5, Bytes: 62}
	if got := totalsAgree(t, st, "replaced"); got != want {
		t.Fatalf("totals %+v, want %+v", got, want)
	}
	if _, err := st.CommitCheckpoint(t.Context(), &sqlstore.Batch{}, sqlstore.NewCheckpoint{Name: "one"}); err != nil {
		t.Fatal(err)
	}
	_, err = st.CommitCheckpoint(t.Context(), &sqlstore.Batch{Inodes: []sqlstore.Inode{{Ino: 8, Mode: 0o100644, Size: 9}}},
		sqlstore.NewCheckpoint{Name: "one"})
	if !errors.Is(err, sqlstore.ErrCheckpointExists) {
		t.Fatalf("second checkpoint named one: %v", err)
	}
	if got := totalsAgree(t, st, "failed commit"); got != want {
		t.Fatalf("totals after a failed commit %+v, want %+v", got, want)
	}
}

// TestOpenStateFindsUnlinked: the inodes left without a name are found
// through their index, the root never among them.
func TestOpenStateFindsUnlinked(t *testing.T) {
	st, _ := newStore(t)
	commitTree(t, st)
	err := st.Commit(t.Context(), &sqlstore.Batch{Inodes: []sqlstore.Inode{
		{Ino: 9, Mode: 0o100644, Nlink: 0, Size: 3}, {Ino: 12, Mode: 0o100644, Nlink: 1},
	}, Dentries: []sqlstore.Dentry{{Parent: sqlstore.Root, Name: "k", Ino: 12}}})
	if err != nil {
		t.Fatal(err)
	}
	os, err := st.OpenState(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(os.Unlinked) != 1 || os.Unlinked[0].Ino != 9 || os.Unlinked[0].Size != 3 {
		t.Fatalf("unlinked %+v, want inode 9 of 3 bytes", os.Unlinked)
	}
	if os.MaxIno != 12 || os.Root.Ino != sqlstore.Root || os.Root.Nlink != 3 {
		t.Fatalf("max inode %d, root %+v", os.MaxIno, os.Root)
	}
	ents, _, err := st.ReadDir(t.Context(), sqlstore.Root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"a", "g", "k"}) {
		t.Fatalf("root holds %q", names)
	}
}

// TestLookupQueriesReadNoTableWhole: what opening a store and loading a
// directory run finds its rows through keys and indexes, so its cost does
// not grow with the tree (a SCAN is only of the one-row totals, of the
// index of unlinked inodes, or of a query's JSON list of inodes).
func TestLookupQueriesReadNoTableWhole(t *testing.T) {
	_, path := newStore(t)
	db := rawDB(t, path)
	for what, qs := range sqlstore.LookupQueries {
		for _, q := range qs {
			args := make([]any, strings.Count(q, "?"))
			for i := range args {
				args[i] = 1
			}
			rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatalf("%s: %q: %v", what, q, err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			for _, step := range plan {
				// json_each is the query's own list of keys, not a table.
				if strings.HasPrefix(step, "SCAN") && step != "SCAN totals" && !strings.Contains(step, "INDEX inodes_unlinked") &&
					!strings.HasPrefix(step, "SCAN json_each") {
					t.Errorf("%s: %q reads a table whole: %q", what, q, plan)
				}
			}
		}
	}
}

// TestReadDirXattrs: a directory's listing brings the extended attributes
// of its entries, reading them only when an entry has any (one query
// less for most directories, as a host's wake reads two).
func TestReadDirXattrs(t *testing.T) {
	st, _ := newStore(t)
	commitTree(t, st)
	err := st.Commit(t.Context(), &sqlstore.Batch{Xattrs: []sqlstore.Xattr{
		{Ino: 3, Name: "user.a", Value: []byte("1")}, {Ino: 3, Name: "user.b", Value: []byte("2")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir     uint64
		names   []string
		xattrs  []string
		queries int64
	}{
		{sqlstore.Root, []string{"a", "g"}, nil, 1},
		{2, []string{"x"}, []string{"3 user.a=1", "3 user.b=2"}, 2},
		{3, []string{"f"}, nil, 1},
	} {
		before := st.MetadataReads().Queries
		ents, xs, err := st.ReadDir(t.Context(), c.dir)
		if err != nil {
			t.Fatal(err)
		}
		var names, xattrs []string
		for _, e := range ents {
			names = append(names, e.Name)
		}
		for _, x := range xs {
			xattrs = append(xattrs, fmt.Sprintf("%d %s=%s", x.Ino, x.Name, x.Value))
		}
		slices.Sort(names)
		slices.Sort(xattrs)
		if !slices.Equal(names, c.names) || !slices.Equal(xattrs, c.xattrs) {
			t.Errorf("directory %d: entries %q, xattrs %q; want %q, %q", c.dir, names, xattrs, c.names, c.xattrs)
		}
		if got := st.MetadataReads().Queries - before; got != c.queries {
			t.Errorf("directory %d: %d queries, want %d", c.dir, got, c.queries)
		}
	}
}

// TestReadDirRefusesCorruptRows: an entry naming no inode, or an inode
// column that cannot hold what the core keeps there, is ErrStoreCorrupt,
// not a listing.
func TestReadDirRefusesCorruptRows(t *testing.T) {
	for _, corrupt := range []string{
		`INSERT INTO dentries(parent, name, ino) VALUES (1, 'ghost', 99)`,
		`UPDATE inodes SET mode = -1 WHERE ino = 5`,
		`UPDATE inodes SET uid = 1 << 32 WHERE ino = 5`,
		`UPDATE inodes SET size = 'big' WHERE ino = 5`,
		`UPDATE inodes SET rdev = -2 WHERE ino = 5`,
	} {
		t.Run(corrupt, func(t *testing.T) {
			st, path := newStore(t)
			commitTree(t, st)
			execSQL(t, rawDB(t, path), corrupt)
			if ents, _, err := st.ReadDir(t.Context(), sqlstore.Root); !errors.Is(err, sqlstore.ErrStoreCorrupt) {
				t.Fatalf("ReadDir: %+v, %v; want ErrStoreCorrupt", ents, err)
			}
		})
	}
}
