package sqlstore_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/sqlstore"
)

// rawDB opens the store file behind the store's back.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func execSQL(t *testing.T, db *sql.DB, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// readBoth reads chunk 0 of ino both ways the store offers.
func readBoth(t *testing.T, st *sqlstore.Store, ino uint64) (one, many []byte, errOne, errMany error) {
	t.Helper()
	one, errOne = st.ReadChunk(t.Context(), ino, 0)
	errMany = st.ReadChunks(t.Context(), ino, 0, 10, func(idx int64, data []byte) { many = data })
	return
}

func TestChecksumMismatch(t *testing.T) {
	cases := []struct {
		name, corrupt string
	}{
		{"byte flipped", `UPDATE chunks SET data = CAST(replace(CAST(data AS TEXT), 'secret', 'sEcret') AS BLOB) WHERE key = 2 << 24`},
		{"data truncated", `UPDATE chunks SET data = substr(data, 1, 3) WHERE key = 2 << 24`},
		{"checksum changed", `UPDATE chunks SET crc = crc + 1 WHERE key = 2 << 24`},
		{"written without a checksum", `INSERT OR REPLACE INTO chunks(key, data) VALUES (2 << 24, CAST('secret' AS BLOB))`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, path := newStore(t)
			commitFile(t, st, 2, "secret")
			commitFile(t, st, 3, "intact")
			if one, many, e1, e2 := readBoth(t, st, 2); e1 != nil || e2 != nil || string(one) != "secret" || string(many) != "secret" {
				t.Fatalf("before corruption: %q %q %v %v", one, many, e1, e2)
			}
			execSQL(t, rawDB(t, path), c.corrupt)
			one, many, e1, e2 := readBoth(t, st, 2)
			for _, err := range []error{e1, e2} {
				var ce *sqlstore.ChecksumError
				if !errors.Is(err, sqlstore.ErrChecksum) || !errors.As(err, &ce) || ce.Ino != 2 || ce.Index != 0 {
					t.Errorf("read of the corrupt chunk: %v, want *ChecksumError{2, 0}", err)
				}
			}
			if one != nil || many != nil {
				t.Errorf("corrupt data handed out: %q %q", one, many)
			}
			if d, err := st.ReadChunk(t.Context(), 3, 0); err != nil || string(d) != "intact" {
				t.Errorf("other file: %q %v", d, err)
			}
			ps, err := st.Check(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			text := sqlstore.FormatProblems(ps)
			if !strings.Contains(text, "checksum: chunk 0 of inode 2") || strings.Contains(text, "inode 3") {
				t.Fatalf("check:\n%s", text)
			}
		})
	}
}

// TestMigrateV1 opens a store as schema 1 left it: every chunk gets its
// checksum, and reads verify them.
func TestMigrateV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db := rawDB(t, path)
	execSQL(t, db, sqlstore.SchemaV1,
		`INSERT INTO meta(k, v) VALUES ('schema_version', '1'), ('chunk_size', '131072')`,
		`INSERT INTO inodes VALUES (1, 16877, 0, 0, 2, 0, 0, 0, 0, 0, NULL)`,
		fmt.Sprintf("PRAGMA application_id=%d", 0x73716c66))
	var want [][]byte
	for i := range 200 {
		data := bytes.Repeat([]byte{byte(i)}, 1000+i)
		want = append(want, data)
		execSQL(t, db, fmt.Sprintf(`INSERT INTO inodes VALUES (%d, 33188, 0, 0, 1, %d, 0, 0, 0, 0, NULL)`, i+2, len(data)),
			fmt.Sprintf(`INSERT INTO dentries VALUES (1, 'f%d', %d)`, i, i+2))
		if _, err := db.Exec(`INSERT INTO chunks(key, data) VALUES (?, ?)`, int64(i+2)<<24, data); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st, err := sqlstore.Open(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, w := range want {
		if got, err := st.ReadChunk(t.Context(), uint64(i+2), 0); err != nil || !bytes.Equal(got, w) {
			t.Fatalf("inode %d after migration: %d bytes, %v", i+2, len(got), err)
		}
	}
	if ps, err := st.Check(t.Context()); err != nil || len(ps) > 0 {
		t.Fatalf("check after migration: %v %v", ps, err)
	}
}

// BenchmarkMigrateV1 times opening a schema-1 store of 1 GiB (8192 chunks
// of 128 KiB), which computes every chunk's checksum. Run with
// -benchtime=1x: each round builds the store anew.
func BenchmarkMigrateV1(b *testing.B) {
	const chunks, size = 8192, 128 << 10
	for range b.N {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "v1.db")
		db, err := sql.Open("sqlite3", path)
		if err != nil {
			b.Fatal(err)
		}
		tx, _ := db.Begin()
		for _, q := range []string{sqlstore.SchemaV1,
			`INSERT INTO meta(k, v) VALUES ('schema_version', '1'), ('chunk_size', '131072')`,
			`INSERT INTO inodes VALUES (1, 16877, 0, 0, 2, 0, 0, 0, 0, 0, NULL)`,
			fmt.Sprintf(`INSERT INTO inodes VALUES (2, 33188, 0, 0, 1, %d, 0, 0, 0, 0, NULL)`, chunks*size),
			`INSERT INTO dentries VALUES (1, 'big', 2)`,
			fmt.Sprintf("PRAGMA application_id=%d", 0x73716c66)} {
			if _, err := tx.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		data := make([]byte, size)
		for i := range chunks {
			data[i%size]++
			if _, err := tx.Exec(`INSERT INTO chunks(key, data) VALUES (?, ?)`, int64(2)<<24|int64(i), data); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		db.Close()
		b.StartTimer()
		st, err := sqlstore.Open(b.Context(), path, sqlstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		st.Close()
	}
	b.SetBytes(chunks * size)
}
