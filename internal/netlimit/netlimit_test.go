package netlimit

import (
	"strings"
	"syscall"
	"testing"
)

func TestCheckFiles(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != lim.Max {
		t.Errorf("soft file limit %d, hard %d: the Go runtime raises the soft one at start", lim.Cur, lim.Max)
	}
	room := int(lim.Cur) - Reserve
	for _, tc := range []struct {
		caps []int
		err  string
	}{
		{[]int{room / 2, room / 2}, ""},
		{[]int{room, 1}, "exceed the file limit"},
		{[]int{0}, "must be positive"},
	} {
		err := CheckFiles(tc.caps...)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckFiles(%v) = %v, want %q", tc.caps, err, tc.err)
		}
	}
}
