package shell

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar"
)

// bash's ** never descends through a symlink to a directory; it lists the
// symlink itself. Every expansion ends, within its limits, without a panic.
func TestGlobStar(t *testing.T) {
	if globSites() == (globSite{}) {
		t.Fatal("the expander's ** walk was not found: mvdan.cc/sh/v3/expand changed its glob")
	}
	b, _ := newTestBackend(t, Options{})
	setup := sh(t, b, "mkdir -p d/e && touch d/e/f d/g && ln -s / r && ln -s d l && ln -s . self")
	if setup.ExitCode != 0 {
		t.Fatalf("setup: %+v %s", setup.Result, setup.stderr)
	}
	tests := []struct {
		name, cmd, stdout string
		code              int
		limit             sidecar.Limit
	}{
		{name: "symlink to root is not followed", cmd: "shopt -s globstar; echo /**/passwd; echo **/f",
			stdout: "/**/passwd\nd/e/f\n"},
		{name: "symlinks listed, not walked", cmd: "shopt -s globstar; echo **",
			stdout: "d d/e d/e/f d/g l r self\n"},
		{name: "trailing slash lists directories", cmd: "shopt -s globstar; echo **/",
			stdout: "d/ d/e/ l/ r/ self/\n"},
		{name: "no base inside a symlink", cmd: "shopt -s globstar; echo **/*/; echo **/f; echo **/e/f",
			stdout: "d/ d/e/ l/ r/ self/\nd/e/f\nd/e/f\n"},
		{name: "explicit symlink prefix is walked", cmd: "shopt -s globstar; echo l/**",
			stdout: "l/ l/e l/e/f l/g\n"},
		{name: "self loop", cmd: "shopt -s globstar; echo self/**/f",
			stdout: "self/d/e/f\n"},
		{name: "bounded by MaxGlobMatches", cmd: "touch m{1..60}; shopt -s globstar; echo /**; echo after",
			code: 125, limit: "max_glob_matches"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := execReq(t, b, sidecar.Request{Command: tc.cmd,
				Limits: sidecar.Limits{Timeout: 10 * time.Second, MaxGlobMatches: 50}})
			if got.stdout != tc.stdout || got.ExitCode != tc.code || got.LimitHit != tc.limit {
				t.Errorf("got %q code %d limit %q (stderr %q), want %q code %d limit %q",
					got.stdout, got.ExitCode, got.LimitHit, got.stderr, tc.stdout, tc.code, tc.limit)
			}
			if tc.limit != "" && !strings.Contains(got.stderr, "glob expansion limit of 50 paths exceeded") {
				t.Errorf("stderr %q does not name the limit", got.stderr)
			}
			if strings.Contains(got.stderr, "internal error") {
				t.Errorf("crashed: %s", got.stderr)
			}
		})
	}
}

// A walk over a large tree stops at the deadline: every directory read
// checks the run's context, and nothing of the exec is left running.
func TestGlobStarCancelled(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	if got := sh(t, b, "for i in $(seq 1 40); do mkdir -p t/$i/a/b/c; touch t/$i/a/b/c/f; done"); got.ExitCode != 0 {
		t.Fatalf("setup: %s", got.stderr)
	}
	baseline := runtime.NumGoroutine()
	start := time.Now()
	got := execReq(t, b, sidecar.Request{Command: "shopt -s globstar; while :; do echo t/**/f > /dev/null; done",
		Limits: sidecar.Limits{Timeout: 300 * time.Millisecond}})
	// The aim is 100 ms past the deadline; the margin is for a loaded
	// machine. Without the checks the walk ran on for the 5 s grace.
	if elapsed := time.Since(start); got.LimitHit != "timeout" || elapsed > 300*time.Millisecond+300*time.Millisecond*slowdown {
		t.Errorf("ended after %v with %+v, want timeout soon after the deadline", elapsed, got.Result)
	}
	settled(t, baseline)

	// The interpreter's walk ignores read errors and has no context: each
	// read must fail by itself once the run is over.
	r := newRun(context.Background(), b, sidecar.DefaultLimits, nil, nil)
	r.cancel(errTimeout)
	if _, err := r.readDirHandler(context.Background(), "/workspace"); err == nil {
		t.Error("a cancelled run still reads directories")
	}
}
