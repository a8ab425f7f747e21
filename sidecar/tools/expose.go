package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/preview"
)

// ExposeInput is the expose tool's argument.
type ExposeInput struct {
	ExecID     string  `json:"exec_id,omitempty" jsonschema:"id of the running container exec that serves the port; default: the only container exec running now"`
	Port       int     `json:"port" jsonschema:"TCP port the server listens on inside the container (on 127.0.0.1 or all addresses)"`
	TTLSeconds float64 `json:"ttl_seconds,omitempty" jsonschema:"how long the URL works, in seconds; default 3600, at most 86400"`
}

// ExposeOutput is what expose returns: the preview.
type ExposeOutput struct{ preview.Preview }

// Text is the result as a model reads it.
func (o ExposeOutput) Text() string {
	return fmt.Sprintf("%s\n(port %d of exec %s, preview %s, valid until %s or until the exec ends)\n",
		o.URL, o.Port, o.Exec, o.ID, o.Expires.UTC().Format(time.RFC3339))
}

// ExposeActor is whom the audit trail names for previews made by the
// expose tool.
const ExposeActor = "tool:expose"

// containerBackend is the name of the backend whose ports previews reach.
const containerBackend = "container"

// noPreviews is the answer of every preview call on a Service without a
// registry: what is missing, the container backend or a public listener.
func (s *Service) noPreviews() error {
	if _, ok := s.backends[containerBackend]; !ok {
		return toolErr(CodeNoPublish, nil, "previews are not available: the container backend is not configured (serve --rootfs DIR, with --mount DIR or --workspaces DIR), and a preview's server runs in a container exec")
	}
	return toolErr(CodeNoPublish, preview.ErrNoBaseURL, "previews are not available: %v", preview.ErrNoBaseURL)
}

// Expose runs the expose tool.
func (s *Service) Expose(ctx context.Context, in ExposeInput) (ExposeOutput, error) {
	return s.ExposeAs(ctx, ExposeActor, in)
}

// ExposeAs gives a port inside the container a preview URL for as long as
// its exec runs, audited under actor.
func (s *Service) ExposeAs(_ context.Context, actor string, in ExposeInput) (ExposeOutput, error) {
	reg := s.opts.Previews
	switch {
	case reg == nil:
		return ExposeOutput{}, s.noPreviews()
	case in.TTLSeconds < 0:
		return ExposeOutput{}, toolErr(CodeInvalid, nil, "ttl_seconds must not be negative")
	case in.Port < 1 || in.Port > 65535:
		// Before looking for the exec: the port is wrong whichever runs.
		return ExposeOutput{}, toolErr(CodeInvalid, preview.ErrBadPort, "port %d: %v", in.Port, preview.ErrBadPort)
	}
	id := in.ExecID
	if id == "" {
		var err error
		if id, err = s.soleServingExec(reg); err != nil {
			return ExposeOutput{}, err
		}
	} else if info, err := s.ExecInfo(id); err == nil && info.Running && !reg.Serves(id) {
		// Running, but where no preview reaches: "it has ended" would mislead.
		return ExposeOutput{}, toolErr(CodeInvalid, nil, "exec %s runs on the %s backend, whose ports no preview reaches: run the server in a container exec", id, info.Backend)
	}
	p, err := reg.Expose(actor, id, in.Port, time.Duration(in.TTLSeconds*float64(time.Second)))
	switch {
	case errors.Is(err, preview.ErrExecEnded):
		return ExposeOutput{}, toolErr(CodeNoExec, err, "%v", err)
	case errors.Is(err, preview.ErrNoBaseURL):
		return ExposeOutput{}, toolErr(CodeNoPublish, err, "%v", err)
	case err != nil:
		return ExposeOutput{}, toolErr(CodeInvalid, err, "%v", err)
	}
	return ExposeOutput{p}, nil
}

// soleServingExec is the one running exec whose ports reg can expose.
func (s *Service) soleServingExec(reg *preview.Registry) (string, error) {
	var ids []string
	for _, e := range s.Execs() {
		if e.Running && reg.Serves(e.ID) {
			ids = append(ids, e.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", toolErr(CodeNoExec, preview.ErrExecEnded, "no container exec is running: start the server with an exec on the container backend first; a preview lives as long as that exec")
	case 1:
		return ids[0], nil
	}
	return "", toolErr(CodeInvalid, nil, "%d container execs are running (%s): name the one serving the port with exec_id", len(ids), strings.Join(ids, ", "))
}

// Previews lists the live previews; none without a registry.
func (s *Service) Previews() []preview.Preview {
	if s.opts.Previews == nil {
		return nil
	}
	return s.opts.Previews.List()
}

// RevokePreview ends preview id, audited under actor.
func (s *Service) RevokePreview(actor, id string) error {
	if s.opts.Previews == nil {
		return toolErr(CodeNotFound, preview.ErrNoPreview, "revoke preview %q: %v (previews are not available in this workspace)", id, preview.ErrNoPreview)
	}
	if err := s.opts.Previews.Revoke(actor, id); err != nil {
		return toolErr(CodeNotFound, err, "%v", err)
	}
	return nil
}
