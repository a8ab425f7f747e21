package tools

import (
	"context"
	"fmt"
	"time"
)

// PublishInput is the publish tool's argument.
type PublishInput struct {
	Path       string  `json:"path" jsonschema:"file or directory to publish, relative to the workspace root or under /workspace"`
	TTLSeconds float64 `json:"ttl_seconds,omitempty" jsonschema:"how long the link works, in seconds; default 3600, at most 30 days"`
}

// PublishOutput is what publish returns.
type PublishOutput struct {
	Path    string    `json:"path"`
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

// Text is the result as a model reads it.
func (o PublishOutput) Text() string {
	return fmt.Sprintf("%s\n(link to %s, valid until %s)\n", o.URL, o.Path, o.Expires.UTC().Format(time.RFC3339))
}

// Publish makes a public link to a path.
func (s *Service) Publish(ctx context.Context, in PublishInput) (PublishOutput, error) {
	out, err := s.publish(ctx, in)
	return out, classify(err)
}

func (s *Service) publish(ctx context.Context, in PublishInput) (PublishOutput, error) {
	if s.opts.Publish == nil {
		return PublishOutput{}, toolErr(CodeNoPublish, nil, "publishing is not available: the workspace is served without a public listener (sqlfs-exec serve --public-addr)")
	}
	fsys := s.view("tool:publish")
	name, err := resolve(fsys, in.Path, true)
	if err != nil {
		return PublishOutput{}, err
	}
	if _, err := fsys.Stat(name); err != nil {
		return PublishOutput{}, err
	}
	ttl := time.Duration(in.TTLSeconds * float64(time.Second))
	if ttl < 0 {
		return PublishOutput{}, toolErr(CodeInvalid, nil, "ttl_seconds must not be negative")
	}
	url, err := s.opts.Publish(ctx, "tool:publish", name, ttl)
	if err != nil {
		return PublishOutput{}, toolErr(CodeInvalid, err, "publish %s: %v", display(name), err)
	}
	if ttl == 0 {
		ttl = time.Hour
	}
	return PublishOutput{Path: display(name), URL: url, Expires: time.Now().Add(ttl)}, nil
}
