// Command hostload is the load generator of sqlfs-exec serve --workspaces
// (issue 21's targets): it starts a host on a loopback port, side by side
// with a single-store server where a comparison applies, drives it with
// bounded numbers of clients for a bounded time, and prints a table of
// what it measured. See README.md.
package main

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	bin         string
	dir         string
	modes       string
	workspaces  int
	files       int
	wakeFiles   int
	wakeRounds  int
	active      int
	duration    time.Duration
	overheadN   int
	crashWriter int
	concurrency int
	// cpuProfile, when set, is where active writes a CPU profile of the
	// host taken over the middle half of its run.
	cpuProfile string
	// serveArgs are more flags of the host under the active load.
	serveArgs []string
}

func main() {
	var c config
	var quick bool
	flag.StringVar(&c.bin, "sqlfs-exec", "", "the sqlfs-exec binary (default: built into the work directory)")
	flag.StringVar(&c.dir, "dir", "", "work directory (default: a new one under $TMPDIR, removed at the end)")
	flag.StringVar(&c.modes, "modes", "hibernate,start,wake,active,overhead,crash", "comma-separated measurements to run")
	flag.IntVar(&c.workspaces, "workspaces", 10000, "workspaces created then hibernated (hibernate, start)")
	flag.IntVar(&c.files, "files", 10, "files in each of them")
	flag.IntVar(&c.wakeFiles, "wake-files", 10000, "files in the workspace woken (wake)")
	flag.IntVar(&c.wakeRounds, "wake-rounds", 40, "wakes timed")
	flag.IntVar(&c.active, "active", 1000, "workspaces active at once, one client each (active)")
	flag.DurationVar(&c.duration, "duration", 60*time.Second, "how long the active clients run")
	flag.IntVar(&c.overheadN, "overhead-requests", 400, "requests per round and kind (overhead)")
	flag.IntVar(&c.crashWriter, "crash-workspaces", 50, "workspaces written to when the host is killed (crash)")
	flag.IntVar(&c.concurrency, "concurrency", 16, "clients creating workspaces")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "with active: write a CPU profile of the host over the middle half of the run to `FILE` (serve --pprof-addr)")
	serveArgs := flag.String("serve-args", "", "with active: more flags for the host, space-separated (\"--max-requests 64\")")
	flag.BoolVar(&quick, "quick", false, "a quick run: 500 workspaces, a 2000-file wake, 50 active for 10 s")
	flag.Parse()
	c.serveArgs = strings.Fields(*serveArgs)
	if quick {
		c.workspaces, c.wakeFiles, c.wakeRounds, c.active, c.duration, c.overheadN, c.crashWriter = 500, 2000, 20, 50, 10*time.Second, 200, 20
	}
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) (err error) {
	if c.dir == "" {
		d, err := os.MkdirTemp("", "sqlfs-hostload-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	if c.bin == "" {
		c.bin = filepath.Join(c.dir, "sqlfs-exec")
		b := exec.Command("go", "build", "-o", c.bin, "github.com/sqlfs/sqlfs/cmd/sqlfs-exec")
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return fmt.Errorf("building sqlfs-exec: %w", err)
		}
	}
	fmt.Printf("hostload: %s, load average at start %s\n", time.Now().UTC().Format(time.RFC3339), loadavg())
	var rows [][]string
	for _, m := range strings.Split(c.modes, ",") {
		var r [][]string
		var err error
		switch m {
		case "hibernate":
			r, err = hibernate(c, true)
		case "start":
			r, err = hibernate(c, false)
		case "wake":
			r, err = wake(c)
		case "active":
			r, err = active(c)
		case "overhead":
			r, err = overhead(c)
		case "crash":
			r, err = crash(c)
		default:
			return fmt.Errorf("unknown mode %q", m)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		for _, row := range r {
			row = append(row, loadavg())
			fmt.Println(strings.Join(row, " | "))
			rows = append(rows, row)
		}
	}
	fmt.Println("\n| what | measured | target | met | load (1/5/15 min) |\n| --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Printf("| %s |\n", strings.Join(r, " | "))
	}
	return nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func met(ok bool) string { return map[bool]string{true: "yes", false: "no"}[ok] }

// server is a running sqlfs-exec serve.
type server struct {
	cmd   *exec.Cmd
	base  string
	token string
	hc    *http.Client
	start time.Duration // from exec to the first answer of /v1/health
}

const token = "hostload-token-0123456789abcdef"

// startServer runs sqlfs-exec serve args on a free loopback port.
func startServer(c config, args ...string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	tf := filepath.Join(c.dir, "token")
	if err := os.WriteFile(tf, []byte(token), 0o600); err != nil {
		return nil, err
	}
	args = append([]string{"serve", "--listen", addr, "--token-file", tf, "--api-max-conns", "16384"}, args...)
	s := &server{base: "http://" + addr, token: token, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096}}}
	s.cmd = exec.Command(c.bin, args...)
	logf, err := os.OpenFile(filepath.Join(c.dir, "serve.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for {
		st, _, err := s.do("GET", "/v1/health", "")
		if err == nil && st == http.StatusOK {
			s.start = time.Since(t0)
			return s, nil
		}
		if time.Since(t0) > 60*time.Second {
			s.kill()
			return nil, fmt.Errorf("serve %v did not answer within 60 s (see %s)", args, logf.Name())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (s *server) do(method, path, body string) (int, []byte, error) {
	st, b, _, err := s.doRetry(method, path, body)
	return st, b, err
}

// doRetry is do with the answer's Retry-After (seconds; 10 ms when
// absent or unreadable).
func (s *server) doRetry(method, path, body string) (int, []byte, time.Duration, error) {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	retry := 10 * time.Millisecond
	if n, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && n >= 0 {
		retry = time.Duration(n) * time.Second
	}
	return resp.StatusCode, b, retry, err
}

// retried429 counts the requests must retried: 429 past --max-open or
// past the host's request queue.
var retried429 atomic.Int64

// must is do for a request that must answer 200 or 201, retrying a 429
// (all --max-open workspaces busy, the request queue full) after the
// answer's Retry-After, as a client should.
func (s *server) must(method, path, body string) ([]byte, error) {
	st, b, retry, err := s.doRetry(method, path, body)
	for try := 0; err == nil && st == http.StatusTooManyRequests && try < 1000; try++ {
		retried429.Add(1)
		time.Sleep(retry)
		st, b, retry, err = s.doRetry(method, path, body)
	}
	if err == nil && st != http.StatusOK && st != http.StatusCreated {
		err = fmt.Errorf("%s %s: %d %s", method, path, st, bytes.TrimSpace(b))
	}
	return b, err
}

// stop ends the server with SIGTERM (a clean shutdown).
func (s *server) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	return s.cmd.Wait()
}

func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// rss is the server's resident and peak memory.
func (s *server) rss() (rss, hwm int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			hwm = n << 10
		}
	}
	return rss, hwm
}

// cpu is the CPU time the server's threads have run, from each thread's
// schedstat (nanoseconds; a thread that exited meanwhile drops out, which
// Go's threads seldom do): unlike a latency, CPU per request does not
// grow with the machine's load.
func (s *server) cpu() time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", s.cmd.Process.Pid)
	tasks, _ := os.ReadDir(dir)
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(n)
		}
	}
	return total
}

