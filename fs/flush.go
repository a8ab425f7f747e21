package fs

// SetFlusher registers fn, which makes the kernel write back the dirty
// pages it holds for an inode (a mount with the writeback cache). The core
// calls it before a caller other than the kernel opens, stats or truncates
// a regular file, so it reads or changes the data and size the kernel's
// writers last left. fn is called outside every lock: the kernel's WRITEs
// it waits for are served meanwhile. nil removes it.
func (f *FS) SetFlusher(fn func(ino uint64)) {
	f.c.mu.Lock()
	f.c.flush = fn
	f.c.mu.Unlock()
}

// flushKernel has the kernel write back name's dirty pages, when a mount
// may hold some and the caller is not the kernel itself.
func (f *FS) flushKernel(name string, follow bool) {
	if f.who.Kernel {
		return
	}
	c := f.c
	c.mu.Lock()
	fn := c.flush
	var ino uint64
	if fn != nil {
		if n, err := f.lookup("", name, follow); err == nil && n.isRegular() {
			ino = n.ino
		}
	}
	c.mu.Unlock()
	if ino != 0 {
		fn(ino)
	}
}

// Names lists every (directory, name) that links to ino: one for most
// files, each hard link's for the others.
func (x Inodes) Names(ino uint64) []DirName {
	c := x.f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.inodes[ino]
	if n == nil {
		return nil
	}
	if n.nlink <= 1 || n.isDir() {
		if p, name, ok := c.nameOf(n); ok {
			return []DirName{{Dir: p.ino, Name: name}}
		}
		return nil
	}
	var names []DirName
	for _, p := range c.inodes {
		for name, i := range p.children {
			if i == ino {
				names = append(names, DirName{Dir: p.ino, Name: name})
			}
		}
	}
	// The names in directories not loaded yet; on a failed read, those
	// found (the error is logged).
	more, _ := c.namesInStore(ino)
	return append(names, more...)
}

// DirName is one name of an inode: the directory holding it and the name.
type DirName struct {
	Dir  uint64
	Name string
}
