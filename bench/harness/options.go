package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options are the flags every runner shares.
type Options struct {
	Subject    Kind   `json:"subject"`
	Tmpfs      bool   `json:"tmpfs"`
	Rounds     int    `json:"rounds"`
	WorkDir    string `json:"work_dir"`
	MountBin   string `json:"mount_bin"`
	MountFlags string `json:"mount_flags"`
	BuildTags  string `json:"build_tags"`
	Requests   bool   `json:"requests"`
	JSON       bool   `json:"-"`
}

// Register defines the shared flags on fs with their defaults.
func (o *Options) Register(fs *flag.FlagSet) {
	o.Subject = Sqlfs
	fs.Func("subject", "target judged against native: sqlfs, or tmpfs to try the runner without a mount (default sqlfs)", func(s string) error {
		k, err := ParseKind(s)
		if err == nil && k == Native {
			err = errors.New("native is the baseline")
		}
		o.Subject = k
		return err
	})
	fs.BoolVar(&o.Tmpfs, "tmpfs", false, "also run on tmpfs, as a bound")
	fs.IntVar(&o.Rounds, "rounds", 3, "runs on every target, alternating; medians are reported")
	fs.StringVar(&o.WorkDir, "dir", os.TempDir(), "directory on the disk to compare with; all targets and the sqlfs store live under it")
	fs.StringVar(&o.MountBin, "mount-bin", "", "sqlfs-mount binary (default: build ./cmd/sqlfs-mount of this module)")
	fs.StringVar(&o.MountFlags, "mount-flags", "", "extra sqlfs-mount flags, space separated")
	fs.StringVar(&o.BuildTags, "tags", "fuse3", "build tags for sqlfs-mount; falls back to none if they do not build")
	fs.BoolVar(&o.Requests, "requests", true, "serve the sqlfs mount's metrics (--metrics-addr on loopback) and report FUSE requests and commits per phase")
	fs.BoolVar(&o.JSON, "json", false, "print JSON instead of tables")
}

// Kinds lists the targets in column order: subject, native, then the tmpfs bound.
func (o *Options) Kinds() []Kind {
	kinds := []Kind{o.Subject, Native}
	if o.Tmpfs && o.Subject != Tmpfs {
		kinds = append(kinds, Tmpfs)
	}
	return kinds
}

// Prepare makes a private work directory under WorkDir and, for a sqlfs subject
// without MountBin, builds sqlfs-mount into it. cleanup removes the directory unless
// something is still mounted in it (removing would then delete through the mount).
func (o *Options) Prepare(ctx context.Context, name string) (env *Env, cleanup func() error, err error) {
	if o.Rounds < 1 {
		return nil, nil, errors.New("-rounds must be at least 1")
	}
	work, err := os.MkdirTemp(o.WorkDir, name+"-")
	if err != nil {
		return nil, nil, fmt.Errorf("work dir: %w", err)
	}
	cleanup = func() error {
		if mounted, err := IsMounted(work); err != nil || mounted {
			return fmt.Errorf("leaving %s: something is still mounted there (%v)", work, err)
		}
		return os.RemoveAll(work)
	}
	if o.Subject == Sqlfs && o.MountBin == "" {
		slog.Info("building sqlfs-mount", "tags", o.BuildTags)
		if o.MountBin, o.BuildTags, err = BuildMount(ctx, ".", o.BuildTags, work); err != nil {
			return nil, nil, errors.Join(err, cleanup())
		}
	}
	return &Env{WorkDir: work, MountBin: o.MountBin, MountArgs: strings.Fields(o.MountFlags), Metrics: o.Requests}, cleanup, nil
}

// Main runs a runner's work with progress logs on stderr and the report on stdout,
// and exits non-zero on error. Ctrl-C or SIGTERM cancels the work; the runner's
// deferred clean-up then unmounts and removes everything before Main exits.
func Main(name string, run func(ctx context.Context, out io.Writer) error) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// WriteJSON writes v indented, for -json output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ColdMeanings is ColdMeaning for the targets of this run, for reports.
func (o *Options) ColdMeanings() map[Kind]string {
	m := map[Kind]string{}
	for _, k := range o.Kinds() {
		m[k] = ColdMeaning[k]
	}
	return m
}

// Host describes the machine for report headers: with the CPUs and how
// they idle, since every FUSE request wakes the server's CPU and then the
// caller's, and waking a halted vCPU costs more than the request itself.
func Host(dir string) map[string]string {
	var u unix.Utsname
	unix.Uname(&u)
	return map[string]string{
		"kernel":  unix.ByteSliceToString(u.Release[:]),
		"work_fs": FSType(dir),
		"date":    time.Now().UTC().Format(time.RFC3339),
		"cpus":    strconv.Itoa(runtime.NumCPU()),
		"cpuidle": cpuIdle(),
	}
}

// cpuIdle is the cpuidle driver and governor, and haltpoll's poll window
// where that driver is in use; empty where sysfs tells nothing.
func cpuIdle() string {
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return strings.TrimSpace(string(b))
	}
	driver := read("/sys/devices/system/cpu/cpuidle/current_driver")
	if driver == "" {
		return ""
	}
	s := fmt.Sprintf("driver %s, governor %s", driver, read("/sys/devices/system/cpu/cpuidle/current_governor_ro"))
	if poll := read("/sys/module/haltpoll/parameters/guest_halt_poll_ns"); driver == "haltpoll" && poll != "" {
		s += ", guest_halt_poll_ns " + poll
	}
	return s
}

// WriteHeader prints what was compared, how, and what "cold" means per target.
func (o *Options) WriteHeader(w io.Writer, host map[string]string) {
	fmt.Fprintf(w, "%s, kernel %s, work dir %s (%s), medians of %d rounds\n",
		host["date"], host["kernel"], o.WorkDir, host["work_fs"], o.Rounds)
	if host["cpus"] != "" {
		fmt.Fprintf(w, "%s CPUs, cpuidle: %s\n", host["cpus"], cmp.Or(host["cpuidle"], "unknown"))
	}
	if o.Subject == Sqlfs {
		fmt.Fprintf(w, "sqlfs-mount %s (tags %q, flags %q)\n", o.MountBin, o.BuildTags, o.MountFlags)
	}
	fmt.Fprintf(w, "ratio = %s time / native time (for rates: native rate / %s rate): lower is better, below 1 beats the disk\n", o.Subject, o.Subject)
	for _, k := range o.Kinds() {
		fmt.Fprintf(w, "cold on %s: %s\n", k, ColdMeaning[k])
	}
}
