package js

import (
	"container/list"
	"crypto/sha256"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dop251/goja"
)

// ProgramCacheBytes bounds the compiled-program cache of a process (a
// worker's, or the owner's for in-process programs): an entry costs about
// four times its source (measured: TypeScript's 8.6 MiB typescript.js
// compiles to 33 MiB), so this holds a few big packages.
const ProgramCacheBytes = 160 << 20

// programs caches compiled modules by file name and content, so a package
// is parsed, transformed and compiled once per process, not once per
// exec. A goja Program is immutable and belongs to no runtime: every exec
// runs it in its own fresh runtime, so what one exec's JavaScript does
// reaches no other through it. The name is part of the key because the
// program records it (__filename, stacks, require's base directory).
var programs = newProgramCache(ProgramCacheBytes)

type programKey [sha256.Size]byte

type programCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	lru   *list.List // of *cachedProgram, most recent first
	byKey map[programKey]*list.Element

	hits, misses atomic.Int64
}

type cachedProgram struct {
	key  programKey
	prg  *goja.Program
	cost int64
}

func newProgramCache(max int64) *programCache {
	return &programCache{max: max, lru: list.New(), byKey: map[programKey]*list.Element{}}
}

func keyOf(file string, src []byte) programKey {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(file))))
	h.Write([]byte(file))
	h.Write(src)
	var k programKey
	h.Sum(k[:0])
	return k
}

// compile returns the program of file with source src, compiling it with
// build on a miss. Errors are not cached: a file that fails is read anew.
func (c *programCache) compile(file string, src []byte, build func() (*goja.Program, error)) (*goja.Program, error) {
	key := keyOf(file, src)
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		c.hits.Add(1)
		return e.Value.(*cachedProgram).prg, nil
	}
	c.mu.Unlock()
	c.misses.Add(1)
	prg, err := build()
	if err != nil {
		return nil, err
	}
	cost := 4 * int64(len(src))
	if cost > c.max {
		return prg, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok { // compiled meanwhile by another exec
		return prg, nil
	}
	c.byKey[key] = c.lru.PushFront(&cachedProgram{key: key, prg: prg, cost: cost})
	c.size += cost
	for c.size > c.max {
		old := c.lru.Remove(c.lru.Back()).(*cachedProgram)
		delete(c.byKey, old.key)
		c.size -= old.cost
	}
	return prg, nil
}

// stats are the cache's hits and misses so far.
func (c *programCache) stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }
