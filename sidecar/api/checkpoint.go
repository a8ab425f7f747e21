package api

import (
	"bytes"
	"net/http"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// The checkpoint endpoints: the CLI's checkpoint, fork and undo commands
// through an owner. Agents use the tools of the same names.

// decodeBody reads a JSON request body strictly into v.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := s.readBody(w, r)
	if err == nil {
		err = checkUTF8JSON(b)
	}
	if err == nil {
		err = DecodeStrict(bytes.NewReader(b), v)
	}
	return err
}

// answer writes v, or err when it is set.
func answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, v)
}

// durable is err, or when it is nil the wait for the durable commit of
// the change the request made: a change is acknowledged only once a crash
// cannot lose it.
func (s *Server) durable(r *http.Request, err error) error {
	if err != nil {
		return err
	}
	return durable(r.Context(), s.opts.Tools)
}

func (s *Server) createCheckpoint(w http.ResponseWriter, r *http.Request) {
	var in tools.CheckpointInput
	if err := s.decodeBody(w, r, &in); err != nil {
		WriteError(w, err)
		return
	}
	info, err := s.opts.Tools.CreateCheckpoint(r.Context(), tools.CheckpointActor, in.Name)
	answer(w, info, s.durable(r, err))
}

func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	cs, err := s.opts.Tools.ListCheckpoints(r.Context(), tools.CheckpointActor)
	answer(w, map[string][]tools.CheckpointInfo{"checkpoints": cs}, err)
}

func (s *Server) restore(w http.ResponseWriter, r *http.Request) {
	info, err := s.opts.Tools.RestoreCheckpoint(r.Context(), tools.CheckpointActor, r.PathValue("ref"))
	answer(w, tools.RestoreOutput{Restored: info}, s.durable(r, err))
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	to, err := onlyParam(r.URL.Query(), "to")
	if err != nil {
		WriteError(w, err)
		return
	}
	changes, err := s.opts.Tools.DiffCheckpoints(r.Context(), tools.CheckpointActor, r.PathValue("ref"), to)
	answer(w, map[string][]tools.Change{"changes": changes}, err)
}

func (s *Server) deleteCheckpoint(w http.ResponseWriter, r *http.Request) {
	info, err := s.opts.Tools.DeleteCheckpoint(r.Context(), tools.CheckpointActor, r.PathValue("ref"))
	answer(w, info, s.durable(r, err))
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request) {
	var in ForkInput
	if err := s.decodeBody(w, r, &in); err != nil {
		WriteError(w, err)
		return
	}
	answer(w, in, s.opts.Tools.Fork(r.Context(), tools.ForkActor, in.Checkpoint, in.Store))
}

func (s *Server) undo(w http.ResponseWriter, r *http.Request) {
	res, err := s.opts.Tools.Undo(r.Context(), tools.UndoActor, r.PathValue("id"))
	answer(w, res, s.durable(r, err))
}
