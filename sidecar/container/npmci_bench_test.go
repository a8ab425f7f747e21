package container

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sqlfs/sqlfs/egress"
	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/fs/fuse"
	"github.com/sqlfs/sqlfs/fs/fuse/fusetest"
	"github.com/sqlfs/sqlfs/internal/testenv"
	"github.com/sqlfs/sqlfs/metrics"
	"github.com/sqlfs/sqlfs/sidecar"
)

// npmProject is the real project npm ci installs: its lockfile pins 458
// packages (express, lodash, eslint, typescript, jest, webpack).
const npmProject = "../../bench/npm300"

// npmRegistryEnv names the Verdaccio storage holding every package of
// npmProject, which make npm-registry fills once from registry.npmjs.org
// (seed-npm-registry.sh); by default it is in the tools directory.
const npmRegistryEnv = "SQLFS_NPM_REGISTRY"

func npmRegistryStorage(tb testing.TB) string {
	dir := os.Getenv(npmRegistryEnv)
	if dir == "" {
		dir = filepath.Join(testenv.ToolsDir(), "npm-registry-npm300")
	}
	_, err := os.Stat(filepath.Join(dir, "express"))
	testenv.Require(tb, "the registry storage of bench/npm300 (make npm-registry fills it; "+npmRegistryEnv+" names another)", err)
	return dir
}

// npmCI is the install both sides run: the same npm (the kit's), from an
// empty cache of their own on a tmpfs (the container's HOME is its /tmp
// tmpfs; the host's is made in /dev/shm), no install scripts.
func npmCI(registry, cache string) string {
	return "ci --ignore-scripts --no-audit --no-fund --no-update-notifier --loglevel=error " +
		"--registry " + registry + " --cache " + cache
}

