package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfs/sqlfs/bench/harness"
)

// memReport is the memory and start-up section: one store of Files files.
type memReport struct {
	Files      int   `json:"files"`
	StoreBytes int64 `json:"store_bytes"`
	// RSS of sqlfs-mount after creating and stat'ing every file, and its peak.
	RSSPopulated int64 `json:"rss_populated_bytes"`
	HWMPopulated int64 `json:"peak_rss_populated_bytes"`
	// The same after a restart and a stat of every file: what holding the tree costs
	// without the history of having written it.
	RSSRestarted int64 `json:"rss_restarted_bytes"`
	HWMRestarted int64 `json:"peak_rss_restarted_bytes"`
	// Seconds from starting sqlfs-mount to the first successful stat of a file in it;
	// cold after drop_caches, warm with the store in the page cache.
	StartupCold []float64 `json:"startup_cold_seconds"`
	StartupWarm []float64 `json:"startup_warm_seconds"`
}

// memoryAndStartup populates one sqlfs store with files small files, measures the
// mount's memory, then restarts it rounds times cold and warm, timing each start.
func memoryAndStartup(ctx context.Context, env *harness.Env, files, rounds int) (rep memReport, err error) {
	t, err := env.Open(ctx, harness.Sqlfs)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	m := t.Mount()
	// 1000 files per directory, 128 bytes each: the cost measured is metadata.
	tree := newFileTree(filepath.Join(t.Root, "m"), files, max(1, files/1000), 128)
	slog.Info("memory: populating", "files", files)
	if err := tree.create(ctx, false); err != nil {
		return rep, err
	}
	if err := stat(ctx, tree.files, nil); err != nil {
		return rep, err
	}
	if rep.RSSPopulated, rep.HWMPopulated, err = harness.ProcMemory(m.PID()); err != nil {
		return rep, err
	}
	probe := tree.files[len(tree.files)-1]
	for i := range 2 * rounds {
		cold := i%2 == 0
		slog.Info("start-up", "restart", i+1, "of", 2*rounds, "cold", cold)
		if err := m.Stop(); err != nil {
			return rep, err
		}
		if cold {
			if err := harness.DropCaches(); err != nil {
				return rep, err
			}
		}
		d, err := timeStart(ctx, m, probe)
		if err != nil {
			return rep, err
		}
		if cold {
			rep.StartupCold = append(rep.StartupCold, d.Seconds())
		} else {
			rep.StartupWarm = append(rep.StartupWarm, d.Seconds())
		}
	}
	if err := stat(ctx, tree.files, nil); err != nil {
		return rep, err
	}
	if rep.RSSRestarted, rep.HWMRestarted, err = harness.ProcMemory(m.PID()); err != nil {
		return rep, err
	}
	rep.Files = len(tree.files)
	rep.StoreBytes = t.StoreSize()
	return rep, nil
}

// timeStart starts the mount and polls probe until a stat of it succeeds: before the
// mount is up the stat sees the empty mount point and fails.
func timeStart(ctx context.Context, m *harness.Mount, probe string) (time.Duration, error) {
	start := time.Now()
	if err := m.Spawn(); err != nil {
		return 0, err
	}
	var st unix.Stat_t
	for unix.Lstat(probe, &st) != nil {
		if exited, xerr := m.Exited(); exited {
			return 0, fmt.Errorf("%w during start-up: %v", harness.ErrMountExited, xerr)
		}
		if time.Since(start) > 2*time.Minute {
			return 0, fmt.Errorf("start-up: %s not visible after 2m", probe)
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		time.Sleep(200 * time.Microsecond)
	}
	d := time.Since(start)
	// The stat proves the mount serves; mountinfo must agree before the next restart.
	return d, m.WaitReady(ctx, time.Minute)
}
