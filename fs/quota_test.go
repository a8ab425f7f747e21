package fs_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	sfs "github.com/sqlfs/sqlfs/fs"
)

// A write that reaches the quota part way must say so: io.Writer and
// io.WriterAt return a non-nil error with any short count, so WriteFile
// never reports a cut file as written.
func TestShortWriteAtQuotaIsAnError(t *testing.T) {
	const quota = 4 << 20
	f, _ := open(t, sfs.Options{Policy: sfs.Policy{QuotaBytes: quota}})
	data := make([]byte, 5<<20)
	if err := f.WriteFile("/whole", data, 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("WriteFile past the quota: %v, want ENOSPC", err)
	}
	must(t, f.Remove("/whole"))

	fl, err := f.OpenFile("/handle", os.O_WRONLY|os.O_CREATE, 0o644)
	must(t, err)
	defer fl.Close()
	for name, write := range map[string]func() (int, error){
		"WriteAt": func() (int, error) { return fl.WriteAt(data, 0) },
		"Write":   func() (int, error) { return fl.Write(data) },
	} {
		n, err := write()
		if n >= len(data) || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s past the quota: n=%d err=%v, want a short count and ENOSPC", name, n, err)
		}
	}
}
