package workspace

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/sqlfs/sqlfs/egress"
	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/httpcred"
	"github.com/sqlfs/sqlfs/sidecar/js"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/tools"
	"github.com/sqlfs/sqlfs/sqlstore"
)

// Flags are the command-line flags of a process that owns a workspace
// (sqlfs-mount, sqlfs-exec serve): defined once, so the two owners cannot
// drift apart.
type Flags struct {
	policyFile     string
	readOnly       ListFlag
	hidden         ListFlag
	quota          int64
	commitInterval time.Duration
	shellMemory    int64
	execMemory     int64
	egressAllow    ListFlag
	egressDeny     ListFlag
	credentials    ListFlag
	jsMemory       int64
	noNetwork      bool
	retention      sqlstore.AuditRetention
	autoCheckpoint bool
	checkpoints    tools.CheckpointRetention
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.policyFile, "policy", "", "policy `FILE`: JSON {\"read_only\": [globs], \"hidden\": [globs], \"quota_bytes\": N, \"egress\": {\"allow\": [rules], \"deny\": [rules]}}, added to the flags' rules")
	fs.Var(&f.readOnly, "read-only-glob", "make paths matching `GLOB` read-only, e.g. 'config/**'; a glob without / matches a base name at any depth, as in .gitignore (repeatable)")
	fs.Var(&f.hidden, "hidden-glob", "hide paths matching `GLOB`, e.g. 'secrets/**' or '*.pem' (any depth); symlinks into them lead nowhere (repeatable)")
	fs.Int64Var(&f.quota, "quota", 0, "refuse file data beyond `BYTES` with ENOSPC (0: no quota)")
	fs.DurationVar(&f.commitInterval, "commit-interval", time.Second, "longest time a change waits for its commit (what a crash can lose without fsync)")
	fs.Int64Var(&f.shellMemory, "shell-memory", 1<<30, "memory `BYTES` all running shell-backend commands share (held data, and Go heap growth the watchdog checks)")
	fs.Int64Var(&f.execMemory, "exec-memory", sidecar.DefaultLimits.MaxMemoryBytes, "default memory `BYTES` one shell-backend command may hold (a request's max_memory_bytes overrides it)")
	fs.Int64Var(&f.jsMemory, "js-memory", js.DefaultMaxHeapBytes, "memory `BYTES` one JavaScript exec may use; its worker process is stopped past it (exit 134)")
	fs.Var(&f.egressAllow, "egress-allow", "let execs that ask for allow_network connect to `HOST[:PORT]`: a host glob ('*.example.com:443', '*'), an address or a CIDR range ('10.0.0.0/8:5432', '[::1]:8080'); loopback, private and link-local addresses need a rule naming the address (repeatable; none: the network is off)")
	fs.Var(&f.egressDeny, "egress-deny", "refuse connections to `HOST[:PORT]` (written as for --egress-allow) whatever --egress-allow allows: a host glob is checked on the name before any lookup, an address or range on every address the name resolves to (repeatable)")
	fs.Var(&f.credentials, "http-credential", "send the token in `HOST[:PORT]=FILE` as basic auth (user x-access-token) with the shell git's HTTP requests to the hosts the rule names, written as for --egress-allow ('github.com', '*.example.com:8443', '10.0.0.5'); the token is read from FILE and never shown to execs (repeatable)")
	fs.BoolVar(&f.noNetwork, "no-network", false, "deprecated, now the default: refuse every exec that asks for network access, overriding --egress-allow")
	f.retention = sqlstore.DefaultAuditRetention
	f.retention.AddFlags(fs)
	d := tools.DefaultCheckpointRetention
	fs.BoolVar(&f.autoCheckpoint, "auto-checkpoint", true, "take a checkpoint before every exec of the API, MCP and sqlfs-exec run, so sqlfs-exec undo EXEC_ID can take it back (--auto-checkpoint=false: none)")
	fs.IntVar(&f.checkpoints.Keep, "checkpoint-keep", d.Keep, "keep the newest `N` automatic checkpoints, deleting older ones (0: no count bound; named checkpoints stay until deleted)")
	fs.DurationVar(&f.checkpoints.MaxAge, "checkpoint-max-age", d.MaxAge, "delete automatic checkpoints older than `D` (0: no age bound)")
}

