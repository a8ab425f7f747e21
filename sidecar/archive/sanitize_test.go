package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestSanitize: what a root's tar would restore from the stream, per mode;
// a stream that is not tar fails with ErrCorrupt.
func TestSanitize(t *testing.T) {
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	for _, h := range []*tar.Header{
		{Name: "suid", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 2},
		{Name: "dev", Typeflag: tar.TypeBlock, Mode: 0o660, Devmajor: 8},
		{Name: "fifo", Typeflag: tar.TypeFifo, Mode: 0o2644},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("hi"))
		}
	}
	tw.Close()
	for _, tc := range []struct {
		special Special
		want    string // name:mode of each member out
		err     error
	}{
		{RefuseDevices, "suid:755 fifo:644", ErrDevice},
		{SkipDevices, "suid:755 fifo:644", nil},
		{KeepDevices, "suid:4755 dev:660 fifo:2644", nil},
	} {
		var out bytes.Buffer
		var warned int
		err := Sanitize(context.Background(), bytes.NewReader(in.Bytes()), &out, tc.special, func(error) { warned++ })
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("special %d: err %v, want %v", tc.special, err, tc.err)
		}
		var got []string
		tr := tar.NewReader(&out)
		for {
			h, err := tr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			got = append(got, h.Name+":"+strconv.FormatInt(h.Mode, 8))
			if h.Name == "suid" {
				if b, _ := io.ReadAll(tr); string(b) != "hi" {
					t.Errorf("data %q", b)
				}
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("special %d: members %q, want %q", tc.special, got, tc.want)
		}
		if wantWarn := strings.Count(tc.want, "dev") == 0; wantWarn != (warned == 1) {
			t.Errorf("special %d: %d warnings", tc.special, warned)
		}
	}
	err := Sanitize(context.Background(), strings.NewReader(strings.Repeat("not tar ", 200)), io.Discard, RefuseDevices, nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage: %v, want ErrCorrupt", err)
	}
}
