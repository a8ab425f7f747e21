package main

import (
	"archive/tar"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path"
	"strings"
	"time"
)

// needle is planted in a known number of generated files, for the grep -r workload.
const needle = "SQLFS_BENCH_NEEDLE"

// treeInfo describes a generated tree.
type treeInfo struct {
	Files   int   `json:"files"`
	Dirs    int   `json:"dirs"`
	Bytes   int64 `json:"bytes"`
	Matches int   `json:"needle_files"` // files containing needle
}

// treeGen writes a node_modules-shaped tree as a tar stream: packages (a quarter of
// them scoped) with package.json, README, LICENSE, lib/ and dist/ sources, type
// definitions, and some nested node_modules. File sizes are log-normal around 1.5 KB
// with a long tail, like real JavaScript dependencies. The same seed gives the same bytes.
type treeGen struct {
	rng    *rand.Rand
	tw     *tar.Writer
	corpus []byte
	dirs   map[string]bool
	names  map[string]bool
	info   treeInfo
}

var (
	syllables = []string{"lo", "da", "sh", "re", "act", "ex", "press", "ba", "bel", "core", "js",
		"web", "pack", "ts", "lint", "es", "vue", "mo", "ment", "ax", "ios", "chalk", "glob", "semver",
		"yar", "gs", "uuid", "minimist", "debug", "ms", "tslib", "rx", "node", "fetch", "zod", "ajv"}
	suffixes = []string{"", "", "", "-utils", "-core", "-plugin", "-loader", "-parser", "-types", "-cli"}
	words    = []string{"function", "return", "const", "let", "var", "if", "else", "for", "while",
		"module.exports", "require", "import", "export", "default", "class", "extends", "this",
		"null", "undefined", "true", "false", "new", "Promise", "async", "await", "throw", "Error",
		"options", "value", "result", "callback", "index", "length", "prototype", "Object.keys",
		"=>", "{", "}", "(", ")", ";", "===", "!==", "&&", "||", "+", "0", "1", "'use strict'"}
	// modTime is fixed so the archive is byte-for-byte reproducible.
	modTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
)

// writeNodeTree writes a tree of about files files under node_modules/ to w.
func writeNodeTree(w io.Writer, files int, seed uint64) (treeInfo, error) {
	g := &treeGen{
		rng:   rand.New(rand.NewPCG(seed, seed^0x5eed)),
		tw:    tar.NewWriter(w),
		dirs:  map[string]bool{},
		names: map[string]bool{},
	}
	g.corpus = g.text(1 << 20)
	for g.info.Files < files {
		if err := g.pkg("node_modules", 0); err != nil {
			return g.info, err
		}
	}
	if err := g.tw.Close(); err != nil {
		return g.info, fmt.Errorf("tar: %w", err)
	}
	return g.info, nil
}

// text makes n bytes of JavaScript-looking lines.
func (g *treeGen) text(n int) []byte {
	var b strings.Builder
	b.Grow(n + 100)
	for b.Len() < n {
		for range 1 + g.rng.IntN(12) {
			b.WriteString(words[g.rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return []byte(b.String()[:n])
}

func (g *treeGen) name() string {
	for {
		var b strings.Builder
		for range 1 + g.rng.IntN(3) {
			b.WriteString(syllables[g.rng.IntN(len(syllables))])
		}
		b.WriteString(suffixes[g.rng.IntN(len(suffixes))])
		if g.rng.IntN(4) == 0 {
			b.WriteString(fmt.Sprint(g.rng.IntN(10)))
		}
		if n := b.String(); !g.names[n] {
			g.names[n] = true
			return n
		}
	}
}

func (g *treeGen) size() int {
	s := math.Exp(math.Log(1500) + 1.2*g.rng.NormFloat64())
	return int(min(max(s, 40), 256<<10))
}

func (g *treeGen) dir(p string) error {
	if g.dirs[p] {
		return nil
	}
	if parent := path.Dir(p); parent != "." {
		if err := g.dir(parent); err != nil {
			return err
		}
	}
	g.dirs[p] = true
	g.info.Dirs++
	return g.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755,
		ModTime: modTime, Uid: 1000, Gid: 1000, Format: tar.FormatPAX})
}

// file writes a file of size bytes; source files sometimes carry the needle.
func (g *treeGen) file(p string, size int) error {
	if err := g.dir(path.Dir(p)); err != nil {
		return err
	}
	off := g.rng.IntN(len(g.corpus) - min(size, len(g.corpus)) + 1)
	data := g.corpus[off : off+min(size, len(g.corpus))]
	if strings.HasSuffix(p, ".js") && g.rng.IntN(50) == 0 {
		data = append([]byte("// TODO "+needle+"\n"), data...)
		g.info.Matches++
	}
	if err := g.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: 0o644, Size: int64(len(data)),
		ModTime: modTime, Uid: 1000, Gid: 1000, Format: tar.FormatPAX}); err != nil {
		return fmt.Errorf("tar header %s: %w", p, err)
	}
	if _, err := g.tw.Write(data); err != nil {
		return fmt.Errorf("tar %s: %w", p, err)
	}
	g.info.Files++
	g.info.Bytes += int64(len(data))
	return nil
}

// geometric draws a count with the given mean, at least 1.
func (g *treeGen) geometric(mean float64) int {
	return 1 + int(g.rng.ExpFloat64()*(mean-1))
}

func (g *treeGen) pkg(parent string, depth int) error {
	name := g.name()
	if g.rng.IntN(4) == 0 {
		name = "@" + g.name() + "/" + name
	}
	root := parent + "/" + name
	type spec struct {
		path string
		size int
	}
	files := []spec{{"package.json", 300 + g.rng.IntN(1500)}, {"index.js", g.size()}}
	for _, opt := range []struct {
		path string
		pct  int
	}{{"README.md", 90}, {"LICENSE", 80}, {"CHANGELOG.md", 30}, {".npmignore", 10}} {
		if g.rng.IntN(100) < opt.pct {
			files = append(files, spec{opt.path, g.size()})
		}
	}
	subdirs := []string{"lib"}
	for range g.rng.IntN(3) {
		subdirs = append(subdirs, "lib/"+g.name())
	}
	for range g.geometric(8) {
		d := subdirs[g.rng.IntN(len(subdirs))]
		files = append(files, spec{fmt.Sprintf("%s/%s.js", d, g.name()), g.size()})
	}
	if g.rng.IntN(100) < 40 {
		for range g.geometric(4) {
			base := "dist/" + g.name()
			files = append(files, spec{base + ".js", g.size()}, spec{base + ".js.map", g.size()})
		}
	}
	if g.rng.IntN(100) < 30 {
		for range g.geometric(3) {
			files = append(files, spec{"types/" + g.name() + ".d.ts", g.size()})
		}
	}
	for _, f := range files {
		if err := g.file(root+"/"+f.path, f.size); err != nil {
			return err
		}
	}
	if depth == 0 && g.rng.IntN(10) == 0 {
		for range 1 + g.rng.IntN(3) {
			if err := g.pkg(root+"/node_modules", depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
