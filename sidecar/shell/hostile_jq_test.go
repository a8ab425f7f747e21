package shell_test

import (
	"fmt"
	"strings"
	"time"
)

// hostileJqCases are the hostile suite's cases for jq's values and for the
// built-ins that stream where GNU's do (base64 -d, comm); TestHostileCommands
// runs them after its own.
func hostileJqCases() []hostileCase {
	const mem = "max_memory_bytes"
	memMsg := fmt.Sprintf("memory limit of %d bytes exceeded", hostileExecMemory)
	line := strings.Repeat("y", 99)
	// 100 MB, more than an exec may hold, in lines of 100 bytes.
	stream := fmt.Sprintf("yes %s | head -n 1000000", line)
	return []hostileCase{
		// jq builds nothing larger than the exec's budget.
		{name: "jq setpath at a far index", cmd: `jq -n 'setpath(["a", 1e8]; 1)'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq assignment at a far index", cmd: `jq -n '.[1e8] = 1'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq fromstream at a far index", cmd: `jq -n 'fromstream([[1e8], 1], [[1e8]])'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq update-multiply", cmd: `jq -n '{"x": "ab"} | .x *= 1e9'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq collect range", cmd: `jq -n '[range(1e9)] | length'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq collect repeat", cmd: `jq -n '[repeat(1)] | length'`, limit: mem, code: 125, stderr: memMsg},
		// The budget's error ends the exec: try cannot catch it.
		{name: "jq repetition in try", cmd: `jq -n 'try ("x" * 1e9) catch "caught"'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq string doubling", cmd: `jq -n '"x" | until(length > 1e12; . + .) | length'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq tojson of shared parts", cmd: `jq -n 'def f: [., .]; reduce range(40) as $i (0; f) | tojson | length'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq inputs of an endless stream", cmd: `yes 1 | jq -n '[inputs] | length'`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq slurp of an endless stream", cmd: `yes 1 | jq -s length`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq one endless value", cmd: `{ echo '['; yes '1,'; } | jq length`, limit: mem, code: 125, stderr: memMsg},
		{name: "jq one endless raw line", cmd: `yes | tr -d '\n' | jq -R length`, limit: mem, code: 125, stderr: memMsg},
		// A value nested a million deep would overflow the goroutine's
		// stack (fatal to the owner) when walked.
		{name: "jq deep tojson", cmd: `jq -n 'reduce range(1000000) as $i (null; [.]) | tojson | length'`, code: 5, stderr: "nested deeper than 10000 levels"},
		{name: "jq deep comparison", cmd: `jq -n 'reduce range(1000000) as $i (null; [.]) | . == .'`, code: 5, stderr: "nested deeper than 10000 levels"},
		{name: "jq deep output", cmd: `jq -nc 'reduce range(1000000) as $i (null; [.])' | wc -c`, stdout: "544\n"},
		{name: "jq endless loop", cmd: `jq -n 'last(range(1e15))'`, timeout: time.Second, limit: "timeout", code: 124},
		// Streaming where GNU's do.
		{name: "base64 -d streams", cmd: stream + " | base64 -w0 | base64 -d | tail -1", stdout: line + "\n"},
		{name: "comm streams", cmd: fmt.Sprintf("comm -12 <(%s) <(%s) | wc -l", stream, stream), stdout: "1000000\n"},
	}
}
