package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"unicode/utf8"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
)

// Code classifies a tool failure so the HTTP API can pick a status and a
// model can decide what to do next.
type Code string

// The codes a tool reports.
const (
	CodeInvalid      Code = "invalid_argument"
	CodeNotFound     Code = "not_found"
	CodeExists       Code = "already_exists"
	CodeEscape       Code = "path_escapes_workspace"
	CodeDenied       Code = "permission_denied" // policy: read-only path, EACCES/EPERM/EROFS
	CodeIsDir        Code = "is_a_directory"
	CodeNotDir       Code = "not_a_directory"
	CodeNotEmpty     Code = "directory_not_empty"
	CodeBinary       Code = "binary_file"
	CodeTooLarge     Code = "too_large"
	CodeNameTooLong  Code = "name_too_long" // a path component over NAME_MAX (ENAMETOOLONG)
	CodeNoSpace      Code = "no_space"      // workspace quota
	CodeNoMatch      Code = "edit_no_match"
	CodeAmbiguous    Code = "edit_ambiguous"
	CodeBackend      Code = "unknown_backend"
	CodeCanceled     Code = "canceled"
	CodeInternal     Code = "internal"
	CodeNoExec       Code = "unknown_exec"
	CodeNoPublish    Code = "publishing_unavailable"
	CodeNoCheckpoint Code = "unknown_checkpoint"
	// CodeConflict: undo would overwrite later changes (the message names them).
	CodeConflict Code = "conflict"
	// CodePruned: changes a watcher asked for are no longer in the audit trail.
	CodePruned Code = "changes_pruned"
	// CodeAtCapacity: a bound on concurrent execs is reached; retry later.
	CodeAtCapacity Code = "at_capacity"
)

// Error is a tool failure with a message written for the model.
type Error struct {
	Code Code
	Msg  string
	Err  error // the cause, for errors.Is
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode is the code as a string, for callers that cannot import this
// package (the js backend).
func (e *Error) ErrorCode() string { return string(e.Code) }

func toolErr(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// classify wraps err in an *Error whose code follows the errno or sentinel
// it carries. An *Error passes through unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	code := CodeInternal
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code = CodeCanceled
	case errors.Is(err, sidecar.ErrAtCapacity):
		code = CodeAtCapacity
	case errors.Is(err, ErrEscape):
		code = CodeEscape
	case errors.Is(err, sidecar.ErrUnknownBackend):
		code = CodeBackend
	case errors.Is(err, fs.ErrNotExist):
		code = CodeNotFound
	case errors.Is(err, fs.ErrExist):
		code = CodeExists
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		code = CodeDenied
	case errors.Is(err, syscall.EISDIR):
		code = CodeIsDir
	case errors.Is(err, syscall.ENOTDIR):
		code = CodeNotDir
	case errors.Is(err, syscall.ENOTEMPTY):
		code = CodeNotEmpty
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		code = CodeNoSpace
	case errors.Is(err, syscall.ENAMETOOLONG):
		return &Error{Code: CodeNameTooLong, Msg: nameTooLongMsg(err), Err: err}
	case errors.Is(err, syscall.EFBIG):
		code = CodeTooLarge
	case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ELOOP):
		code = CodeInvalid
	}
	return &Error{Code: code, Msg: pathMsg(err), Err: err}
}

// nameTooLongMsg says which name of an ENAMETOOLONG path is over the
// limit, and the limit: the path's first component over NAME_MAX, or else
// (the only other cause) the target of a symlink being made.
func nameTooLongMsg(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return fmt.Sprintf("%v: a name is over the %d-byte limit on one name (NAME_MAX)", err, sfs.MaxNameLen)
	}
	for c := range strings.SplitSeq(pe.Path, "/") {
		if len(c) > sfs.MaxNameLen {
			shown := c[:32]
			for len(shown) > 0 && !utf8.RuneStart(c[len(shown)]) {
				shown = shown[:len(shown)-1]
			}
			return fmt.Sprintf("%s: the name %q… is %d bytes, over the %d-byte limit on one name of a path (NAME_MAX); shorten it",
				pe.Op, shown, len(c), sfs.MaxNameLen)
		}
	}
	return fmt.Sprintf("%s %s: the symlink's target is over the 4095-byte limit (PATH_MAX)", pe.Op, display(pe.Path))
}

// pathMsg renders a *fs.PathError with the workspace path the model used.
func pathMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, display(pe.Path), pe.Err)
	}
	return err.Error()
}
