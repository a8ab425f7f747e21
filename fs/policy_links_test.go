package fs_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// A file hard-linked before the policy applied is as hidden, or as
// read-only, under its other names: pub/h (a name of ro/f) and pub/s (of
// secrets/k) used to write and read what the rules protect. The other
// names can still be removed, and links of unprotected files work.
func TestHardLinkMadeBeforePolicy(t *testing.T) {
	f, store := open(t, sfs.Options{})
	for _, d := range []string{"/ro", "/secrets", "/pub"} {
		must(t, f.Mkdir(d, 0o755))
	}
	must(t, f.WriteFile("/ro/f", []byte("ro"), 0o644))
	must(t, f.WriteFile("/secrets/k", []byte("s3cret"), 0o644))
	must(t, f.WriteFile("/pub/plain", []byte("plain"), 0o644))
	for link, target := range map[string]string{"/pub/h": "/ro/f", "/pub/s": "/secrets/k", "/pub/plain2": "/pub/plain", "/pub/h2": "/ro/f"} {
		must(t, f.Link(target, link))
	}
	f = reopen(t, f, store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"secrets/**"}, ReadOnly: []string{"ro/**"}}})
	x := f.Inodes()
	pub, err := x.Lookup(sqlstore.Root, "pub")
	must(t, err)
	for _, tc := range []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"read a name of a hidden file", errOf(f.ReadFile("/pub/s")), syscall.ENOENT},
		{"stat it", errOf(f.Stat("/pub/s")), syscall.ENOENT},
		{"look it up by inode", errOf(x.Lookup(pub.Ino, "s")), syscall.ENOENT},
		{"link it again", f.Link("/pub/s", "/pub/s3"), syscall.ENOENT},
		{"write a name of a read-only file", f.WriteFile("/pub/h", []byte("w"), 0o644), syscall.EROFS},
		{"open it for writing", errOf(f.OpenFile("/pub/h", os.O_WRONLY, 0)), syscall.EROFS},
		{"chmod it", f.Chmod("/pub/h", 0o600), syscall.EROFS},
		{"truncate it", f.Truncate("/pub/h", 0), syscall.EROFS},
		{"link it again", f.Link("/pub/h", "/pub/h3"), syscall.EROFS},
		{"write it by inode", errOf(writeByInode(x, pub.Ino, "h")), syscall.EROFS},
		{"chmod it by inode", errOf(chmodByInode(x, pub.Ino, "h")), syscall.EROFS},
		{"read a name of a read-only file", errOf(f.ReadFile("/pub/h")), 0},
		{"write a plain link", f.WriteFile("/pub/plain2", []byte("w"), 0o644), 0},
		{"link a plain file", f.Link("/pub/plain", "/pub/plain3"), 0},
		{"remove a name of a read-only file", f.Remove("/pub/h2"), 0},
		{"rename a name of a hidden file", f.Rename("/pub/s", "/pub/s4"), 0},
	} {
		if tc.want == 0 && tc.err != nil || tc.want != 0 && !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if b, err := f.ReadFile("/ro/f"); err != nil || string(b) != "ro" {
		t.Errorf("ro/f: %q %v", b, err)
	}
	if b, err := f.ReadFile("/pub/plain"); err != nil || string(b) != "w" {
		t.Errorf("pub/plain: %q %v", b, err)
	}
}

func writeByInode(x sfs.Inodes, dir uint64, name string) (int, error) {
	a, err := x.Lookup(dir, name)
	if err != nil {
		return 0, err
	}
	return x.WriteAt(a.Ino, []byte("w"), 0, true)
}

func chmodByInode(x sfs.Inodes, dir uint64, name string) (sfs.Attr, error) {
	a, err := x.Lookup(dir, name)
	if err != nil {
		return a, err
	}
	mode := uint32(0o600)
	return x.SetAttr(a.Ino, sfs.SetAttr{Mode: &mode})
}

// A listing leaves out a name of a file hidden under another name, as it
// leaves out hidden names: the kernel takes a READDIRPLUS entry for a
// lookup, and with no open to ask (no_open) reads by inode at once, so a
// listed pub/s was cat-able through the mount though its lookup refused.
func TestHardLinkMadeBeforePolicyListed(t *testing.T) {
	f, store := open(t, sfs.Options{})
	must(t, f.Mkdir("/secrets", 0o755))
	must(t, f.Mkdir("/pub", 0o755))
	must(t, f.WriteFile("/secrets/k", []byte("s3cret"), 0o644))
	must(t, f.WriteFile("/pub/plain", []byte("plain"), 0o644))
	must(t, f.Link("/secrets/k", "/pub/s"))
	must(t, f.Link("/pub/plain", "/pub/plain2"))
	f = reopen(t, f, store, sfs.Options{Policy: sfs.Policy{Hidden: []string{"secrets/**"}}})
	x := f.Inodes()
	pub, err := x.Lookup(sqlstore.Root, "pub")
	must(t, err)
	ents, _, err := x.ReadDir(pub.Ino, 0, 100)
	must(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name)
		if e.Name == "s" {
			b := make([]byte, 16)
			n, _ := x.ReadAt(e.Ino, b, 0)
			t.Errorf("pub/s listed by inode, and its inode read: %q", b[:n])
		}
	}
	if len(names) != 2 {
		t.Errorf("pub lists %v, want plain and plain2", names)
	}
	des, err := f.ReadDir("/pub")
	must(t, err)
	for _, d := range des {
		if d.Name == "s" {
			t.Errorf("pub/s listed by path")
		}
	}
}
