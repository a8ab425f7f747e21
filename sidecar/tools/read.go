package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ReadInput is the read tool's argument.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"file to read, relative to the workspace root or under /workspace"`
	Offset int    `json:"offset,omitempty" jsonschema:"1-based line number to start at; use the next_offset of a previous call to continue"`
	Limit  int    `json:"limit,omitempty" jsonschema:"maximum number of lines to return (default and maximum 2000)"`
}

// ReadOutput is what read returns.
type ReadOutput struct {
	Path       string `json:"path"`
	Content    string `json:"content" jsonschema:"the lines, each prefixed with its line number and a tab"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line" jsonschema:"last line returned; 0 when none"`
	NextOffset int    `json:"next_offset,omitempty" jsonschema:"set when the file continues: pass it as offset to read on"`
	Size       int64  `json:"size" jsonschema:"file size in bytes"`
}

// Text is the result as a model reads it.
func (o ReadOutput) Text() string {
	var b strings.Builder
	b.WriteString(o.Content)
	switch {
	case o.EndLine == 0:
		fmt.Fprintf(&b, "[%s: no lines at offset %d; the file has %d bytes]\n", o.Path, o.StartLine, o.Size)
	case o.NextOffset > 0:
		fmt.Fprintf(&b, "[showing lines %d-%d of %s; more follows: read again with offset=%d]\n", o.StartLine, o.EndLine, o.Path, o.NextOffset)
	}
	return b.String()
}

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8192

// isBinary reports whether a file's first bytes look like binary data: a
// NUL byte or invalid UTF-8 (a rune cut at the end of the sample is fine).
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
		if len(head) < sniffLen {
			return true // not cut by the sample: really invalid
		}
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

func binaryErr(name string, head []byte, size int64) error {
	return toolErr(CodeBinary, nil, "%s is a binary file (%s, %d bytes); read and edit only handle text. Use exec (e.g. `file`, `xxd | head`) to inspect it",
		display(name), http.DetectContentType(head), size)
}

// Read returns numbered lines of a text file.
func (s *Service) Read(ctx context.Context, in ReadInput) (ReadOutput, error) {
	out, err := s.read(ctx, in)
	return out, classify(err)
}

func (s *Service) read(ctx context.Context, in ReadInput) (ReadOutput, error) {
	fsys := s.view("tool:read")
	name, err := resolve(fsys, in.Path, true)
	if err != nil {
		return ReadOutput{}, err
	}
	offset, limit := in.Offset, in.Limit
	if offset < 0 || limit < 0 {
		return ReadOutput{}, toolErr(CodeInvalid, nil, "offset and limit must not be negative")
	}
	if offset == 0 {
		offset = 1
	}
	if limit == 0 || limit > s.opts.MaxReadLines {
		limit = s.opts.MaxReadLines
	}
	fi, err := fsys.Stat(name)
	if err != nil {
		return ReadOutput{}, err
	}
	if fi.IsDir() {
		return ReadOutput{}, toolErr(CodeIsDir, nil, "%s is a directory; use ls to list it", display(name))
	}
	f, err := fsys.Open(name)
	if err != nil {
		return ReadOutput{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	head, err := r.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return ReadOutput{}, err
	}
	if isBinary(head) {
		return ReadOutput{}, binaryErr(name, head, fi.Size())
	}
	out := ReadOutput{Path: display(name), StartLine: offset, Size: fi.Size()}
	var b strings.Builder
	for n := 1; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ReadOutput{}, ctx.Err()
		}
		line, err := r.ReadSlice('\n')
		full := len(line)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer comes in pieces: keep what is
			// shown (the next ReadSlice overwrites it), count the rest.
			line = bytes.Clone(line[:min(len(line), s.opts.MaxLineBytes+utf8.UTFMax)])
			for errors.Is(err, bufio.ErrBufferFull) {
				var more []byte
				more, err = r.ReadSlice('\n')
				full += len(more)
			}
		}
		if full == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				return ReadOutput{}, err
			}
			break
		}
		if n < offset {
			continue
		}
		if n-offset >= limit || b.Len() >= s.opts.MaxReadBytes {
			out.NextOffset = n
			break
		}
		text := strings.TrimRight(string(line), "\r\n")
		fmt.Fprintf(&b, "%6d\t%s\n", n, s.cutLine(text, full-(len(line)-len(text))))
		out.EndLine = n
		if err != nil {
			break
		}
	}
	out.Content = b.String()
	return out, nil
}
