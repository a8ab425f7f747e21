package metrics

import (
	"strconv"
	"syscall"
)

// maxErrno bounds the errno table; Linux errnos end at 133 (EHWPOISON).
const maxErrno = 160

// errnoNames maps the errnos a filesystem or exec backend returns to their symbolic names. Aliases
// (EWOULDBLOCK, ENOTSUP, EDEADLOCK) share a number with the first name listed, which wins.
var errnoNames = func() (t [maxErrno]string) {
	for _, e := range []struct {
		no   syscall.Errno
		name string
	}{
		{syscall.EPERM, "EPERM"}, {syscall.ENOENT, "ENOENT"}, {syscall.ESRCH, "ESRCH"},
		{syscall.EINTR, "EINTR"}, {syscall.EIO, "EIO"}, {syscall.ENXIO, "ENXIO"},
		{syscall.E2BIG, "E2BIG"}, {syscall.ENOEXEC, "ENOEXEC"}, {syscall.EBADF, "EBADF"},
		{syscall.ECHILD, "ECHILD"}, {syscall.EAGAIN, "EAGAIN"}, {syscall.ENOMEM, "ENOMEM"},
		{syscall.EACCES, "EACCES"}, {syscall.EFAULT, "EFAULT"}, {syscall.EBUSY, "EBUSY"},
		{syscall.EEXIST, "EEXIST"}, {syscall.EXDEV, "EXDEV"}, {syscall.ENODEV, "ENODEV"},
		{syscall.ENOTDIR, "ENOTDIR"}, {syscall.EISDIR, "EISDIR"}, {syscall.EINVAL, "EINVAL"},
		{syscall.ENFILE, "ENFILE"}, {syscall.EMFILE, "EMFILE"}, {syscall.ENOTTY, "ENOTTY"},
		{syscall.ETXTBSY, "ETXTBSY"}, {syscall.EFBIG, "EFBIG"}, {syscall.ENOSPC, "ENOSPC"},
		{syscall.ESPIPE, "ESPIPE"}, {syscall.EROFS, "EROFS"}, {syscall.EMLINK, "EMLINK"},
		{syscall.EPIPE, "EPIPE"}, {syscall.ERANGE, "ERANGE"}, {syscall.EDEADLK, "EDEADLK"},
		{syscall.ENAMETOOLONG, "ENAMETOOLONG"}, {syscall.ENOLCK, "ENOLCK"},
		{syscall.ENOSYS, "ENOSYS"}, {syscall.ENOTEMPTY, "ENOTEMPTY"}, {syscall.ELOOP, "ELOOP"},
		{syscall.ENODATA, "ENODATA"}, {syscall.EOVERFLOW, "EOVERFLOW"},
		{syscall.EOPNOTSUPP, "EOPNOTSUPP"}, {syscall.ENOTSUP, "ENOTSUP"},
		{syscall.ENOTCONN, "ENOTCONN"}, {syscall.ECONNREFUSED, "ECONNREFUSED"},
		{syscall.ETIMEDOUT, "ETIMEDOUT"}, {syscall.ESTALE, "ESTALE"}, {syscall.EDQUOT, "EDQUOT"},
		{syscall.ECANCELED, "ECANCELED"}, {syscall.EILSEQ, "EILSEQ"},
	} {
		if t[e.no] == "" {
			t[e.no] = e.name
		}
	}
	return t
}()

// ErrnoName returns the symbolic name of errno (either sign), e.g. "ENOENT" for 2 or -2, and
// "errno_N" for numbers outside the table, which keeps the label set bounded by the errno space.
func ErrnoName(errno int) string {
	if errno < 0 {
		errno = -errno
	}
	if errno < maxErrno && errnoNames[errno] != "" {
		return errnoNames[errno]
	}
	return "errno_" + strconv.Itoa(errno)
}
