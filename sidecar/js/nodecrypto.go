package js

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"io"
	"sort"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
)

// The Go halves of node:crypto and node:zlib; lib/crypto.js and
// lib/zlib.js build Node's API over them.

// hashes are the digests createHash and createHmac know, by Node's names.
var hashes = map[string]func() hash.Hash{
	"md5":        md5.New,
	"sha1":       sha1.New,
	"sha224":     sha256.New224,
	"sha256":     sha256.New,
	"sha384":     sha512.New384,
	"sha512":     sha512.New,
	"sha512-224": sha512.New512_224,
	"sha512-256": sha512.New512_256,
	"sha3-224":   func() hash.Hash { return sha3.New224() },
	"sha3-256":   func() hash.Hash { return sha3.New256() },
	"sha3-384":   func() hash.Hash { return sha3.New384() },
	"sha3-512":   func() hash.Hash { return sha3.New512() },
}

func hashNames() []string {
	out := make([]string, 0, len(hashes))
	for n := range hashes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (v *vm) cryptoNatives() map[string]any {
	return map[string]any{
		"hashes": hashNames,
		// hash starts a digest (an HMAC with a key); nil for an unknown
		// algorithm, which the library reports in Node's words.
		"hash": func(alg string, key goja.Value) any {
			newHash := hashes[strings.ToLower(alg)]
			if newHash == nil {
				return nil
			}
			if key == nil || goja.IsUndefined(key) || goja.IsNull(key) {
				return newHash()
			}
			return hmac.New(newHash, v.bytesOf(key))
		},
		"update": func(h hash.Hash, data goja.Value) { h.Write(v.bytesOf(data)) },
		"digest": func(h hash.Hash) goja.Value { return buffer.WrapBytes(v.rt, h.Sum(nil)) },
		"randomFill": func(data goja.Value) {
			if _, err := rand.Read(v.bytesOf(data)); err != nil {
				panic(v.rt.NewGoError(err))
			}
		},
		"timingSafeEqual": func(a, b goja.Value) bool { return subtle.ConstantTimeCompare(v.bytesOf(a), v.bytesOf(b)) == 1 },
		"zlib":            v.zlib,
		"zlibStream":      v.zlibStream,
	}
}

// zlib compresses or decompresses data whole, as Node's *Sync calls do.
// A failure throws Node's zlib error (code Z_DATA_ERROR, Z_BUF_ERROR);
// syncFlush (finishFlush: Z_SYNC_FLUSH) accepts input cut short, giving
// what it decodes to.
func (v *vm) zlib(op string, data goja.Value, level int, syncFlush bool) goja.Value {
	in := v.bytesOf(data)
	var out bytes.Buffer
	var err error
	switch op {
	case "gzip", "deflate", "deflateRaw":
		var w io.WriteCloser
		switch op {
		case "gzip":
			w, err = gzip.NewWriterLevel(&out, level)
		case "deflate":
			w, err = zlib.NewWriterLevel(&out, level)
		default:
			w, err = flate.NewWriter(&out, level)
		}
		if err == nil {
			if _, err = w.Write(in); err == nil {
				err = w.Close()
			}
		}
	case "gunzip", "inflate", "inflateRaw", "unzip":
		var r io.Reader
		src := bytes.NewReader(in)
		if op == "unzip" {
			op = "inflate"
			if len(in) >= 2 && in[0] == 0x1f && in[1] == 0x8b {
				op = "gunzip"
			}
		}
		// The header first, as zlib checks it before wanting more input.
		switch {
		case op == "gunzip" && (len(in) < 2 || in[0] != 0x1f || in[1] != 0x8b):
			panic(v.zlibError(gzip.ErrHeader))
		case op == "inflate" && len(in) >= 2 && (in[0]&0x0f != 8 || (uint(in[0])<<8|uint(in[1]))%31 != 0):
			panic(v.zlibError(zlib.ErrHeader))
		}
		switch op {
		case "gunzip":
			r, err = gzip.NewReader(src)
		case "inflate":
			r, err = zlib.NewReader(src)
		default:
			r = flate.NewReader(src)
		}
		if err == nil {
			// No more than Node's buffer limit: a bomb stops there.
			var n int64
			n, err = out.ReadFrom(io.LimitReader(r, maxReadFile+1))
			if err == nil && n > maxReadFile {
				err = errZlibTooLarge
			}
			if syncFlush && errors.Is(err, io.ErrUnexpectedEOF) {
				err = nil
			}
		}
	default:
		panic(v.rt.NewTypeError("zlib: unknown operation " + op))
	}
	if err != nil {
		panic(v.zlibError(err))
	}
	return buffer.WrapBytes(v.rt, out.Bytes())
}

var errZlibTooLarge = errors.New("Cannot create a Buffer larger than 2147483647 bytes")

// zlibError is the error Node's zlib binding throws for err.
func (v *vm) zlibError(err error) *goja.Object {
	msg, code, errno := "invalid stored block lengths", "Z_DATA_ERROR", -3
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, gzip.ErrHeader) || errors.Is(err, zlib.ErrHeader):
		msg = "incorrect header check"
	case errors.Is(err, gzip.ErrChecksum) || errors.Is(err, zlib.ErrChecksum):
		msg = "incorrect data check"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		msg, code, errno = "unexpected end of file", "Z_BUF_ERROR", -5
	case errors.As(err, &corrupt):
		msg = "invalid block type"
	case errors.Is(err, errZlibTooLarge):
		e, _ := v.rt.New(v.rt.Get("RangeError"), v.rt.ToValue(err.Error()))
		_ = e.Set("code", "ERR_BUFFER_TOO_LARGE")
		return e
	default:
		msg = fmt.Sprint(err)
	}
	e, _ := v.rt.New(v.rt.Get("Error"), v.rt.ToValue(msg))
	_ = e.Set("errno", errno)
	_ = e.Set("code", code)
	return e
}
