// Command bench measures sqlfs against a native directory on the same disk: metadata
// phases on 4 KiB files, real-tool workloads on a node_modules-shaped tree, and the
// mount's memory and start-up time. See README.md.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sqlfs/sqlfs/bench/harness"
)

type config struct {
	harness.Options
	Files     int    `json:"files"`
	Dirs      int    `json:"dirs"`
	TreeFiles int    `json:"tree_files"`
	MemFiles  int    `json:"mem_files"`
	BigMiB    int    `json:"big_file_mib"`
	Seed      uint64 `json:"seed"`
	// The developer workloads: real git, make and npm on each target.
	GitFiles   int    `json:"git_files"`
	BuildFiles int    `json:"build_files"`
	NPM        string `json:"npm,omitempty"`
	NPMCache   string `json:"npm_cache,omitempty"`
}

// report is the -json output.
type report struct {
	Config config                  `json:"config"`
	Host   map[string]string       `json:"host"`
	Cold   map[harness.Kind]string `json:"cold_means"`
	Tree   treeInfo                `json:"tree"`
	// GitTree is the tree git adds; NPMFiles the files npm ci installs.
	GitTree  treeInfo             `json:"git_tree"`
	NPMFiles int                  `json:"npm_files,omitempty"`
	Phases   []harness.JSONMetric `json:"phases"`
	Memory   *memReport           `json:"memory,omitempty"`
}

func main() {
	var c config
	var quick bool
	c.Register(flag.CommandLine)
	flag.IntVar(&c.Files, "files", 10000, "files per metadata phase")
	flag.IntVar(&c.Dirs, "dirs", 10, "directories the files are spread over")
	flag.IntVar(&c.TreeFiles, "tree-files", 30000, "files in the generated node_modules tree (0 skips the workloads)")
	flag.IntVar(&c.MemFiles, "mem-files", 100000, "files in the memory and start-up store (0 skips it)")
	flag.IntVar(&c.BigMiB, "big-file-mib", 64, "MiB of the file the large-file phases write, copy, overwrite and read (0 skips them)")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the generated tree")
	flag.IntVar(&c.GitFiles, "git-files", 0, "files in the tree real git adds, commits, stats and clones (0 skips git)")
	flag.IntVar(&c.BuildFiles, "build-files", 0, "C sources in the project make -j2 builds (0 skips the build)")
	flag.StringVar(&c.NPM, "npm", "", "directory of a project with package.json and package-lock.json for npm ci (empty skips npm; the first run needs the npm registry)")
	flag.StringVar(&c.NPMCache, "npm-cache", defaultNPMCache(), "npm's cache for -npm, filled by the first run and reused")
	flag.BoolVar(&quick, "quick", false, "smoke-test sizes: 300 files, 1000-file tree, 2000-file memory store, 1 round")
	flag.Parse()
	if quick {
		c.Files, c.TreeFiles, c.MemFiles, c.BigMiB, c.Rounds = 300, 1000, 2000, 8, 1
	}
	harness.Main("bench", func(ctx context.Context, out io.Writer) error { return run(ctx, c, out) })
}