// selfCPU is the CPU time this process (the load generator) has used,
// user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (s *server) openCount() int {
	b, err := s.must("GET", "/v1/health", "")
	if err != nil {
		return -1
	}
	var h struct {
		Open int `json:"open"`
	}
	_ = json.Unmarshal(b, &h)
	return h.Open
}

// waitHibernated waits until the host has no workspace open.
func (s *server) waitHibernated(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for s.openCount() != 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("still %d workspaces open after %v", s.openCount(), limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// tarOf is a tar of n small files spread over directories of 100.
func tarOf(n int) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range n {
		body := fmt.Sprintf("file %d\n", i)
		name := fmt.Sprintf("d%d/f%d.txt", i/100, i)
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg, ModTime: time.Unix(1e9, 0)})
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	return buf.Bytes()
}

// createWorkspaces creates n workspaces id-0..id-(n-1) of files files each,
// concurrency at a time.
func createWorkspaces(s *server, prefix string, n, files, concurrency int) error {
	body := tarOf(files)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for range concurrency {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				id := fmt.Sprintf("%s-%d", prefix, i)
				if _, err := s.must("POST", "/v1/workspaces", `{"id":"`+id+`"}`); err != nil {
					errs <- err
					return
				}
				if _, err := s.must("POST", "/v1/workspaces/"+id+"/import?dest=.", string(body)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// hibernate creates c.workspaces workspaces, lets them all hibernate and
// reads the host's memory (create), or restarts the host over them and
// times how long it takes to serve (start).
func hibernate(c config, create bool) ([][]string, error) {
	dir := filepath.Join(c.dir, "many")
	args := []string{"--workspaces", dir, "--idle-timeout", "1s", "--max-open", "256", "--auto-checkpoint=false"}
	if create {
		os.RemoveAll(dir)
		s, err := startServer(c, args...)
		if err != nil {
			return nil, err
		}
		defer s.kill()
		t0 := time.Now()
		if err := createWorkspaces(s, "ws", c.workspaces, c.files, c.concurrency); err != nil {
			return nil, err
		}
		took := time.Since(t0)
		if err := s.waitHibernated(5 * time.Minute); err != nil {
			return nil, err
		}
		time.Sleep(5 * time.Second) // let the runtime give freed memory back
		rss, hwm := s.rss()
		return [][]string{{fmt.Sprintf("%d workspaces of %d files created (%v, %d clients), then hibernated: host RSS", c.workspaces, c.files, took.Round(time.Second), c.concurrency),
			fmt.Sprintf("%s (peak %s)", mib(rss), mib(hwm)), "≤ 300 MiB", met(rss <= 300<<20)}}, s.stop()
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("start needs the workspaces of hibernate first: %w", err)
	}
	var starts []time.Duration
	for range 3 {
		s, err := startServer(c, args...)
		if err != nil {
			return nil, err
		}
		// Serving means answering a workspace's request too.
		t0 := time.Now()
		if _, err := s.must("POST", "/v1/workspaces/ws-0/tools/read", `{"path":"d0/f0.txt"}`); err != nil {
			s.kill()
			return nil, err
		}
		starts = append(starts, s.start)
		first := time.Since(t0)
		_ = first
		if err := s.stop(); err != nil {
			return nil, err
		}
	}
	slices.Sort(starts)
	med := starts[len(starts)/2]
	return [][]string{{fmt.Sprintf("host start with %d workspaces in DIR, until /v1/health answers (median of 3)", c.workspaces),
		med.Round(time.Millisecond).String(), "≤ 1 s", met(med <= time.Second)}}, nil
}

// percentile is the p-th percentile of sorted d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// wake times the first request to a hibernated workspace of c.wakeFiles
// files, next to the same read of it open, and of the single-store server.
func wake(c config) ([][]string, error) {
	dir := filepath.Join(c.dir, "wake")
	os.RemoveAll(dir)
	s, err := startServer(c, "--workspaces", dir, "--idle-timeout", "200ms", "--auto-checkpoint=false")
	if err != nil {
		return nil, err
	}
	defer s.kill()
	if err := createWorkspaces(s, "big", 1, c.wakeFiles, 1); err != nil {
		return nil, err
	}
	read := `{"path":"d0/f1.txt"}`
	var cold, warm []time.Duration
	var cpu time.Duration
	for range c.wakeRounds {
		if err := s.waitHibernated(30 * time.Second); err != nil {
			return nil, err
		}
		c0 := s.cpu()
		t0 := time.Now()
		if _, err := s.must("POST", "/v1/workspaces/big-0/tools/read", read); err != nil {
			return nil, err
		}
		cold = append(cold, time.Since(t0))
		cpu += s.cpu() - c0
		t0 = time.Now()
		if _, err := s.must("POST", "/v1/workspaces/big-0/tools/read", read); err != nil {
			return nil, err
		}
		warm = append(warm, time.Since(t0))
	}
	slices.Sort(cold)
	slices.Sort(warm)
	p50, p99 := percentile(cold, 0.5), percentile(cold, 0.99)
	return [][]string{
		{fmt.Sprintf("wake: first read of a hibernated %d-file workspace, until its answer (%d wakes; the same read open: p50 %v; the host's CPU per wake: %v)",
			c.wakeFiles, c.wakeRounds, percentile(warm, 0.5).Round(10*time.Microsecond), (cpu / time.Duration(c.wakeRounds)).Round(10*time.Microsecond)),
			fmt.Sprintf("p50 %v, p99 %v", p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond)), "p50 ≤ 5 ms, p99 ≤ 25 ms", met(p50 <= 5*time.Millisecond && p99 <= 25*time.Millisecond)},
	}, s.stop()
}

// active runs c.active clients, one per workspace, each looping exec
// echo, write and read for c.duration.
func active(c config) ([][]string, error) {
	dir := filepath.Join(c.dir, "active")
	os.RemoveAll(dir)
	args := []string{"--workspaces", dir, "--idle-timeout", "30s", "--max-open", strconv.Itoa(c.active), "--auto-checkpoint=false"}
	pprofAddr := ""
	if c.cpuProfile != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		pprofAddr = ln.Addr().String()
		ln.Close()
		args = append(args, "--pprof-addr", pprofAddr)
	}
	s, err := startServer(c, append(args, c.serveArgs...)...)
	if err != nil {
		return nil, err
	}
	defer s.kill()
	if err := createWorkspaces(s, "act", c.active, 1, c.concurrency); err != nil {
		return nil, err
	}
	retried0 := retried429.Load()
	profiled := make(chan error, 1)
	if pprofAddr != "" {
		go func() {
			time.Sleep(c.duration / 4)
			profiled <- fetchProfile("http://"+pprofAddr+fmt.Sprintf("/debug/pprof/profile?seconds=%d", max(1, int(c.duration.Seconds()/2))), c.cpuProfile)
		}()
	} else {
		profiled <- nil
	}
	var mu sync.Mutex
	var execs []time.Duration
	// loops[i] is how many loops client i completed: a client starved
	// while others are served shows as a low minimum.
	loops := make([]int, c.active)
	var errCount, ops atomic.Int64
	var firstErr atomic.Value
	var maxRSS atomic.Int64
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if r, _ := s.rss(); r > maxRSS.Load() {
					maxRSS.Store(r)
				}
			}
		}
	}()
	host0, self0, t0 := s.cpu(), selfCPU(), time.Now()
	deadline := t0.Add(c.duration)
	var wg sync.WaitGroup
	for i := range c.active {
		wg.Go(func() {
			id := fmt.Sprintf("/v1/workspaces/act-%d", i)
			var mine []time.Duration
			for n := 0; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				b, err := s.must("POST", id+"/exec", `{"command":"echo hi"}`)
				if err == nil && !bytes.Contains(b, []byte(`"exit_code":0`)) {
					err = fmt.Errorf("exec echo: %s", b)
				}
				if err == nil {
					mine = append(mine, time.Since(t0))
					_, err = s.must("POST", id+"/tools/write", fmt.Sprintf(`{"path":"f.txt","content":"%d"}`, n))
				}
				if err == nil {
					b, err = s.must("POST", id+"/tools/read", `{"path":"f.txt"}`)
					if err == nil && !bytes.Contains(b, []byte(fmt.Sprintf(`\t%d`, n))) {
						err = fmt.Errorf("read back %s, want %d", b, n)
					}
				}
				if err != nil {
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, err)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				ops.Add(3)
				loops[i]++
			}
			mu.Lock()
			execs = append(execs, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	hostCPU, selfCPU, took := s.cpu()-host0, selfCPU()-self0, time.Since(t0)
	close(stop)
	if err := <-profiled; err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	slices.Sort(execs)
	slices.Sort(loops)
	p50, p99 := percentile(execs, 0.5), percentile(execs, 0.99)
	n := max(1, ops.Load()+errCount.Load())
	msg := ""
	if e := firstErr.Load(); e != nil {
		msg = fmt.Sprintf(" (first: %v)", e)
	}
	return [][]string{
		{fmt.Sprintf("%d workspaces active at once for %v, each a client looping exec echo/write/read: errors", c.active, c.duration),
			fmt.Sprintf("%d of %d requests%s", errCount.Load(), ops.Load()+errCount.Load(), msg), "0", met(errCount.Load() == 0)},
		{"... exec echo latency (client side, over TCP)", fmt.Sprintf("p50 %v, p99 %v, max %v (%d execs; p99/p50 %.1f)", p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), execs[len(execs)-1].Round(time.Millisecond), len(execs), float64(p99)/float64(max(1, p50))), "p99 ≤ 50 ms", met(p99 <= 50*time.Millisecond)},
		{"... fairness: loops a client completed (min / p1 / median / max); 429s retried after Retry-After", fmt.Sprintf("%d / %d / %d / %d; %d 429s", loops[0], loops[len(loops)/100], loops[len(loops)/2], loops[len(loops)-1], retried429.Load()-retried0), "no client starved: min ≥ half of max", met(loops[0] > 0 && loops[0]*2 >= loops[len(loops)-1])},
		{"... CPU per request: the host's, the load generator's (all 3 kinds, requests a second)",
			fmt.Sprintf("host %v, generator %v (%.0f/s)", (hostCPU / time.Duration(n)).Round(time.Microsecond), (selfCPU / time.Duration(n)).Round(time.Microsecond), float64(n)/took.Seconds()), "", ""},
		{"... host peak RSS while active", mib(maxRSS.Load()), fmt.Sprintf("bounded by --max-open %d", c.active), "see RSS"},
	}, s.stop()
}

// fetchProfile saves the profile url answers to file.
func fetchProfile(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// overhead compares one workspace's read and exec echo through the host
// with the single-store server over a copy of the same store, alternating
// rounds, sequential requests.
func overhead(c config) ([][]string, error) {
	dir := filepath.Join(c.dir, "overhead")
	os.RemoveAll(dir)
	h, err := startServer(c, "--workspaces", dir, "--idle-timeout", "10m", "--auto-checkpoint=false")
	if err != nil {
		return nil, err
	}
	defer h.kill()
	if err := createWorkspaces(h, "one", 1, 100, 1); err != nil {
		return nil, err
	}
	single := filepath.Join(c.dir, "single.sqlfs")
	os.Remove(single)
	sst, err := startServer(c, "--store", single, "--auto-checkpoint=false")
	if err != nil {
		return nil, err
	}
	defer sst.kill()
	if _, err := sst.must("POST", "/v1/import?dest=.", string(tarOf(100))); err != nil {
		return nil, err
	}
	kinds := []struct{ name, path, body string }{
		{"read", "/tools/read", `{"path":"d0/f1.txt"}`},
		{"exec echo", "/exec", `{"command":"echo hi"}`},
	}
	var rows [][]string
	for _, k := range kinds {
		var hostT, singleT []time.Duration
		for round := range 7 {
			for _, side := range []bool{round%2 == 0, round%2 != 0} {
				s, prefix := sst, "/v1"
				if side {
					s, prefix = h, "/v1/workspaces/one-0"
				}
				t0 := time.Now()
				for range c.overheadN {
					if _, err := s.must("POST", prefix+k.path, k.body); err != nil {
						return nil, err
					}
				}
				per := time.Since(t0) / time.Duration(c.overheadN)
				if side {
					hostT = append(hostT, per)
				} else {
					singleT = append(singleT, per)
				}
			}
		}
		slices.Sort(hostT)
		slices.Sort(singleT)
		hm, sm := hostT[len(hostT)/2], singleT[len(singleT)/2]
		ratio := float64(hm) / float64(sm)
		rows = append(rows, []string{fmt.Sprintf("routing overhead on %s: host vs single-store server (median of 7 rounds of %d sequential requests)", k.name, c.overheadN),
			fmt.Sprintf("%.3fx (%v vs %v)", ratio, hm.Round(time.Microsecond), sm.Round(time.Microsecond)), "≤ 1.05x", met(ratio <= 1.05)})
	}
	return rows, errors.Join(h.stop(), sst.stop())
}

// crash has writers write numbered files into c.crashWriter workspaces,
// SIGKILLs the host mid-run, checks every store, restarts the host and
// reads back every acknowledged write: a tool write is answered only once
// durable, so none may be lost, however recent.
func crash(c config) ([][]string, error) {
	dir := filepath.Join(c.dir, "crash")
	os.RemoveAll(dir)
	const commit = 100 * time.Millisecond
	args := []string{"--workspaces", dir, "--idle-timeout", "300ms", "--max-open", strconv.Itoa(max(2, c.crashWriter*3/4)), "--commit-interval", commit.String()}
	s, err := startServer(c, args...)
	if err != nil {
		return nil, err
	}
	if err := createWorkspaces(s, "cr", c.crashWriter, 1, c.concurrency); err != nil {
		s.kill()
		return nil, err
	}
	acks := make([][]int, c.crashWriter)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range c.crashWriter {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				_, err := s.must("POST", fmt.Sprintf("/v1/workspaces/cr-%d/tools/write", i), fmt.Sprintf(`{"path":"w/%d.txt","content":"%d-%d"}`, n, i, n))
				if err == nil {
					acks[i] = append(acks[i], n)
				} else if ctx.Err() == nil {
					// 429s (past --max-open, all busy) are expected; retry.
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(cmp.Or(c.duration/6, 5*time.Second))
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	cancel()
	wg.Wait()
	_ = s.cmd.Wait()

	checked := 0
	for i := range c.crashWriter {
		out, err := exec.Command(c.bin, "check", "--store", filepath.Join(dir, fmt.Sprintf("cr-%d", i), "workspace.sqlfs")).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("check of cr-%d after SIGKILL: %v: %s", i, err, out)
		}
		checked++
	}
	s, err = startServer(c, args...)
	if err != nil {
		return nil, err
	}
	defer s.kill()
	total, missing := 0, 0
	for i := range c.crashWriter {
		for _, n := range acks[i] {
			total++
			b, err := s.must("POST", fmt.Sprintf("/v1/workspaces/cr-%d/tools/read", i), fmt.Sprintf(`{"path":"w/%d.txt"}`, n))
			if err != nil || !bytes.Contains(b, []byte(fmt.Sprintf(`\t%d-%d`, i, n))) {
				missing++
			}
		}
	}
	return [][]string{{fmt.Sprintf("SIGKILL of the host while %d clients write (--commit-interval %v): stores passing check, acknowledged writes found after restart", c.crashWriter, commit),
		fmt.Sprintf("%d of %d stores pass; %d of %d acknowledged writes are there (%d retries of a 429)", checked, c.crashWriter, total-missing, total, retried429.Load()),
		"all", met(checked == c.crashWriter && missing == 0 && total > 0)}}, s.stop()
}
