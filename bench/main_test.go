package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfs/sqlfs/bench/harness"
	"github.com/sqlfs/sqlfs/bench/harness/harnesstest"
)

func TestNodeTree(t *testing.T) {
	sum := func(seed uint64) ([32]byte, treeInfo, []byte) {
		var b bytes.Buffer
		info, err := writeNodeTree(&b, 2000, seed)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b.Bytes()), info, b.Bytes()
	}
	a, info, archive := sum(7)
	if again, _, _ := sum(7); again != a {
		t.Error("same seed, different archives")
	}
	if other, _, _ := sum(8); other == a {
		t.Error("different seeds, same archive")
	}
	// The info must describe the archive: the workloads check tool output against it.
	var got treeInfo
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			got.Dirs++
		case tar.TypeReg:
			got.Files++
			got.Bytes += h.Size
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(body, []byte(needle)) {
				got.Matches++
			}
		}
		if !strings.HasPrefix(h.Name, "node_modules/") {
			t.Errorf("entry %q outside node_modules/", h.Name)
		}
	}
	if got != info {
		t.Errorf("archive holds %+v, writeNodeTree reported %+v", got, info)
	}
	if info.Files < 2000 || info.Files > 2200 || info.Matches == 0 || info.Dirs < info.Files/20 {
		t.Errorf("implausible tree for 2000 files: %+v", info)
	}
}

// TestSmoke runs the whole program at tiny sizes on each subject and checks that
// every phase produced a ratio and that nothing is left mounted or on disk.
func TestSmoke(t *testing.T) {
	for _, subject := range []harness.Kind{harness.Tmpfs, harness.Sqlfs} {
		t.Run(string(subject), func(t *testing.T) {
			work := harnesstest.WorkDir(t)
			c := config{Files: 120, Dirs: 4, TreeFiles: 400, MemFiles: 500, Seed: 3, GitFiles: 150, BuildFiles: 3}
			c.Subject, c.Rounds, c.WorkDir, c.BuildTags, c.JSON, c.Requests = subject, 1, work, "fuse3", true, true
			var out bytes.Buffer
			if err := run(context.Background(), c, &out); err != nil {
				t.Fatal(err)
			}
			var rep report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out.Bytes())
			}
			want := []string{"create", "create+fsync", "stat warm", "stat after write", "stat missing", "stat missing again",
				"readdir", "readdir+stat", "read all", "stat cold", "rename", "unlink", "mkdir", "rmdir", "untar", "find", "grep -r", "find warm", "grep -r warm", "ls -lR warm", "rm -rf",
				"git add -A", "git commit", "git status warm", "git clone", "rm -rf repo", "make -j2", "make -j2 again"}
			if len(rep.Phases) != len(want) {
				t.Fatalf("%d phases, want %d: %+v", len(rep.Phases), len(want), rep.Phases)
			}
			for i, p := range rep.Phases {
				if p.Name != want[i] {
					t.Errorf("phase %d is %q, want %q", i, p.Name, want[i])
				}
				if p.Medians[subject] <= 0 || p.Medians[harness.Native] <= 0 || p.Ratio <= 0 {
					t.Errorf("phase %q: medians %v, ratio %v", p.Name, p.Medians, p.Ratio)
				}
			}
			if subject == harness.Sqlfs {
				// Every file created is one FUSE create request, seen through the metrics.
				if got := rep.Phases[0].Counters[`sqlfs_fuse_requests_total{op="create"}`]; got != float64(c.Files) {
					t.Errorf("create phase counted %v FUSE creates, want %d", got, c.Files)
				}
				// Negative entries are cached: the second stat of missing names asks nothing.
				again := slices.IndexFunc(rep.Phases, func(p harness.JSONMetric) bool { return p.Name == "stat missing again" })
				if got := rep.Phases[again].Counters[`sqlfs_fuse_requests_total{op="lookup"}`]; got != 0 {
					t.Errorf("stat missing again sent %v LOOKUPs, want 0", got)
				}
				m := rep.Memory
				if m == nil || m.Files != 500 || m.RSSRestarted <= 0 || len(m.StartupCold) != 1 || m.StartupWarm[0] <= 0 {
					t.Errorf("memory report %+v", m)
				}
			}
			if left, _ := os.ReadDir(work); len(left) != 0 {
				t.Errorf("left behind in the work dir: %v", left)
			}
		})
	}
}

// TestCProject builds the generated C project natively and checks that the
// program prints what writeCProject says it will: the build phase's check.
func TestCProject(t *testing.T) {
	dir := t.TempDir()
	want, err := writeCProject(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := runTool(command(context.Background(), dir, nil, "make", "-s", "-j2"), 0); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "prog")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != want || want != "245" {
		t.Errorf("prog printed %q, writeCProject said %q (want 245 for 5 files)", got, want)
	}
	// Nothing left to do: make -q agrees.
	if err := runTool(command(context.Background(), dir, nil, "make", "-q"), 0); err != nil {
		t.Error(err)
	}
}
