package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRequireFailsWhenPrivileged runs a test that needs a missing program in
// a child process, with and without PrivilegedEnv: it must skip, then fail.
func TestRequireFailsWhenPrivileged(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		LookPath(t, "sqlfs-no-such-program", "none")
		return
	}
	cases := []struct {
		env      string
		wantFail bool
		wantText string
	}{
		{"", false, "--- SKIP"},
		{PrivilegedEnv + "=1", true, "this machine must have it"},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireFailsWhenPrivileged$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", PrivilegedEnv+"=")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.wantFail || !strings.Contains(string(out), c.wantText) {
			t.Errorf("env %q: err %v, want failure %v and %q in:\n%s", c.env, err, c.wantFail, c.wantText, out)
		}
	}
}

func TestSlackFactor(t *testing.T) {
	for _, c := range []struct {
		load float64
		cpus int
		want float64
	}{
		{0, 2, 1},
		{1.5, 2, 1},
		{2, 2, 1},
		{30, 2, 15},
		{1000, 2, maxSlack},
		{8, 0, 8},
		{3, 1, 3},
	} {
		if got := slackFactor(c.load, c.cpus); got != c.want {
			t.Errorf("slackFactor(%v, %d) = %v, want %v", c.load, c.cpus, got, c.want)
		}
	}
	if got := Slack(time.Second); got < time.Second || got > maxSlack*time.Second {
		t.Errorf("Slack(1s) = %v, outside [1s, %ds]", got, maxSlack)
	}
}
