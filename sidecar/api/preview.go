package api

import (
	"net/http"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// ExposeInput is the body of POST /v1/execs/{id}/expose.
type ExposeInput struct {
	Port       int     `json:"port"`
	TTLSeconds float64 `json:"ttl_seconds,omitempty"`
}

// previewActor is whom the audit trail names for previews made through the
// API's routes (the expose tool's are tools.ExposeActor's).
const previewActor = "api:expose"

// expose gives a port of the container a preview URL for as long as the
// exec {id} (the server's) runs.
func (s *Server) expose(w http.ResponseWriter, r *http.Request) {
	var in ExposeInput
	if err := s.decodeBody(w, r, &in); err != nil {
		WriteError(w, err)
		return
	}
	out, err := s.opts.Tools.ExposeAs(r.Context(), previewActor, tools.ExposeInput{ExecID: r.PathValue("id"), Port: in.Port, TTLSeconds: in.TTLSeconds})
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, out.Preview)
}

func (s *Server) previews(w http.ResponseWriter, _ *http.Request) {
	WriteJSON(w, http.StatusOK, map[string]any{"previews": s.opts.Tools.Previews()})
}

func (s *Server) revokePreview(w http.ResponseWriter, r *http.Request) {
	if err := s.opts.Tools.RevokePreview(previewActor, r.PathValue("id")); err != nil {
		WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
