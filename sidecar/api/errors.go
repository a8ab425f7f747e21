package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// API-level error codes, next to the tools' own.
const (
	codeBadJSON      tools.Code = "invalid_json"
	codeUnauthorized tools.Code = "unauthorized"
	codeUnknownTool  tools.Code = "unknown_tool"
	codeNoRoute      tools.Code = "no_such_endpoint"
	codeMethod       tools.Code = "method_not_allowed"
)

// ErrorBody is the JSON of every error response: {"error": {...}}.
type ErrorBody struct {
	Code    tools.Code `json:"code"`
	Message string     `json:"message"`
}

var statusOf = map[tools.Code]int{
	tools.CodeInvalid:      http.StatusBadRequest,
	codeBadJSON:            http.StatusBadRequest,
	tools.CodeBackend:      http.StatusBadRequest,
	tools.CodeNameTooLong:  http.StatusBadRequest,
	tools.CodeNotFound:     http.StatusNotFound,
	tools.CodeNoExec:       http.StatusNotFound,
	codeUnknownTool:        http.StatusNotFound,
	codeNoRoute:            http.StatusNotFound,
	codeMethod:             http.StatusMethodNotAllowed,
	tools.CodeEscape:       http.StatusForbidden,
	tools.CodeDenied:       http.StatusForbidden,
	codeUnauthorized:       http.StatusUnauthorized,
	tools.CodeExists:       http.StatusConflict,
	tools.CodeIsDir:        http.StatusConflict,
	tools.CodeNotDir:       http.StatusConflict,
	tools.CodeNotEmpty:     http.StatusConflict,
	tools.CodeConflict:     http.StatusConflict,
	tools.CodePruned:       http.StatusGone,
	tools.CodeNoCheckpoint: http.StatusNotFound,
	tools.CodeNoMatch:      http.StatusUnprocessableEntity,
	tools.CodeAmbiguous:    http.StatusUnprocessableEntity,
	tools.CodeBinary:       http.StatusUnsupportedMediaType,
	tools.CodeTooLarge:     http.StatusRequestEntityTooLarge,
	tools.CodeNoSpace:      http.StatusInsufficientStorage,
	tools.CodeCanceled:     http.StatusServiceUnavailable,
	tools.CodeNoPublish:    http.StatusServiceUnavailable,
	tools.CodeAtCapacity:   http.StatusTooManyRequests,
}

// ErrorOf turns any error into its JSON body and HTTP status.
func ErrorOf(err error) (ErrorBody, int) {
	var te *tools.Error
	if !errors.As(err, &te) {
		te = &tools.Error{Code: tools.CodeInternal, Msg: err.Error()}
	}
	st, ok := statusOf[te.Code]
	if !ok {
		st = http.StatusInternalServerError
	}
	return ErrorBody{Code: te.Code, Message: te.Msg}, st
}

func WriteError(w http.ResponseWriter, err error) {
	b, st := ErrorOf(err)
	if b.Code == tools.CodeAtCapacity {
		w.Header().Set("Retry-After", "1")
	}
	WriteJSON(w, st, map[string]ErrorBody{"error": b})
}

func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do
}

func apiErr(code tools.Code, format string, args ...any) *tools.Error {
	return &tools.Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// DecodeStrict decodes exactly one JSON value into v: unknown fields,
// trailing data, an empty body and an oversized one are all errors.
func DecodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErr(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return jsonErr(err)
		}
		return apiErr(codeBadJSON, "invalid JSON: unexpected data after the object")
	}
	return nil
}

func jsonErr(err error) error {
	var (
		maxErr  *http.MaxBytesError
		synErr  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &maxErr):
		return apiErr(tools.CodeTooLarge, "request body over the %d-byte limit", maxErr.Limit)
	case errors.Is(err, io.EOF):
		return apiErr(codeBadJSON, "empty request body: expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apiErr(codeBadJSON, "invalid JSON: unexpected end of input")
	case errors.As(err, &synErr):
		return apiErr(codeBadJSON, "invalid JSON at byte %d: %v", synErr.Offset, err)
	case errors.As(err, &typeErr):
		return apiErr(codeBadJSON, "field %q: got JSON %s, want %s", typeErr.Field, typeErr.Value, typeErr.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for DisallowUnknownFields.
		return apiErr(codeBadJSON, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return apiErr(codeBadJSON, "invalid JSON: %v", err)
}