// Apply checks the flags' values and sets what they configure in o.
func (f *Flags) Apply(o *Options, log *slog.Logger) error {
	if f.shellMemory <= 0 || f.execMemory <= 0 || f.jsMemory <= 0 {
		// 0 or less would silently mean the default.
		return fmt.Errorf("--shell-memory, --exec-memory and --js-memory must be positive, got %d, %d and %d", f.shellMemory, f.execMemory, f.jsMemory)
	}
	if f.commitInterval <= 0 {
		return fmt.Errorf("--commit-interval must be positive, got %s", f.commitInterval)
	}
	policy, err := LoadPolicy(f.policyFile, f.readOnly, f.hidden, f.quota)
	if err != nil {
		return err
	}
	allow, deny, err := LoadEgress(f.policyFile, f.egressAllow, f.egressDeny)
	if err != nil {
		return err
	}
	o.FS.Policy = policy
	o.FS.CommitInterval = f.commitInterval
	o.FS.Logger = log
	retention := f.retention
	o.FS.AuditRetention = &retention
	o.Shell = shell.Options{Logger: log, MaxMemoryBytes: f.shellMemory, Limits: sidecar.Limits{MaxMemoryBytes: f.execMemory}}
	if !f.noNetwork {
		o.Egress = egress.FromRules(allow, deny)
	}
	if f.checkpoints.Keep < 0 || f.checkpoints.MaxAge < 0 {
		return fmt.Errorf("--checkpoint-keep and --checkpoint-max-age must not be negative, got %d and %s", f.checkpoints.Keep, f.checkpoints.MaxAge)
	}
	o.NoAutoCheckpoint = !f.autoCheckpoint
	keep := f.checkpoints
	o.AutoCheckpoint = &keep
	for _, c := range f.credentials {
		glob, file, ok := strings.Cut(c, "=")
		if !ok || glob == "" || file == "" {
			return fmt.Errorf("--http-credential %q: want HOST[:PORT]=FILE", c)
		}
		host, err := egress.ParseRule(glob)
		if err != nil {
			return fmt.Errorf("--http-credential: %w", err)
		}
		tok, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("--http-credential %s: %w", glob, err)
		}
		o.Credentials = append(o.Credentials, httpcred.Rule{Host: host, Token: strings.TrimSpace(string(tok))})
	}
	o.JSMemory = f.jsMemory
	return nil
}

// ListFlag collects a repeatable string flag.
type ListFlag []string

func (l *ListFlag) String() string     { return strings.Join(*l, ",") }
func (l *ListFlag) Set(v string) error { *l = append(*l, v); return nil }

// PolicyFile is the JSON of --policy (and of a host workspace's policy):
// the same rules as the flags.
type PolicyFile struct {
	ReadOnly   []string `json:"read_only"`
	Hidden     []string `json:"hidden"`
	QuotaBytes int64    `json:"quota_bytes"`
	// Egress adds network rules to --egress-allow and --egress-deny. On a
	// host, a workspace's own section replaces the host's allow rules
	// (absent: the host's apply), while the host's deny rules always
	// apply.
	Egress *EgressRules `json:"egress,omitempty"`
}

// EgressRules are network rules written as for --egress-allow and
// --egress-deny (egress.ParseRule).
type EgressRules struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// Parse checks the rules, naming where they came from (from) in errors.
func (e *EgressRules) Parse(from string) (allow, deny []egress.Rule, err error) {
	if e == nil {
		return nil, nil, nil
	}
	for _, l := range []struct {
		name string
		in   []string
		out  *[]egress.Rule
	}{{"allow", e.Allow, &allow}, {"deny", e.Deny, &deny}} {
		for _, s := range l.in {
			r, err := egress.ParseRule(s)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: egress %s: %w", from, l.name, err)
			}
			*l.out = append(*l.out, r)
		}
	}
	return allow, deny, nil
}

// LoadEgress is the egress rules of the flags (allow, deny) followed by
// those of the policy file (none when file is "").
func LoadEgress(file string, allowFlags, denyFlags []string) (allow, deny []egress.Rule, err error) {
	allow, deny, err = (&EgressRules{Allow: allowFlags, Deny: denyFlags}).Parse("--egress-allow/--egress-deny")
	if err != nil || file == "" {
		return allow, deny, err
	}
	pf, err := ReadPolicyFile(file)
	if err != nil {
		return nil, nil, err
	}
	a, d, err := pf.Egress.Parse("policy file " + file)
	if err != nil {
		return nil, nil, err
	}
	return append(allow, a...), append(deny, d...), nil
}

// ExecLimits are one workspace's own exec limits on a host (set at
// creation or by PATCH), stored beside its store in JSON. Each zero field
// leaves the host's value: its flag (--exec-memory, --js-memory, --memory,
// --pids, --cpus) or the default. Set, a field also bounds what a request
// may ask.
type ExecLimits struct {
	// TimeoutSeconds is the wall clock of an exec that asks none, and the
	// most one may ask.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
	// MaxOutputBytes caps an exec's stdout and stderr together.
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
	// MaxMemoryBytes is the memory one shell-backend command may hold
	// (--exec-memory).
	MaxMemoryBytes int64 `json:"max_memory_bytes,omitempty"`
	// JSMemoryBytes is the memory one JavaScript exec may use
	// (--js-memory).
	JSMemoryBytes int64 `json:"js_memory_bytes,omitempty"`
	ContainerLimits
}

