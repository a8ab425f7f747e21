package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sqlfs/sqlfs/bench/harness"
)

// lineCounter counts the lines a command prints.
type lineCounter int

func (c *lineCounter) Write(p []byte) (int, error) {
	*c += lineCounter(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// tool runs a real command; with want >= 0 it must print exactly want lines.
func tool(ctx context.Context, want int, name string, args ...string) error {
	return runTool(command(ctx, "", nil, name, args...), want)
}

// command is a real command run in dir ("": here) with env added to ours.
func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd
}

// runTool runs cmd; with want >= 0 it must print exactly want lines.
func runTool(cmd *exec.Cmd, want int) error {
	var lines lineCounter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &lines, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", cmd, err, stderr.Bytes())
	}
	if want >= 0 && int(lines) != want {
		return fmt.Errorf("%s: printed %d lines, want %d", cmd, lines, want)
	}
	return nil
}

// warmFile reads a file so that it is in the page cache: the workloads measure the
// target, not the disk holding the archive.
func warmFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// workloadPhases extracts the generated tree with tar, then runs find and grep -r
// over it (first right after, then warm), a warm ls -lR and rm -rf, each tool
// checked for the output the tree implies.
func workloadPhases(ctx context.Context, t *harness.Target, tarPath string, tree treeInfo, rec recorder) error {
	dir := filepath.Join(t.Root, "w")
	find := func() error { return tool(ctx, tree.Files, "find", dir, "-type", "f") }
	grep := func() error { return tool(ctx, tree.Matches, "grep", "-r", "-l", needle, dir) }
	lsR := func() error {
		out, err := command(ctx, "", nil, "ls", "-lRA", dir).Output()
		if err != nil {
			return fmt.Errorf("ls -lRA: %w", err)
		}
		// A regular file's line starts with its type, "-".
		if n := bytes.Count(out, []byte("\n-")); n != tree.Files {
			return fmt.Errorf("ls -lRA listed %d files, want %d", n, tree.Files)
		}
		return nil
	}
	phases := []phase{
		{name: "untar", ops: tree.Files,
			before: func() error {
				if err := os.Mkdir(dir, 0o755); err != nil {
					return err
				}
				return warmFile(tarPath)
			},
			run: func() error { return tool(ctx, 0, "tar", "-xf", tarPath, "-C", dir) }},
		{name: "find", ops: tree.Files + tree.Dirs, run: find},
		{name: "grep -r", ops: tree.Files, run: grep},
		// Warm: after an untimed run more, so every cache holds what the
		// tool needs (on sqlfs the first stat after a file's first READ
		// fetches its atime, which the kernel drops after each READ).
		{name: "find warm", ops: tree.Files + tree.Dirs, before: find, run: find},
		{name: "grep -r warm", ops: tree.Files, before: grep, run: grep},
		// ls -l asks each file's SELinux label and ACL too (getxattr).
		{name: "ls -lR warm", ops: tree.Files + tree.Dirs, before: lsR, run: lsR},
		{name: "rm -rf", ops: tree.Files + tree.Dirs,
			run: func() error { return tool(ctx, 0, "rm", "-rf", dir) }},
	}
	return runPhases(ctx, t, phases, rec)
}
