package archive

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// Sanitize copies the tar stream r to w under the rules Extract applies on
// the host: setuid and setgid bits cleared and device nodes refused or
// left out unless special is KeepDevices. A stream someone extracts as root
// (GNU tar then restores modes, owners and device nodes) thus gives no
// privilege a directory export would not. Refused members are reported
// to warn as *MemberError and returned joined at the end; the rest of the
// stream is copied.
func Sanitize(ctx context.Context, r io.Reader, w io.Writer, special Special, warn func(error)) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	var refused []error
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		if special != KeepDevices {
			h.Mode &^= syscall.S_ISUID | syscall.S_ISGID
			if h.Typeflag == tar.TypeChar || h.Typeflag == tar.TypeBlock {
				merr := &MemberError{Name: h.Name, Err: deviceRule(special)}
				if warn != nil {
					warn(merr)
				}
				if special == RefuseDevices {
					refused = append(refused, merr)
				}
				continue
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return errors.Join(refused...)
}