// ContainerLimits are the cgroup limits of a workspace's whole container
// (container.Options); a zero field leaves the host's (--memory, --pids,
// --cpus). A container takes them when it starts: one running keeps its
// own until it stops, which a PATCH's reopen (once no exec runs) does.
type ContainerLimits struct {
	MemoryBytes int64   `json:"container_memory_bytes,omitempty"`
	Pids        int64   `json:"container_pids,omitempty"`
	CPUs        float64 `json:"container_cpus,omitempty"`
}

// Bounds of ContainerLimits. Below the minima a container cannot start
// (runc's init needs some memory; the kernel refuses a CPU quota under
// 1 ms of its 100 ms period); past the maxima a number is more likely a
// unit mistake (the kernel's PID_MAX_LIMIT, 1 TiB, 1024 cores).
const (
	minContainerMemory = 16 << 20
	maxContainerMemory = 1 << 40
	maxContainerPids   = 1 << 22
	minContainerCPUs   = 0.01
	maxContainerCPUs   = 1024
)

// Validate refuses a field out of its bounds, naming it; zero is the
// host's.
func (c ContainerLimits) Validate() error {
	if c.MemoryBytes != 0 && (c.MemoryBytes < minContainerMemory || c.MemoryBytes > maxContainerMemory) {
		return fmt.Errorf("container_memory_bytes must be 0 (the host's) or %d to %d, got %d", minContainerMemory, int64(maxContainerMemory), c.MemoryBytes)
	}
	if c.Pids != 0 && (c.Pids < 1 || c.Pids > maxContainerPids) {
		return fmt.Errorf("container_pids must be 0 (the host's) or 1 to %d, got %d", maxContainerPids, c.Pids)
	}
	if c.CPUs != 0 && !(c.CPUs >= minContainerCPUs && c.CPUs <= maxContainerCPUs) {
		return fmt.Errorf("container_cpus must be 0 (the host's) or %v to %v, got %v", minContainerCPUs, maxContainerCPUs, c.CPUs)
	}
	return nil
}

// Or is c with each zero field taken from def.
func (c ContainerLimits) Or(def ContainerLimits) ContainerLimits {
	if c.MemoryBytes == 0 {
		c.MemoryBytes = def.MemoryBytes
	}
	if c.Pids == 0 {
		c.Pids = def.Pids
	}
	if c.CPUs == 0 {
		c.CPUs = def.CPUs
	}
	return c
}

// maxExecTimeout bounds ExecLimits.TimeoutSeconds: a day, past which a
// number is more likely a unit mistake than a wish.
const maxExecTimeout = 24 * time.Hour

// Validate refuses a negative field or a timeout over a day, naming it.
func (l ExecLimits) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_output_bytes", l.MaxOutputBytes}, {"max_memory_bytes", l.MaxMemoryBytes}, {"js_memory_bytes", l.JSMemoryBytes}} {
		if f.v < 0 {
			return fmt.Errorf("%s must be 0 (the host's) or positive, got %d", f.name, f.v)
		}
	}
	if !(l.TimeoutSeconds >= 0 && l.TimeoutSeconds <= maxExecTimeout.Seconds()) {
		return fmt.Errorf("timeout_seconds must be 0 (the host's) to %.0f, got %v", maxExecTimeout.Seconds(), l.TimeoutSeconds)
	}
	return l.ContainerLimits.Validate()
}

// Apply sets the limits l sets in o, over what o had.
func (l ExecLimits) Apply(o *Options) {
	own := sidecar.Limits{
		Timeout:        time.Duration(l.TimeoutSeconds * float64(time.Second)),
		MaxOutputBytes: l.MaxOutputBytes,
		MaxMemoryBytes: l.MaxMemoryBytes,
	}
	o.Shell.Limits = own.Or(o.Shell.Limits)
	if l.JSMemoryBytes > 0 {
		o.JSMemory = l.JSMemoryBytes
	}
	o.ContainerLimits = l.ContainerLimits.Or(o.ContainerLimits)
}

// ReadPolicyFile decodes a policy file strictly (an unknown field is an
// error, not a rule silently dropped).
func ReadPolicyFile(file string) (PolicyFile, error) {
	var pf PolicyFile
	b, err := os.ReadFile(file)
	if err != nil {
		return pf, fmt.Errorf("policy file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return pf, fmt.Errorf("policy file %s: %w", file, err)
	}
	return pf, nil
}

// LoadPolicy merges a policy file (if any) with the flags' file rules; a
// quota given as a flag wins over the file's. The file's egress section is
// LoadEgress's.
func LoadPolicy(file string, readOnly, hidden []string, quota int64) (sfs.Policy, error) {
	p := sfs.Policy{ReadOnly: readOnly, Hidden: hidden, QuotaBytes: quota}
	if file != "" {
		pf, err := ReadPolicyFile(file)
		if err != nil {
			return p, err
		}
		p.ReadOnly = append(p.ReadOnly, pf.ReadOnly...)
		p.Hidden = append(p.Hidden, pf.Hidden...)
		if p.QuotaBytes == 0 {
			p.QuotaBytes = pf.QuotaBytes
		}
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}
