package api

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// checkUTF8JSON refuses a JSON text whose strings are not valid UTF-8:
// raw invalid bytes, or \u escapes of unpaired surrogates. encoding/json
// would silently turn both into U+FFFD, and a path or file content would
// then differ from what the client sent.
func checkUTF8JSON(b []byte) error {
	if !utf8.Valid(b) {
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return apiErr(codeBadJSON, "invalid UTF-8 at byte %d of the JSON body (binary data must be base64-encoded)", i)
			}
			i += n
		}
	}
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] != 'u' {
			i++ // \\, \" and the like: skip the escaped byte
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok || !utf16.IsSurrogate(r) {
			continue
		}
		if r < 0xdc00 && i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
			if r2, ok := hex4(b, i+8); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
				i += 11
				continue
			}
		}
		return apiErr(codeBadJSON, "unpaired UTF-16 surrogate %s at byte %d of the JSON body: not valid UTF-8", b[i:i+6], i)
	}
	return nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(v), err == nil
}

// checkUTF8Query refuses a query parameter (name or value) that is not
// valid UTF-8 once percent-decoded.
func checkUTF8Query(q url.Values) error {
	for k, vs := range q {
		if !utf8.ValidString(k) {
			return apiErr(tools.CodeInvalid, "query parameter name %q is not valid UTF-8", k)
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return apiErr(tools.CodeInvalid, "query parameter %s: %q is not valid UTF-8", k, v)
			}
		}
	}
	return nil
}

// AuditPathPrefix turns a path filter into the workspace path the audit
// records. Tool paths ("src", "/workspace/src") and the paths `log`
// prints ("/src") all mean "/src".
func AuditPathPrefix(p string) (string, error) {
	name, err := tools.Clean(p)
	if err != nil && strings.HasPrefix(p, "/") && !strings.ContainsRune(p, 0) {
		return path.Clean(p), nil
	}
	if err != nil {
		return "", fmt.Errorf("path prefix: %w", err)
	}
	return name, nil
}
