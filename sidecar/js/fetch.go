package js

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja_nodejs/buffer"
)

// fetch is the native behind the fetch global when the exec allows the
// network: one blocking HTTP request, made by the process owning the
// workspace under the exec's context.
func (v *vm) fetch(url, method string, headers [][]string, body goja.Value) map[string]any {
	resp, err := v.svc.fetch(v.ctx, fetchRequest{URL: url, Method: method, Headers: headers, Body: v.bytesOf(body)})
	if err != nil {
		panic(v.rt.NewGoError(err))
	}
	return map[string]any{
		"status":     resp.Status,
		"statusText": resp.StatusText,
		"headers":    resp.Headers,
		"url":        resp.URL,
		"body":       buffer.WrapBytes(v.rt, resp.Body),
	}
}