// run does everything a bench invocation does and writes the report to out.
func run(ctx context.Context, c config, out io.Writer) (err error) {
	if c.Files < 0 || c.GitFiles < 0 || c.BuildFiles < 0 || c.TreeFiles < 0 || c.BigMiB < 0 {
		return errors.New("-files, -git-files, -build-files, -tree-files and -big-file-mib must not be negative")
	}
	env, cleanup, err := c.Prepare(ctx, "sqlfs-bench")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cleanup()) }()
	kinds := c.Kinds()
	res := harness.NewResults(c.Subject, harness.Native, kinds[2:]...)
	rep := report{Config: c, Host: harness.Host(env.WorkDir), Cold: c.ColdMeanings()}

	tarPath := filepath.Join(env.WorkDir, "node_modules.tar")
	if c.TreeFiles > 0 {
		slog.Info("generating tree", "files", c.TreeFiles, "seed", c.Seed)
		if rep.Tree, err = writeTreeFile(tarPath, c.TreeFiles, c.Seed); err != nil {
			return err
		}
	}
	gitTar := filepath.Join(env.WorkDir, "git.tar")
	if c.GitFiles > 0 {
		if rep.GitTree, err = writeTreeFile(gitTar, c.GitFiles, c.Seed+1); err != nil {
			return err
		}
	}
	cSrc := filepath.Join(env.WorkDir, "cproject")
	var cWant string
	if c.BuildFiles > 0 {
		if cWant, err = writeCProject(cSrc, c.BuildFiles); err != nil {
			return err
		}
	}
	var npm *npmProject
	if c.NPM != "" {
		if npm, err = prepareNPM(ctx, c.NPM, c.NPMCache, filepath.Join(env.WorkDir, "npm-fill")); err != nil {
			return err
		}
		rep.NPMFiles = npm.files
	}
	err = env.RunRounds(ctx, kinds, c.Rounds, func(ctx context.Context, t *harness.Target) error {
		rec := func(name string, ops int, d time.Duration, counters map[string]float64) {
			slog.Info("phase", "target", t.Kind, "phase", name, "ms", d.Milliseconds())
			res.Add(name, "s", ops, t.Kind, d.Seconds())
			if counters != nil {
				res.AddCounters(name, counters)
			}
		}
		if c.Files > 0 {
			if err := filePhases(ctx, t, c.Files, c.Dirs, rec); err != nil {
				return err
			}
		}
		if c.BigMiB > 0 {
			if err := bigFilePhases(ctx, t, c.BigMiB, rec); err != nil {
				return err
			}
		}
		if c.TreeFiles > 0 {
			if err := workloadPhases(ctx, t, tarPath, rep.Tree, rec); err != nil {
				return err
			}
		}
		if c.GitFiles > 0 {
			if err := gitPhases(ctx, t, gitTar, rep.GitTree, rec); err != nil {
				return err
			}
		}
		if c.BuildFiles > 0 {
			if err := buildPhases(ctx, t, cSrc, c.BuildFiles, cWant, rec); err != nil {
				return err
			}
		}
		if npm != nil {
			return npmPhases(ctx, t, npm, rec)
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.Phases = res.JSON()
	if c.Subject == harness.Sqlfs && c.MemFiles > 0 {
		mem, err := memoryAndStartup(ctx, env, c.MemFiles, c.Rounds)
		if err != nil {
			return fmt.Errorf("memory and start-up: %w", err)
		}
		rep.Memory = &mem
	}
	rep.Config = c // Prepare may have filled in the binary and its tags
	if c.JSON {
		return harness.WriteJSON(out, rep)
	}
	return writeText(out, rep, res)
}

func writeTreeFile(p string, files int, seed uint64) (treeInfo, error) {
	f, err := os.Create(p)
	if err != nil {
		return treeInfo{}, err
	}
	info, err := writeNodeTree(f, files, seed)
	return info, errors.Join(err, f.Close())
}

func writeText(w io.Writer, rep report, res *harness.Results) error {
	c := rep.Config
	fmt.Fprint(w, "sqlfs bench: ")
	c.WriteHeader(w, rep.Host)
	fmt.Fprintf(w, "metadata phases: %d files of 4 KiB over %d dirs; large file: %d MiB in 1 MiB writes; workloads: tree of %d files, %d dirs, %.1f MiB\n",
		c.Files, c.Dirs, c.BigMiB, rep.Tree.Files, rep.Tree.Dirs, float64(rep.Tree.Bytes)/(1<<20))
	fmt.Fprintf(w, "git: tree of %d files, %d dirs, %.1f MiB; make -j2: %d C sources; npm ci: %d files (%s)\n\n",
		rep.GitTree.Files, rep.GitTree.Dirs, float64(rep.GitTree.Bytes)/(1<<20), c.BuildFiles, rep.NPMFiles, cmp.Or(c.NPM, "skipped"))
	if err := res.WriteTable(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := res.WriteCounters(w); err != nil {
		return err
	}
	if m := rep.Memory; m != nil {
		mib := func(b int64) float64 { return float64(b) / (1 << 20) }
		fmt.Fprintf(w, "\nmemory and start-up, one store of %d files (%.1f MiB on disk):\n", m.Files, mib(m.StoreBytes))
		fmt.Fprintf(w, "  RSS after creating and stat'ing all: %.1f MiB (peak %.1f MiB)\n", mib(m.RSSPopulated), mib(m.HWMPopulated))
		fmt.Fprintf(w, "  RSS after a restart and stat'ing all: %.1f MiB (peak %.1f MiB)\n", mib(m.RSSRestarted), mib(m.HWMRestarted))
		fmt.Fprintf(w, "  start-up to first successful stat: cold %.3f s, warm %.3f s (medians of %d)\n",
			harness.Median(m.StartupCold), harness.Median(m.StartupWarm), len(m.StartupCold))
	}
	return nil
}

// defaultNPMCache is a cache outside the run's work directory, so that the
// registry is asked once, not every run.
func defaultNPMCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "sqlfs-bench", "npm")
}
