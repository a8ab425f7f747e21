package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sqlfs/sqlfs/sidecar/tools"
)

// texter is a tool result that renders itself for a model.
type texter interface{ Text() string }

// Result is a tool's answer: the structured result and its rendering for a
// model. It is the body of a successful POST /v1/tools/NAME.
type Result struct {
	Result json.RawMessage `json:"result"`
	Text   string          `json:"text"`
}

// tool is one agent tool, served by HTTP, MCP and the local CLI alike.
type tool struct {
	name, title, desc string
	readOnly          bool
	destructive       bool
	// durable: its answer waits for the durable commit of its change, so
	// nothing acknowledged is lost to a crash. exec's result waits for a
	// commit already (its changes come from the audit trail), enough for a
	// kill of the process, not for a power loss.
	durable  bool
	schema   *jsonschema.Schema // of the arguments, for MCP clients
	resolved *jsonschema.Resolved
	run      func(ctx context.Context, s *tools.Service, args []byte) (Result, error)
}

func def[In any, Out texter](name, title, desc string, readOnly, destructive bool, fn func(*tools.Service, context.Context, In) (Out, error)) tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err)) // static types: a programming error
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", name, err))
	}
	return tool{
		name: name, title: title, desc: desc, readOnly: readOnly, destructive: destructive, durable: durableTools[name],
		schema: schema, resolved: resolved,
		run: func(ctx context.Context, s *tools.Service, args []byte) (Result, error) {
			var in In
			if err := DecodeStrict(bytes.NewReader(args), &in); err != nil {
				return Result{}, err
			}
			out, err := fn(s, ctx, in)
			if err != nil {
				return Result{}, err
			}
			b, err := json.Marshal(out)
			if err != nil {
				return Result{}, err
			}
			return Result{Result: b, Text: out.Text()}, nil
		},
	}
}

// call validates args against the tool's schema (required fields, types)
// and runs it. A panic in the tool is its caller's internal error: over
// MCP each call runs in a goroutine of its own, where it would stop the
// owner and every workspace it serves.
func (t tool) call(ctx context.Context, s *tools.Service, args []byte) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("tool panicked", "tool", t.name, "panic", p, "stack", string(debug.Stack()))
			res, err = Result{}, fmt.Errorf("tool %s: internal error (a panic, logged by the owner)", t.name)
		}
	}()
	if err := checkUTF8JSON(args); err != nil {
		return Result{}, err
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return Result{}, jsonErr(err)
	}
	if err := t.resolved.Validate(v); err != nil {
		return Result{}, apiErr(codeBadJSON, "invalid arguments for %s: %v", t.name, err)
	}
	res, err = t.run(ctx, s, args)
	if err == nil && t.durable {
		err = durable(ctx, s)
	}
	return res, err
}

// durable waits for the durable commit of every change made so far.
func durable(ctx context.Context, s *tools.Service) error {
	if err := s.Sync(ctx); err != nil {
		return fmt.Errorf("the change was made but is not yet durable (a crash may lose it): %w", err)
	}
	return nil
}

// durableTools are the tools whose answer waits for a durable commit.
var durableTools = map[string]bool{"write": true, "edit": true, "delete": true, "checkpoint": true, "restore": true, "undo": true}

const pathNote = " Paths are relative to the workspace root or absolute under /workspace; paths leaving the workspace are refused."

