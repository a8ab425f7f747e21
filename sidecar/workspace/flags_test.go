package workspace

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// TestFlags: both owners parse the same flags into the same options, and
// values that would silently mean something else are refused.
func TestFlags(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(pol, []byte(`{"hidden":["secret"],"quota_bytes":7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	egressPol := filepath.Join(t.TempDir(), "egress.json")
	if err := os.WriteFile(egressPol, []byte(`{"egress":{"allow":["registry.npmjs.org:443"],"deny":["*.evil.com","10.1.0.0/16"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	badEgress := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badEgress, []byte(`{"egress":{"deny":["host:http"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		err   string
		check func(Options) bool
	}{
		{"defaults", nil, "", func(o Options) bool {
			return o.FS.CommitInterval == time.Second && o.Shell.MaxMemoryBytes == 1<<30 && o.Egress.Empty() && o.JSMemory == 512<<20 &&
				o.FS.AuditRetention != nil && o.FS.AuditRetention.MaxEvents == 1_000_000 &&
				!o.NoAutoCheckpoint && *o.AutoCheckpoint == tools.DefaultCheckpointRetention
		}},
		{"all set", []string{"--policy", pol, "--read-only-glob", "ro/**", "--quota", "9", "--commit-interval", "2s",
			"--exec-memory", "1024", "--js-memory", "268435456", "--egress-allow", "*.example.com:443", "--egress-allow", "10.0.0.0/8", "--audit-max-events", "5"}, "", func(o Options) bool {
			p := o.FS.Policy
			return p.QuotaBytes == 9 && p.Hidden[0] == "secret" && p.ReadOnly[0] == "ro/**" && o.FS.CommitInterval == 2*time.Second &&
				o.Shell.Limits.MaxMemoryBytes == 1024 && o.JSMemory == 256<<20 && o.Egress.String() == "*.example.com:443,10.0.0.0/8" && o.FS.AuditRetention.MaxEvents == 5
		}},
		{"no-network beats egress-allow", []string{"--egress-allow", "*", "--no-network"}, "", func(o Options) bool { return o.Egress.Empty() }},
		{"bad egress rule", []string{"--egress-allow", "host:http"}, "--egress-allow", nil},
		{"bad egress deny rule", []string{"--egress-deny", "[::1"}, "--egress-deny", nil},
		{"egress deny", []string{"--egress-allow", "*", "--egress-deny", "*.evil.com:443"}, "", func(o Options) bool {
			return o.Egress.String() == "*" && len(o.Egress.DenyRules()) == 1 && o.Egress.DenyRules()[0].String() == "*.evil.com:443"
		}},
		{"policy file egress section", []string{"--policy", egressPol, "--egress-allow", "*.example.com", "--egress-deny", "*.bad.org"}, "", func(o Options) bool {
			return o.Egress.String() == "*.example.com,registry.npmjs.org:443" && fmt.Sprint(o.Egress.DenyRules()) == "[*.bad.org *.evil.com 10.1.0.0/16]"
		}},
		{"policy file bad egress rule", []string{"--policy", badEgress}, "policy file " + badEgress + ": egress deny: egress rule \"host:http\"", nil},
		{"credential", []string{"--http-credential", "*.example.com:8443=" + tok}, "", func(o Options) bool {
			c := o.Credentials
			return len(c) == 1 && c[0].Token == "tok" && c[0].Host.String() == "*.example.com:8443" && c[0].Host.Matches("git.example.com", 8443)
		}},
		{"credential for an address", []string{"--http-credential", "[::1]:8080=" + tok}, "", func(o Options) bool {
			return o.Credentials[0].Host.Matches("::1", 8080)
		}},
		{"credential with a bad rule", []string{"--http-credential", "host:http=" + tok}, "--http-credential: egress rule", nil},
		{"credential with a bad glob", []string{"--http-credential", "[a-=" + tok}, "--http-credential", nil},
		{"credential without a file", []string{"--http-credential", "github.com"}, "HOST[:PORT]=FILE", nil},
		{"credential file missing", []string{"--http-credential", "github.com=" + tok + ".none"}, "--http-credential github.com", nil},
		{"checkpoints", []string{"--checkpoint-keep", "3", "--checkpoint-max-age", "1h"}, "", func(o Options) bool {
			return !o.NoAutoCheckpoint && o.AutoCheckpoint.Keep == 3 && o.AutoCheckpoint.MaxAge == time.Hour
		}},
		{"no auto checkpoint", []string{"--auto-checkpoint=false"}, "", func(o Options) bool { return o.NoAutoCheckpoint }},
		{"negative checkpoint keep", []string{"--checkpoint-keep", "-1"}, "must not be negative", nil},
		{"zero exec memory", []string{"--exec-memory", "0"}, "must be positive", nil},
		{"zero js memory", []string{"--js-memory", "0"}, "must be positive", nil},
		{"negative shell memory", []string{"--shell-memory", "-1"}, "must be positive", nil},
		{"zero commit interval", []string{"--commit-interval", "0s"}, "must be positive", nil},
		{"bad glob", []string{"--hidden-glob", "a/["}, "", nil},
		{"missing policy file", []string{"--policy", pol + ".none"}, "policy file", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var f Flags
			f.Register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var o Options
			err := f.Apply(&o, nil)
			switch {
			case tc.check == nil && err == nil:
				t.Fatalf("Apply(%q) = nil, want an error", tc.args)
			case tc.check == nil && !strings.Contains(err.Error(), tc.err):
				t.Fatalf("Apply(%q) = %v, want an error containing %q", tc.args, err, tc.err)
			case tc.check != nil && err != nil:
				t.Fatalf("Apply(%q) = %v", tc.args, err)
			case tc.check != nil && !tc.check(o):
				t.Fatalf("Apply(%q) gave %+v", tc.args, o)
			}
		})
	}
}

// TestContainerLimits: the bounds themselves are taken, a step past them
// refused naming the field, and Apply leaves the host's where zero.
func TestContainerLimits(t *testing.T) {
	for _, c := range []struct {
		l     ContainerLimits
		field string // "": accepted
	}{
		{ContainerLimits{}, ""},
		{ContainerLimits{MemoryBytes: minContainerMemory, Pids: 1, CPUs: minContainerCPUs}, ""},
		{ContainerLimits{MemoryBytes: maxContainerMemory, Pids: maxContainerPids, CPUs: maxContainerCPUs}, ""},
		{ContainerLimits{MemoryBytes: minContainerMemory - 1}, "container_memory_bytes"},
		{ContainerLimits{MemoryBytes: maxContainerMemory + 1}, "container_memory_bytes"},
		{ContainerLimits{Pids: -1}, "container_pids"},
		{ContainerLimits{Pids: maxContainerPids + 1}, "container_pids"},
		{ContainerLimits{CPUs: 0.009}, "container_cpus"},
		{ContainerLimits{CPUs: maxContainerCPUs + 0.5}, "container_cpus"},
	} {
		err := ExecLimits{ContainerLimits: c.l}.Validate()
		if c.field == "" && err != nil || c.field != "" && (err == nil || !strings.Contains(err.Error(), c.field)) {
			t.Errorf("%+v: %v, want refused naming %q", c.l, err, c.field)
		}
	}
	o := Options{ContainerLimits: ContainerLimits{MemoryBytes: 1 << 30, Pids: 100, CPUs: 2}}
	ExecLimits{ContainerLimits: ContainerLimits{Pids: 7}}.Apply(&o)
	if want := (ContainerLimits{MemoryBytes: 1 << 30, Pids: 7, CPUs: 2}); o.ContainerLimits != want {
		t.Errorf("Apply: %+v, want %+v", o.ContainerLimits, want)
	}
}
