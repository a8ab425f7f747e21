// Command fio runs the fio job files of this directory on a fresh sqlfs mount and on a
// native directory on the same disk, alternating and repeated, and prints medians and
// ratios. See ../bench/README.md.
package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sqlfs/sqlfs/bench/harness"
)

//go:embed *.fio
var jobFiles embed.FS

type config struct {
	harness.Options
	Size     string `json:"size"`      // sequential file size, in fio's notation
	RandSize string `json:"rand_size"` // bytes moved by each random job
	Runtime  int    `json:"runtime_seconds"`
}

// job is one measured fio run; cold jobs start after Target.Cold.
type job struct {
	name string
	file string
	cold bool
	dir  string // "read" or "write": which side of fio's result to use
	unit string // "MiB/s" or "IOPS"
}

// jobs run in this order on every target: reads need the file seqwrite made.
var jobs = []job{
	{"seq write 1M +fsync", "seqwrite.fio", false, "write", "MiB/s"},
	{"seq read 1M cold", "seqread.fio", true, "read", "MiB/s"},
	{"seq read 1M warm", "seqread.fio", false, "read", "MiB/s"},
	{"rand read 4k cold", "randread.fio", true, "read", "IOPS"},
	{"rand read 4k warm", "randread.fio", false, "read", "IOPS"},
	{"rand write 4k +fsync", "randwrite.fio", false, "write", "IOPS"},
}

type report struct {
	Config config                  `json:"config"`
	Host   map[string]string       `json:"host"`
	Cold   map[harness.Kind]string `json:"cold_means"`
	Jobs   []harness.JSONMetric    `json:"jobs"`
}

func main() {
	var c config
	var quick bool
	c.Register(flag.CommandLine)
	flag.StringVar(&c.Size, "size", "1g", "size of the sequential file (fio notation: 64m, 1g)")
	flag.StringVar(&c.RandSize, "rand-size", "256m", "bytes read or written by each random job")
	flag.IntVar(&c.Runtime, "runtime", 60, "cap in seconds on each random job")
	flag.BoolVar(&quick, "quick", false, "smoke-test sizes: 64m sequential, 16m random, 1 round")
	flag.Parse()
	if quick {
		c.Size, c.RandSize, c.Rounds = "64m", "16m", 1
	}
	harness.Main("fio", func(ctx context.Context, out io.Writer) error { return run(ctx, c, out) })
}

func run(ctx context.Context, c config, out io.Writer) (err error) {
	if _, err := exec.LookPath("fio"); err != nil {
		return fmt.Errorf("fio is not installed (Debian package fio): %w", err)
	}
	env, cleanup, err := c.Prepare(ctx, "sqlfs-fio")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	jobDir := filepath.Join(env.WorkDir, "jobs")
	if err := os.CopyFS(jobDir, jobFiles); err != nil {
		return fmt.Errorf("job files: %w", err)
	}
	kinds := c.Kinds()
	res := harness.NewResults(c.Subject, harness.Native, kinds[2:]...)
	err = env.RunRounds(ctx, kinds, c.Rounds, func(ctx context.Context, t *harness.Target) error {
		for _, j := range jobs {
			if err := t.Settle(); err != nil {
				return err
			}
			if j.cold {
				if err := t.Cold(ctx); err != nil {
					return err
				}
			}
			before, err := t.Counters(ctx)
			if err != nil {
				return err
			}
			v, err := runJob(ctx, c, filepath.Join(jobDir, j.file), t.Root, j)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", j.name, t.Kind, err)
			}
			slog.Info("job", "target", t.Kind, "job", j.name, j.unit, int64(v))
			res.Add(j.name, j.unit, 0, t.Kind, v)
			if before != nil {
				after, err := t.Counters(ctx)
				if err != nil {
					return err
				}
				res.AddCounters(j.name, harness.Delta(before, after))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep := report{Config: c, Host: harness.Host(env.WorkDir), Cold: c.ColdMeanings(), Jobs: res.JSON()}
	if c.JSON {
		return harness.WriteJSON(out, rep)
	}
	fmt.Fprint(out, "sqlfs fio: ")
	c.WriteHeader(out, rep.Host)
	fmt.Fprintf(out, "sequential file %s, random jobs %s each (capped at %d s), psync engine, one job\n\n", c.Size, c.RandSize, c.Runtime)
	if err := res.WriteTable(out); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return res.WriteCounters(out)
}

// fioOutput is the part of fio's JSON output the runner reads.
type fioOutput struct {
	Jobs []struct {
		Read  fioSide `json:"read"`
		Write fioSide `json:"write"`
	} `json:"jobs"`
}

type fioSide struct {
	IOBytes int64   `json:"io_bytes"`
	BWBytes float64 `json:"bw_bytes"`
	IOPS    float64 `json:"iops"`
}

// runJob runs fio on one job file in dir and returns the job's rate in j.unit.
func runJob(ctx context.Context, c config, jobFile, dir string, j job) (float64, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "fio", "--output-format=json", jobFile)
	cmd.Env = append(os.Environ(), "FIO_DIR="+dir, "FIO_SIZE="+c.Size, "FIO_RAND_SIZE="+c.RandSize,
		fmt.Sprintf("FIO_RUNTIME=%d", c.Runtime))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %w: %s", cmd, err, stderr.Bytes())
	}
	return parseFio(stdout.Bytes(), j)
}

// parseFio reads the rate of j from fio's JSON output, which fio may precede with
// warnings.
func parseFio(b []byte, j job) (float64, error) {
	if i := bytes.IndexByte(b, '{'); i > 0 {
		b = b[i:]
	}
	var o fioOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return 0, fmt.Errorf("fio output: %w", err)
	}
	if len(o.Jobs) != 1 {
		return 0, fmt.Errorf("fio output: %d jobs, want 1", len(o.Jobs))
	}
	side := o.Jobs[0].Read
	if j.dir == "write" {
		side = o.Jobs[0].Write
	}
	if side.IOBytes == 0 {
		return 0, fmt.Errorf("fio %s: no bytes %s", j.file, j.dir)
	}
	if j.unit == "IOPS" {
		return side.IOPS, nil
	}
	return side.BWBytes / (1 << 20), nil
}
