package fs_test

import (
	"path"
	"strings"
	"syscall"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// nameAPI is how the model test changes names and sizes: the path API
// (*sfs.FS itself) or the inode API the kernel frontend speaks, run over
// the same model so that the two cannot drift apart.
type nameAPI interface {
	Mkdir(name string, perm uint32) error
	Symlink(target, name string) error
	Unlink(name string) error
	Rmdir(name string) error
	Rename2(oldname, newname string, flags uint32) error
	Link(oldname, newname string) error
	Readlink(name string) (string, error)
	Truncate(name string, size int64) error
}

// modelAPIs names each API the model runs over.
var modelAPIs = map[string]func(*sfs.FS) nameAPI{
	"path":  func(f *sfs.FS) nameAPI { return f },
	"inode": func(f *sfs.FS) nameAPI { return inodeAPI{f.Inodes()} },
}

// inodeAPI finds a path's directory by a Lookup per component from the
// root, as the kernel does, then makes the inode call.
type inodeAPI struct{ x sfs.Inodes }

func (a inodeAPI) parent(p string) (uint64, string, error) {
	ino := uint64(sqlstore.Root)
	for name := range strings.SplitSeq(strings.Trim(path.Dir(p), "/"), "/") {
		if name == "" {
			continue
		}
		at, err := a.x.Lookup(ino, name)
		if err != nil {
			return 0, "", err
		}
		ino = at.Ino
	}
	return ino, path.Base(p), nil
}

func (a inodeAPI) node(p string) (uint64, error) {
	dir, name, err := a.parent(p)
	if err != nil {
		return 0, err
	}
	at, err := a.x.Lookup(dir, name)
	return at.Ino, err
}

func (a inodeAPI) mknod(p string, mode uint32, target string) error {
	dir, name, err := a.parent(p)
	if err == nil {
		_, err = a.x.Mknod(dir, name, mode, 0, target)
	}
	return err
}

func (a inodeAPI) Mkdir(p string, perm uint32) error { return a.mknod(p, syscall.S_IFDIR|perm, "") }

func (a inodeAPI) Symlink(target, p string) error {
	return a.mknod(p, syscall.S_IFLNK|0o777, target)
}

func (a inodeAPI) remove(p string, isDir bool) error {
	dir, name, err := a.parent(p)
	if err != nil {
		return err
	}
	return a.x.Remove(dir, name, isDir)
}

func (a inodeAPI) Unlink(p string) error { return a.remove(p, false) }
func (a inodeAPI) Rmdir(p string) error  { return a.remove(p, true) }

func (a inodeAPI) Rename2(from, to string, flags uint32) error {
	dir, name, err := a.parent(from)
	if err != nil {
		return err
	}
	newDir, newName, err := a.parent(to)
	if err != nil {
		return err
	}
	return a.x.Rename(dir, name, newDir, newName, flags)
}

func (a inodeAPI) Link(from, to string) error {
	ino, err := a.node(from)
	if err != nil {
		return err
	}
	dir, name, err := a.parent(to)
	if err != nil {
		return err
	}
	_, err = a.x.Link(ino, dir, name)
	return err
}

func (a inodeAPI) Readlink(p string) (string, error) {
	ino, err := a.node(p)
	if err != nil {
		return "", err
	}
	return a.x.Readlink(ino)
}

func (a inodeAPI) Truncate(p string, size int64) error {
	ino, err := a.node(p)
	if err == nil {
		_, err = a.x.SetAttr(ino, sfs.SetAttr{Size: &size})
	}
	return err
}
