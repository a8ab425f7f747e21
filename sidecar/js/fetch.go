package js

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
)

// maxFetchBody caps a fetched body held in memory.
const maxFetchBody = 64 << 20

// fetch is the native behind the fetch global when the exec allows the
// network: one blocking HTTP request under the exec's context.
func (v *vm) fetch(url, method string, headers [][]string, body goja.Value) map[string]any {
	req, err := http.NewRequestWithContext(v.ctx, method, url, bytes.NewReader(v.bytesOf(body)))
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	for _, h := range headers {
		if len(h) == 2 {
			req.Header.Add(h[0], h[1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBody+1))
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	if len(data) > maxFetchBody {
		panic(v.rt.NewGoError(fmt.Errorf("response body over %d bytes", maxFetchBody)))
	}
	var hdrs [][]string
	for k, vals := range resp.Header {
		hdrs = append(hdrs, []string{strings.ToLower(k), strings.Join(vals, ", ")})
	}
	return map[string]any{
		"status":     resp.StatusCode,
		"statusText": strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode))),
		"headers":    hdrs,
		"url":        resp.Request.URL.String(),
		"body":       buffer.WrapBytes(v.rt, data),
	}
}
