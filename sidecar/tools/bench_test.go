package tools_test

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	sfs "github.com/sqlfs/sqlfs/fs"
	"github.com/sqlfs/sqlfs/sidecar"
	"github.com/sqlfs/sqlfs/sidecar/shell"
	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// BenchmarkAutoCheckpoint measures what the automatic checkpoint adds to
// an exec on the shell backend, through two services over one store and
// backend, one taking a checkpoint before each exec (with the default
// retention) and one not, alternated so both see the same load. `echo hi`
// changes nothing, so every checkpoint after the first is the one before
// (no commit); `echo hi >f` changes the tree, so each exec takes a new
// checkpoint and, retention being full, deletes the oldest. Read
// off-ns/exec, on-ns/exec and on/off (target: at most 1.05).
//
//	go test ./sidecar/tools -run '^$' -bench AutoCheckpoint -benchtime 2000x
func BenchmarkAutoCheckpoint(b *testing.B) {
	for _, bc := range []struct{ name, command string }{
		{"read-only", "echo hi"},
		{"writes", "echo hi >f"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := sfs.Open(b.Context(), filepath.Join(b.TempDir(), "ws.db"), sfs.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			sh := shell.New(f, shell.Options{})
			defer sh.Close()
			backends := map[string]sidecar.Backend{"shell": sh}
			off := tools.NewForCore(f, backends, tools.Options{})
			on := tools.NewForCore(f, backends, tools.Options{AutoCheckpoint: &tools.DefaultCheckpointRetention})
			exec := func(s *tools.Service) time.Duration {
				start := time.Now()
				res, err := s.Exec(b.Context(), tools.ExecInput{Command: bc.command}, io.Discard, io.Discard, nil)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%s: %+v, %v", bc.command, res, err)
				}
				return time.Since(start)
			}
			// Fill retention first: the steady state deletes one
			// checkpoint per new one.
			for range tools.DefaultCheckpointRetention.Keep {
				if err := f.WriteFile("/fill", []byte(time.Now().String()), 0o644); err != nil {
					b.Fatal(err)
				}
				exec(on)
			}
			var tOff, tOn time.Duration
			for b.Loop() {
				tOff += exec(off)
				tOn += exec(on)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tOff.Nanoseconds())/n, "off-ns/exec")
			b.ReportMetric(float64(tOn.Nanoseconds())/n, "on-ns/exec")
			b.ReportMetric(float64(tOn)/float64(tOff), "on/off")
		})
	}
}

// BenchmarkUndo100 undoes an exec that changed 100 files (50 rewritten,
// 50 created) in a workspace of 1,000: the ns/op is one undo (target:
// 50 ms).
//
//	go test ./sidecar/tools -run '^$' -bench Undo100 -benchtime 20x
func BenchmarkUndo100(b *testing.B) {
	f, err := sfs.Open(b.Context(), filepath.Join(b.TempDir(), "ws.db"), sfs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sh := shell.New(f, shell.Options{})
	defer sh.Close()
	s := tools.NewForCore(f, map[string]sidecar.Backend{"shell": sh}, tools.Options{AutoCheckpoint: &tools.DefaultCheckpointRetention})
	exec := func(cmd string) string {
		res, err := s.Exec(b.Context(), tools.ExecInput{Command: cmd}, io.Discard, io.Discard, nil)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%s: %+v, %v", cmd, res, err)
		}
		return res.ID
	}
	exec("mkdir -p d && for i in $(seq 1000); do echo base > d/f$i; done")
	for b.Loop() {
		b.StopTimer()
		id := exec("for i in $(seq 50); do echo changed > d/f$i; echo new > d/n$i; done")
		b.StartTimer()
		res, err := s.Undo(b.Context(), "bench", id)
		if err != nil || len(res.Restored) != 100 {
			b.Fatalf("undo: %d restored, %v", len(res.Restored), err)
		}
	}
}
