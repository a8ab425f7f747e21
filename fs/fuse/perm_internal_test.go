//go:build linux && !cgofuse

package fuse

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

func TestRequesterMay(t *testing.T) {
	file := func(mode, uid, gid uint32) sfs.Attr {
		return sfs.Attr{Mode: syscall.S_IFREG | mode, Uid: uid, Gid: gid}
	}
	dir := sfs.Attr{Mode: syscall.S_IFDIR | 0o700, Uid: 1}
	cases := []struct {
		name   string
		who    requester
		a      sfs.Attr
		mask   uint32
		want   bool
		asksFS bool // the answer needs the supplementary groups
	}{
		{"owner bits", requester{uid: 5}, file(0o604, 5, 9), mayRead | mayWrite, true, false},
		{"owner bits deny though others allow", requester{uid: 5}, file(0o066, 5, 9), mayRead, false, false},
		{"primary group", requester{uid: 6, gid: 9}, file(0o640, 5, 9), mayRead, true, false},
		{"supplementary group", requester{uid: 6, groups: []uint32{3, 9}, loaded: true}, file(0o640, 5, 9), mayRead, true, true},
		{"not a member", requester{uid: 6, groups: []uint32{3}, loaded: true}, file(0o640, 5, 9), mayRead, false, true},
		{"a member gets the group's bits, not more", requester{uid: 6, groups: []uint32{9}, loaded: true}, file(0o604, 5, 9), mayRead, false, true},
		{"membership unknown (pid 0): the others' bits", requester{uid: 6}, file(0o640, 5, 9), mayRead, false, true},
		{"group and others agree: no lookup", requester{uid: 6}, file(0o644, 5, 9), mayRead, true, false},
		{"root reads anything", requester{}, file(0, 5, 9), mayRead | mayWrite, true, false},
		{"root runs only executables", requester{}, file(0o644, 5, 9), mayExec, false, false},
		{"root searches any directory", requester{}, dir, mayExec, true, false},
		{"others cannot search 0700", requester{uid: 2}, dir, mayExec, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			who := c.who
			if !who.loaded {
				who.pid = 0 // a lookup would find no groups: the answer must not depend on it
			}
			if got := who.may(c.a, c.mask); got != c.want {
				t.Errorf("may(%o, %d) = %v, want %v", c.a.Mode, c.mask, got, c.want)
			}
			if !c.who.loaded && who.loaded != c.asksFS {
				t.Errorf("groups looked up: %v, want %v", who.loaded, c.asksFS)
			}
		})
	}
}

func TestProcGroups(t *testing.T) {
	want, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, g := range procGroups(uint32(os.Getpid())) {
		got = append(got, int(g))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("procGroups = %v, want %v", got, want)
	}
	if g := procGroups(0); g != nil {
		t.Errorf("pid 0 has groups %v", g)
	}
}

// BenchmarkProcGroups is what a check pays when it needs the caller's
// supplementary groups (a FUSE request carries only uid, gid and pid), for
// a small caller such as a shell command.
func BenchmarkProcGroups(b *testing.B) {
	caller := exec.Command("sleep", "600")
	if err := caller.Start(); err != nil {
		b.Skip("no sleep command:", err)
	}
	defer func() {
		caller.Process.Kill()
		caller.Wait()
	}()
	pid := uint32(caller.Process.Pid)
	for b.Loop() {
		procGroups(pid)
	}
}
