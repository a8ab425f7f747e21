package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/api"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// makeTree writes a host tree with every kind of entry import keeps.
func makeTree(t testing.TB, dir string) {
	t.Helper()
	mt := time.Date(2021, 5, 6, 7, 8, 9, 123456789, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub/deep"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub/exec.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub/deep/data"), []byte(strings.Repeat("d", 300_000)), 0o600))
	must(os.Link(filepath.Join(dir, "sub/deep/data"), filepath.Join(dir, "hard")))
	must(os.Symlink("sub/exec.sh", filepath.Join(dir, "link")))
	must(os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o640))
	for _, p := range []string{"sub/exec.sh", "sub/deep/data", "empty", "sub/deep", "sub"} {
		must(os.Chtimes(filepath.Join(dir, p), mt, mt))
	}
	must(os.Chmod(filepath.Join(dir, "sub/deep"), 0o750))
}

// describe lists a host tree: path, type, mode, size, mtime, link target,
// and which entries share an inode.
func describe(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	inodes := map[uint64]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		line := rel + " " + fi.Mode().String()
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case fi.Mode().IsRegular():
			line += " " + fi.ModTime().UTC().Format(time.RFC3339Nano) + " " + strconv.FormatInt(fi.Size(), 10)
			if first, ok := inodes[st.Ino]; ok {
				line += " =" + first
			}
			inodes[st.Ino] = rel
		case fi.IsDir():
			line += " " + fi.ModTime().UTC().Format(time.RFC3339Nano)
		}
		b.WriteString(line + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestImportExportRoundTrip imports a host tree and exports it again,
// in-process and through an owner, and expects the same tree back.
func TestImportExportRoundTrip(t *testing.T) {
	src := t.TempDir()
	makeTree(t, src)
	want := describe(t, src)
	for _, owner := range []bool{false, true} {
		t.Run(map[bool]string{false: "no owner", true: "owner"}[owner], func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "ws.sqlfs")
			if owner {
				startOwner(t, store)
			}
			if _, stderr, code := sqlfsExec(t, "", "import", "--store", store, src, "proj"); code != 0 || !strings.Contains(stderr, "imported 3 files") {
				t.Fatalf("import: %d %s", code, stderr)
			}
			out := filepath.Join(t.TempDir(), "out")
			if _, stderr, code := sqlfsExec(t, "", "export", "--store", store, "proj", out); code != 0 {
				t.Fatalf("export: %d %s", code, stderr)
			}
			if got := describe(t, out); got != want {
				t.Errorf("round trip changed the tree:\n got:\n%s\nwant:\n%s", got, want)
			}
			// A tar stream on stdout carries the fifo, and reads back in.
			tarOut, _, code := sqlfsExec(t, "", "export", "--store", store, "proj", "-")
			if code != 0 || !strings.Contains(tarOut, "fifo") {
				t.Fatalf("export to stdout: %d", code)
			}
			if _, stderr, code := sqlfsExec(t, tarOut, "import", "--store", store, "-", "again"); code != 0 || !strings.Contains(stderr, "1 special files") {
				t.Errorf("import from stdin: %d %s", code, stderr)
			}
		})
	}
	store := filepath.Join(t.TempDir(), "ws.sqlfs")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"escaping dest", []string{"import", "--store", store, src, "../up"}, "path_escapes_workspace"},
		{"not a dir", []string{"import", "--store", store, filepath.Join(src, "empty")}, "not a directory"},
		{"missing src", []string{"export", "--store", store, "nope", t.TempDir()}, "not_found"},
	} {
		if _, stderr, code := sqlfsExec(t, "", tc.args...); code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: %d %s", tc.name, code, stderr)
		}
	}
}

// BenchmarkImport measures importing a tree of small files straight into
// the store, the path `sqlfs-exec import` takes (compare with `cp -a` into
// a mount in bench/).
func BenchmarkImport(b *testing.B) {
	src := b.TempDir()
	const files = 1000
	var total int64
	for i := range files {
		d := filepath.Join(src, "d"+string(rune('a'+i%20)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		data := []byte(strings.Repeat("x", 4096))
		if err := os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(len(data))
	}
	b.SetBytes(total)
	for b.Loop() {
		b.StopTimer()
		ws, err := openWorkspace(context.Background(), filepath.Join(b.TempDir(), "ws.sqlfs"), workspaceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(tarDir(context.Background(), src, pw)) }()
		st, err := api.Local{S: ws.Tools}.Import(context.Background(), "", pr, tools.ImportOptions{})
		if err != nil || st.Files != files {
			b.Fatal(st, err)
		}
		// Durable, as a finished import must be.
		if err := ws.FS.Sync(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := ws.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// TestImportThroughSymlink: SRC given as a symlink to a directory was
// walked as the symlink itself (one member, "."): nothing was imported and
// the command said "imported 0 files" with exit 0.
func TestImportThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "project")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("project", link); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "ws.sqlfs")
	if _, stderr, code := sqlfsExec(t, "", "import", "--store", store, link); code != 0 || !strings.Contains(stderr, "imported 1 files") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out, _, code := sqlfsExec(t, "", "run", "--store", store, "--", "cat main.go"); code != 0 || out != "package main\n" {
		t.Errorf("main.go in the workspace: %q, exit %d", out, code)
	}
}
