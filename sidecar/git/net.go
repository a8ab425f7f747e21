package git

import (
	"errors"
	"net/http"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// go-git picks a remote's transport from a process-wide table. Here http
// and https go through the exec's own http.RoundTripper (the owner's
// egress policy and credentials), carried to the table's entry by the
// call's AuthMethod; a call without one, and every other scheme (file://
// would read the host's disk, ssh and git:// would dial anywhere), is
// refused.
func init() {
	for _, scheme := range []string{"http", "https"} {
		client.InstallProtocol(scheme, viaExec{})
	}
	for _, scheme := range []string{"file", "ssh", "git"} {
		client.InstallProtocol(scheme, refused{})
	}
}

var errNoNetwork = errors.New("no network for this git call")

// execTransport is the AuthMethod that carries an exec's transport.
type execTransport struct{ client transport.Transport }

func (*execTransport) Name() string   { return "sqlfs-exec-transport" }
func (*execTransport) String() string { return "sqlfs-exec-transport" }

type viaExec struct{}

func (viaExec) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	n, ok := auth.(*execTransport)
	if !ok {
		return nil, errNoNetwork
	}
	return n.client.NewUploadPackSession(ep, nil)
}

func (viaExec) NewReceivePackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.ReceivePackSession, error) {
	n, ok := auth.(*execTransport)
	if !ok {
		return nil, errNoNetwork
	}
	return n.client.NewReceivePackSession(ep, nil)
}

type refused struct{}

func (refused) NewUploadPackSession(*transport.Endpoint, transport.AuthMethod) (transport.UploadPackSession, error) {
	return nil, errNoNetwork
}

func (refused) NewReceivePackSession(*transport.Endpoint, transport.AuthMethod) (transport.ReceivePackSession, error) {
	return nil, errNoNetwork
}

// isNetworkURL says whether a remote is on the network rather than a path
// in the workspace.
func isNetworkURL(u string) bool {
	return strings.Contains(u, "://") && !strings.HasPrefix(u, "file://") ||
		!strings.Contains(u, "/") && strings.Contains(u, ":") ||
		strings.Contains(u, "@") && strings.Contains(u, ":")
}

// network is the AuthMethod for a call to url, or git's kind of error
// when the exec may not reach it.
func (s *session) network(url string) (*execTransport, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fatalf("unable to access '%s': only http:// and https:// remotes are supported by the shell backend's git", url)
	}
	if s.env.HTTP == nil {
		return nil, fatalf("unable to access '%s': this workspace has no network access (the operator grants it with an egress policy)", url)
	}
	// Redirects are followed for the first request only, as git does by
	// default (http.followRedirects=initial); every hop goes through the
	// exec's transport, so the policy decides each one.
	c := githttp.NewClientWithOptions(&http.Client{Transport: s.env.HTTP}, &githttp.ClientOptions{RedirectPolicy: githttp.FollowInitialRedirects})
	return &execTransport{client: c}, nil
}

// netError is git's message for a failed network call. Whatever else the
// transport said goes through its Redact, so an injected credential
// cannot come back through an error.
func (s *session) netError(url string, err error) error {
	u := strings.TrimSuffix(url, "/") + "/"
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		return fatalf("Authentication failed for '%s'", u)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fatalf("repository '%s' not found", u)
	case s.ctx.Err() != nil:
		return s.ctx.Err()
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return fatalf("unable to access '%s': %s", u, s.redact(err.Error()))
}

func (s *session) redact(msg string) string {
	if r, ok := s.env.HTTP.(interface{ Redact(string) string }); ok {
		return r.Redact(msg)
	}
	return msg
}

// remoteURL is the URL of a configured remote, or the argument itself
// when it is none.
func (r *repo) remoteURL(name string) (string, bool, error) {
	cfg, err := r.r.Config()
	if err != nil {
		return "", false, err
	}
	if rc, ok := cfg.Remotes[name]; ok && len(rc.URLs) > 0 {
		return rc.URLs[0], true, nil
	}
	return name, false, nil
}

// remoteFor is go-git's remote for a network URL, over the repository's
// storage.
func (r *repo) remoteFor(name, url string, fetch []config.RefSpec) *gogit.Remote {
	return gogit.NewRemote(r.r.Storer, &config.RemoteConfig{Name: name, URLs: []string{url}, Fetch: fetch})
}