// BenchmarkNpmCI is npm ci of a real project of 458 packages from a real
// registry (Verdaccio on 127.0.0.1, serving a storage seeded beforehand,
// with no uplink) in three places, alternating in every iteration:
//
//   - host: the host's node in a native directory, straight to the registry;
//   - container-native: in the container, through the owner's egress proxy,
//     with /workspace a native directory;
//   - container-mount: the same with /workspace the sqlfs FUSE mount.
//
// It reports each place's median, the ratios to host, and for the mount
// the FUSE requests per installed file and npm's own CPU time, which is
// what tells sqlfs's share from the container's and the proxy's.
func BenchmarkNpmCI(b *testing.B) {
	kit := registryKit(b)
	port := runVerdaccio(b, kit, npmRegistryStorage(b))
	pol, err := egress.NewPolicy(fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		b.Fatal(err)
	}
	var conns atomic.Int64
	d := &egress.Dialer{Policy: pol, Resolver: names{"registry.test": "127.0.0.1"},
		Audit: func(a egress.Attempt) {
			if a.Outcome != egress.Allowed {
				b.Errorf("proxy attempt %+v", a)
			}
			conns.Add(1)
		}}
	rootfs := nodeRootfs(b, kit)
	mount := fusetest.Mount(b, sfs.Options{}, fuse.Options{AllowOther: true})
	inCtr := func(ws string) (*Backend, string) {
		be, ws := newTestBackend(b, func(c *Options) {
			c.Egress, c.Rootfs = d, rootfs
			if ws != "" {
				c.Workspace = ws
			}
		})
		return be, ws
	}
	ctrNative, nativeWS := inCtr("")
	ctrMount, _ := inCtr(mount.Dir)
	npm := filepath.Join(kit, "npm", "bin", "npm-cli.js")
	shm, err := os.MkdirTemp("/dev/shm", "npmci-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(shm) })
	hostDir := b.TempDir()

	// project copies the lockfile into dir/name, owned by the container's user.
	project := func(dir, name string, uid, gid int) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"package.json", "package-lock.json"} {
			if err := copyFile(filepath.Join(npmProject, f), filepath.Join(p, f), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := filepath.WalkDir(p, func(f string, _ fs.DirEntry, err error) error {
			return errors.Join(err, os.Lchown(f, uid, gid))
		}); err != nil {
			b.Fatal(err)
		}
		return p
	}
	type place struct {
		name  string
		run   func(i int) (npmCPU time.Duration)
		dir   func(i int) string // where node_modules lands, seen from here
		clean func(i int)
		times []time.Duration
	}
	inContainer := func(be *Backend, ws string) (func(int) time.Duration, func(int) string, func(int)) {
		dir := func(i int) string { return filepath.Join(ws, fmt.Sprintf("ci%d", i)) }
		run := func(i int) time.Duration {
			project(ws, fmt.Sprintf("ci%d", i), testUID, testGID)
			got := execIn(b, be, sidecar.Request{Actor: "exec:npm", AllowNetwork: true, Timeout: 20 * time.Minute,
				Command: fmt.Sprintf("cd /workspace/ci%d && npm %s && times", i,
					npmCI(fmt.Sprintf("http://registry.test:%d/", port), fmt.Sprintf("/tmp/npm-cache-%d", i)))})
			if got.err != nil || got.res.ExitCode != 0 {
				b.Fatalf("npm ci in the container: %v, exit %d\n%s%s", got.err, got.res.ExitCode, got.stdout, got.stderr)
			}
			return childrenCPU(b, got.stdout)
		}
		clean := func(i int) {
			// The project is removed from here: busybox rm -rf of a
			// directory of hundreds of files on the mount fails with
			// "Directory not empty" (its READDIR offsets are positions,
			// which the unlinks shift); os.RemoveAll lists again.
			got := execIn(b, be, sidecar.Request{Command: fmt.Sprintf("rm -rf /tmp/npm-cache-%d", i)})
			if err := errors.Join(got.err, os.RemoveAll(dir(i))); err != nil || got.res.ExitCode != 0 {
				b.Fatalf("clean up: %v %d %s", err, got.res.ExitCode, got.stderr)
			}
		}
		return run, dir, clean
	}
	places := []*place{{name: "host"}, {name: "container-native"}, {name: "container-mount"}}
	places[0].dir = func(i int) string { return filepath.Join(hostDir, fmt.Sprintf("ci%d", i)) }
	places[0].run = func(i int) time.Duration {
		p := project(hostDir, fmt.Sprintf("ci%d", i), 0, 0)
		cmd := exec.Command("node", append([]string{npm}, strings.Fields(npmCI(fmt.Sprintf("http://127.0.0.1:%d/", port), filepath.Join(shm, fmt.Sprint(i))))...)...)
		cmd.Dir = p
		cmd.Env = append(os.Environ(), "HOME="+shm)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("npm ci on the host: %v\n%s", err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	places[0].clean = func(i int) {
		if err := errors.Join(os.RemoveAll(places[0].dir(i)), os.RemoveAll(filepath.Join(shm, fmt.Sprint(i)))); err != nil {
			b.Fatal(err)
		}
	}
	places[1].run, places[1].dir, places[1].clean = inContainer(ctrNative, nativeWS)
	places[2].run, places[2].dir, places[2].clean = inContainer(ctrMount, mount.Dir)

	var files int
	var cpu [3]time.Duration
	mountReqs := map[string]float64{}
	var mountServer, mountOwnerCPU time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range places {
			k := (i + j) % len(places)
			pl := places[k]
			before, beforeCPU := fuseCounts(b), testenv.CPUTime(b)
			t0 := time.Now()
			cpu[k] += pl.run(i)
			pl.times = append(pl.times, time.Since(t0))
			b.StopTimer()
			if pl.name == "container-mount" {
				mountOwnerCPU += testenv.CPUTime(b) - beforeCPU
				reqs, server := fuseCounts(b).since(before)
				for op, n := range reqs {
					mountReqs[op] += n
				}
				mountServer += server
			}
			n := countFiles(b, filepath.Join(pl.dir(i), "node_modules"))
			if files != 0 && n != files {
				b.Fatalf("%s installed %d files, another place %d", pl.name, n, files)
			}
			files = n
			pl.clean(i)
			b.StartTimer()
		}
	}
	b.StopTimer()
	medians := make([]time.Duration, len(places))
	for k, pl := range places {
		slices.Sort(pl.times)
		medians[k] = pl.times[len(pl.times)/2]
		b.ReportMetric(medians[k].Seconds(), pl.name+"-s")
		b.ReportMetric((cpu[k] / time.Duration(b.N)).Seconds(), pl.name+"-npm-cpu-s")
	}
	b.ReportMetric(medians[1].Seconds()/medians[0].Seconds(), "native/host")
	b.ReportMetric(medians[2].Seconds()/medians[0].Seconds(), "mount/host")
	b.ReportMetric(medians[2].Seconds()/medians[1].Seconds(), "mount/native")
	var total float64
	for _, v := range mountReqs {
		total += v
	}
	b.ReportMetric(total/float64(b.N)/float64(files), "fuse-req/file")
	b.ReportMetric((mountServer / time.Duration(b.N)).Seconds(), "fuse-server-s")
	b.ReportMetric((mountOwnerCPU / time.Duration(b.N)).Seconds(), "owner-cpu-s")
	b.ReportMetric(float64(conns.Load())/float64(2*b.N), "proxy-conns")
	ops := slices.SortedFunc(func(yield func(string) bool) {
		for op := range mountReqs {
			if !yield(op) {
				return
			}
		}
	}, func(a, c string) int { return cmp.Compare(mountReqs[c], mountReqs[a]) })
	var sb strings.Builder
	for _, op := range ops {
		if mountReqs[op] > 0 {
			fmt.Fprintf(&sb, " %s %.2f", op, mountReqs[op]/float64(b.N)/float64(files))
		}
	}
	b.Logf("%d files installed; FUSE requests per file by op:%s", files, sb.String())
}

// childrenCPU parses the second line of the shell's `times` (the
// children's user and system time, "0m1.230000s 0m0.450000s").
func childrenCPU(tb testing.TB, out string) time.Duration {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var sum time.Duration
	fields := strings.Fields(lines[len(lines)-1])
	if len(lines) < 2 || len(fields) != 2 {
		tb.Fatalf("times printed %q", out)
	}
	for _, f := range fields {
		d, err := time.ParseDuration(f)
		if err != nil {
			tb.Fatalf("times printed %q: %v", out, err)
		}
		sum += d
	}
	return sum
}

type fuseSnapshot struct {
	requests      map[string]float64 // by op
	sampled, secs float64            // the timed sample: its count and its sum
}

// fuseCounts reads this process's FUSE request counters and the sampled
// request durations (metrics times one request in a few).
func fuseCounts(tb testing.TB) fuseSnapshot {
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	s := fuseSnapshot{requests: map[string]float64{}}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "sqlfs_fuse_requests_total":
			for _, m := range mf.GetMetric() {
				s.requests[label(m, "op")] += m.GetCounter().GetValue()
			}
		case "sqlfs_fuse_request_duration_seconds":
			for _, m := range mf.GetMetric() {
				s.sampled += float64(m.GetHistogram().GetSampleCount())
				s.secs += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return s
}

// since is what happened after before: the requests by op, and the time
// the server spent in them, the sample's scaled up to every request.
func (s fuseSnapshot) since(before fuseSnapshot) (map[string]float64, time.Duration) {
	d := map[string]float64{}
	var total float64
	for op, v := range s.requests {
		if n := v - before.requests[op]; n > 0 {
			d[op] = n
			total += n
		}
	}
	if s.sampled == before.sampled {
		return d, 0
	}
	return d, time.Duration((s.secs - before.secs) * total / (s.sampled - before.sampled) * float64(time.Second))
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func countFiles(tb testing.TB, dir string) int {
	n := 0
	if err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			n++
		}
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return n
}