// toolset is every agent tool, in the order they are listed.
var toolset = []tool{
	def("read", "Read file",
		"Read a text file. Returns lines prefixed with their line numbers and a tab (the prefix is not part of the file). "+
			"Returns at most 2000 lines and 256 KiB per call; when the file continues the result says so and gives the offset to pass next. "+
			"Very long lines are cut. Binary files are refused with their type and size."+pathNote,
		true, false, (*tools.Service).Read),
	def("ls", "List directory",
		"List a directory: each entry's name, type (file, dir, symlink, other), size, permissions, modification time and symlink target, sorted by name. "+
			"Paginated with offset and limit."+pathNote,
		true, false, (*tools.Service).Ls),
	def("find", "Find paths",
		"Find files and directories by glob below a directory, without reading them. ** matches any depth (src/**/*.ts); a pattern without / matches base names at any depth (*.go). "+
			"exclude prunes matching directories such as node_modules or .git. Paginated with offset and limit."+pathNote,
		true, false, (*tools.Service).Find),
	def("grep", "Search file contents",
		"Search text files for lines matching a regular expression (RE2/Go syntax) or a literal string (fixed). "+
			"Results look like path:line:text, with optional context lines as path-line-text. Binary files are skipped. "+
			"Narrow with path, include and exclude globs; paginated with offset and limit."+pathNote,
		true, false, (*tools.Service).Grep),
	def("write", "Write file",
		"Create a file or replace its whole content, creating missing parent directories. For changing part of an existing file prefer edit. "+
			"Content is limited to 10 MiB."+pathNote,
		false, true, (*tools.Service).Write),
	def("edit", "Edit file",
		"Change a text file by exact replacements. Each old_text must match the file exactly once, whitespace and indentation included, unless replace_all is set; "+
			"include enough surrounding lines to make it unique. Edits apply in order, each to the result of the previous; if any fails, none is applied. "+
			"Returns a unified diff of the change. Read the file first to copy old_text exactly (without the line-number prefix)."+pathNote,
		false, true, (*tools.Service).Edit),
	def("delete", "Delete path",
		"Delete a file, symlink or empty directory. A non-empty directory is deleted only with recursive=true, together with everything in it. "+
			"A symlink is deleted itself, never its target."+pathNote,
		false, true, (*tools.Service).Delete),
	def("exec", "Run command",
		"Run a POSIX shell command line with the workspace at /workspace (the default working directory) and return its exit code, stdout and stderr "+
			"(each capped; redirect large output to a file and read it in pages). "+
			"Choose the backend: shell (default) is an in-process shell with built-in coreutils-style commands (ls, cat, grep, sed, awk, find, jq, sort, wc, diff, xargs…), "+
			"instant and best for inspecting and transforming files; js runs the command as a Node.js program (a fresh runtime per exec, node:fs/promises and the other core modules on the workspace, import/export, TypeScript, top-level await) in about a millisecond; "+
			"container runs a real Linux userland for real programs (compilers, interpreters, package managers, git, test runners). "+
			"The result lists the workspace paths the command changed.",
		false, true, (*tools.Service).ExecTool),
	def("publish", "Publish link",
		"Make a public, signed link to a workspace file or directory that anyone can download until it expires (default 1 hour, at most 30 days); "+
			"a directory downloads as a .tar.gz. Use it to hand the user an artifact (an image, a report, a build). Links cannot be revoked one by one."+pathNote,
		true, false, (*tools.Service).Publish),
	def("expose", "Expose port",
		"Give a port that a server inside the container listens on (a dev server such as npm run dev, vite, python -m http.server) a public, unguessable URL that proxies HTTP and WebSocket to it, "+
			"for the user to open in a browser. The server must run in a container exec that is still running (exec_id, or the only one running): "+
			"the URL stops working when that exec ends, when the TTL passes (default 1 hour, at most 24 hours) or when the operator revokes it. "+
			"Available only when the workspace is served with the container backend and a public listener.",
		false, false, (*tools.Service).Expose),
	def("checkpoint", "Checkpoint workspace",
		"Save the whole workspace as it is now in a checkpoint (instant, whatever its size; optionally named) that restore can go back to. "+
			"Take one before a risky change. Every exec also takes one automatically just before it runs (its result gives the id) so it can be undone.",
		false, false, (*tools.Service).CheckpointTool),
	def("restore", "Restore checkpoint",
		"Replace the whole workspace with a checkpoint taken earlier (by id or name): every change made since is gone, files created since are deleted. "+
			"To take back a single exec instead, use undo. Read-only paths are never rewritten: a restore that would is refused.",
		false, true, (*tools.Service).RestoreTool),
	def("diff_checkpoint", "Diff checkpoint",
		"List what changed between a checkpoint and the workspace now, or between two checkpoints, as git's name-status: "+
			"A (added), M (modified) or D (deleted), a tab and the path, one per line, sorted. Paginated with offset and limit.",
		true, false, (*tools.Service).DiffTool),
	def("undo", "Undo exec",
		"Undo one exec: put back exactly the paths it changed as they were just before it ran, leaving everything else as it is. "+
			"Refused, naming the paths, when a later exec or tool changed the same paths (their work would be lost): restore a checkpoint instead.",
		false, true, (*tools.Service).UndoTool),
	def("wait_for_change", "Wait for a change",
		"Wait until something changes the workspace (a tool, an exec, a user through the mount) and return the changes: sequence number, operation, path and who made it. "+
			"Returns at once when there are changes after the given sequence number, else waits up to timeout_ms (default 30 s, at most 120 s). "+
			"Pass the result's next as after to the next call: no change is missed or returned twice. Narrow with path_prefix."+pathNote,
		true, false, (*tools.Service).WaitForChange),
}

func findTool(name string) (tool, bool) {
	for _, t := range toolset {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// ToolNames lists the tools in order.
func ToolNames() []string {
	names := make([]string, len(toolset))
	for i, t := range toolset {
		names[i] = t.name
	}
	return names
}
