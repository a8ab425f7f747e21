package js

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"

	"github.com/sqlfs/sqlfs/egress"
)

// maxFetchBody caps a fetched body held in memory.
const maxFetchBody = 64 << 20

// fetch is the native behind the fetch global when the exec allows the
// network: one blocking HTTP request under the exec's context, through the
// operator's egress transport, which audits the connection as the exec's.
func (v *vm) fetch(url, method string, headers [][]string, body goja.Value) map[string]any {
	if v.cfg.fetch == nil {
		panic(v.rt.NewGoError(errors.New("network access is disabled for this exec")))
	}
	ctx := egress.WithActor(v.ctx, v.cfg.actor)
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(v.bytesOf(body)))
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	for _, h := range headers {
		if len(h) == 2 {
			req.Header.Add(h[0], h[1])
		}
	}
	resp, err := v.cfg.fetch.Do(req)
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
