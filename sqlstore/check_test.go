package sqlstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// commitTree stores / (1) holding dir a (2) and file g (5); a holds dir x
// (3); x holds file f (4).
func commitTree(t *testing.T, st *sqlstore.Store) {
	t.Helper()
	dir := func(ino uint64, nlink uint32) sqlstore.Inode {
		return sqlstore.Inode{Ino: ino, Mode: 0o040755, Nlink: nlink}
	}
	file := func(ino uint64) sqlstore.Inode {
		return sqlstore.Inode{Ino: ino, Mode: 0o100644, Nlink: 1, Size: 4}
	}
	err := st.Commit(t.Context(), &sqlstore.Batch{
		Inodes: []sqlstore.Inode{dir(sqlstore.Root, 3), dir(2, 3), dir(3, 2), file(4), file(5)},
		Dentries: []sqlstore.Dentry{
			{Parent: sqlstore.Root, Name: "a", Ino: 2}, {Parent: 2, Name: "x", Ino: 3},
			{Parent: 3, Name: "f", Ino: 4}, {Parent: sqlstore.Root, Name: "g", Ino: 5},
		},
		Chunks: []sqlstore.Chunk{{Ino: 4, Data: []byte("ffff")}, {Ino: 5, Data: []byte("gggg")}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckNamesCorruption(t *testing.T) {
	cases := []struct {
		name    string
		corrupt []string
		want    []string // "kind: detail" substrings, each must be reported
	}{
		{"vanished subtree", []string{`DELETE FROM dentries WHERE ino = 2`,
			`UPDATE inodes SET nlink = 2 WHERE ino = 1`},
			[]string{"unreachable: inode 2 ", "unreachable: inode 3 ", "unreachable: inode 4 "}},
		{"cycle of two directories", []string{`UPDATE dentries SET parent = 3 WHERE ino = 2`,
			`UPDATE inodes SET nlink = 2 WHERE ino = 1`, `UPDATE inodes SET nlink = 3 WHERE ino = 3`},
			[]string{"cycle: directory 2 is its own ancestor", "cycle: directory 3 is its own ancestor", "unreachable: inode 2 "}},
		{"directory inside itself", []string{`INSERT INTO dentries(parent, name, ino) VALUES (3, 'loop', 3)`},
			[]string{"cycle: directory 3 is its own ancestor", "dir-links: directory 3 has 2 names"}},
		{"root named below itself", []string{`INSERT INTO dentries(parent, name, ino) VALUES (3, 'up', 1)`},
			[]string{"root-named: entry 3/up names the root", "cycle: directory 1 "}},
		{"directory with two parents", []string{`INSERT INTO dentries(parent, name, ino) VALUES (1, 'x2', 3)`},
			[]string{"dir-links: directory 3 has 2 names", "dir-nlink: directory 1 has nlink 3, expected 4"}},
		{"directory nlink", []string{`UPDATE inodes SET nlink = 7 WHERE ino = 2`},
			[]string{"dir-nlink: directory 2 has nlink 7, expected 3"}},
		{"file nlink too high", []string{`UPDATE inodes SET nlink = 2 WHERE ino = 4`},
			[]string{"nlink: inode 4 has nlink 2 but 1 names"}},
		{"named file with nlink 0", []string{`UPDATE inodes SET nlink = 0 WHERE ino = 5`},
			[]string{"nlink: inode 5 has nlink 0 but 1 names"}},
		{"nameless file", []string{`DELETE FROM dentries WHERE ino = 5`},
			[]string{"nlink: inode 5 has nlink 1 but 0 names", "unreachable: inode 5 "}},
		{"entry in a file", []string{`INSERT INTO dentries(parent, name, ino) VALUES (5, 'in-file', 4)`},
			[]string{"dangling-parent: entry in-file in missing or non-directory inode 5"}},
		{"xattr of a missing inode", []string{`INSERT INTO xattrs(ino, name, value) VALUES (9, 'user.a', x'00')`},
			[]string{"orphan-xattr: xattr user.a of missing inode 9"}},
		{"chunk longer than a chunk", []string{`UPDATE chunks SET data = zeroblob((SELECT CAST(v AS INTEGER) FROM meta WHERE k = 'chunk_size') + 1) WHERE key = 4 << 24`},
			[]string{"chunk-size: chunk 0 of inode 4 holds"}},
		{"root missing", []string{`DELETE FROM inodes WHERE ino = 1`},
			[]string{"root: root inode 1 is missing"}},
	}
	// Each case also under a checkpoint, whose tree the corrupted rows
	// are too: Check names it in the checkpoint's tree as well.
	for _, checkpointed := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/checkpointed=%v", c.name, checkpointed), func(t *testing.T) {
				st, path := newStore(t)
				commitTree(t, st)
				prefix := ""
				if checkpointed {
					ci, err := st.CommitCheckpoint(t.Context(), &sqlstore.Batch{}, sqlstore.NewCheckpoint{})
					if err != nil {
						t.Fatal(err)
					}
					prefix = fmt.Sprintf("checkpoint %d: ", ci.ID)
				}
				if ps, err := st.Check(t.Context()); err != nil || len(ps) > 0 {
					t.Fatalf("check of the intact tree: %v %v", ps, err)
				}
				execSQL(t, rawDB(t, path), c.corrupt...)
				ps, err := st.Check(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				text := sqlstore.FormatProblems(ps)
				for _, w := range c.want {
					if !strings.Contains(text, w) || !strings.Contains(text, prefix+w) {
						t.Errorf("check missed %q:\n%s", prefix+w, text)
					}
				}
			})
		}
	}
}
