package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/preview"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// ExposeInput is the body of POST /v1/execs/{id}/expose.
type ExposeInput struct {
	Port       int     `json:"port"`
	TTLSeconds float64 `json:"ttl_seconds,omitempty"`
}

// previewActor is whom the audit trail names for previews made through the
// API.
const previewActor = "api:expose"

// expose gives a port of the container a preview URL for as long as the
// exec {id} (the server's) runs.
func (s *Server) expose(w http.ResponseWriter, r *http.Request) {
	if s.opts.Previews == nil {
		WriteError(w, apiErr(tools.CodeNoPublish, "previews need the container backend and a public listener (serve --mount --rootfs --public-addr)"))
		return
	}
	var in ExposeInput
	if err := s.decodeBody(w, r, &in); err != nil {
		WriteError(w, err)
		return
	}
	p, err := s.opts.Previews.Expose(previewActor, r.PathValue("id"), in.Port, time.Duration(in.TTLSeconds*float64(time.Second)))
	if err != nil {
		code := tools.CodeInvalid
		switch {
		case errors.Is(err, preview.ErrExecEnded):
			code = tools.CodeNoExec
		case errors.Is(err, preview.ErrNoBaseURL):
			code = tools.CodeNoPublish
		}
		WriteError(w, apiErr(code, "%s", err))
		return
	}
	WriteJSON(w, http.StatusOK, p)
}

func (s *Server) previews(w http.ResponseWriter, _ *http.Request) {
	var list []preview.Preview
	if s.opts.Previews != nil {
		list = s.opts.Previews.List()
	}
	WriteJSON(w, http.StatusOK, map[string][]preview.Preview{"previews": list})
}

func (s *Server) revokePreview(w http.ResponseWriter, r *http.Request) {
	if s.opts.Previews == nil {
		WriteError(w, apiErr(tools.CodeNotFound, "no previews here"))
		return
	}
	if err := s.opts.Previews.Revoke(previewActor, r.PathValue("id")); err != nil {
		WriteError(w, apiErr(tools.CodeNotFound, "%s", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
