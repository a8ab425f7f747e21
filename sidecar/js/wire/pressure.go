package wire

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The machine's CPU pressure decides whether spinning may pay: a spinner
// holds a CPU, so it pays only while the peer has another to answer on.
// The owner samples the kernel's count of time some task waited for a CPU
// (/proc/pressure/cpu, "some" total) at most every pressureEvery, from a
// receiver about to spin, and spinning stops while that time passes
// pressureMax of the wall time; the owner tells its worker (which cannot
// read /proc) through the shared page.
var (
	pressureEvery = 10 * time.Millisecond
	pressureMax   = 0.2

	pressureMu   sync.Mutex
	pressureFile *os.File
	pressureOff  bool // no PSI here: the back-off alone decides
	pressureAt   time.Time
	pressureUs   int64
	pressureBuf  [256]byte

	contended    atomic.Bool
	pressureNext atomic.Int64 // unix ns of the next sample
)

// cpuContended says whether the machine's CPUs were contended at the
// last sample, taking a new one when it is due.
func cpuContended(now time.Time) bool {
	if now.UnixNano() < pressureNext.Load() || !pressureMu.TryLock() {
		return contended.Load()
	}
	defer pressureMu.Unlock()
	pressureNext.Store(now.Add(pressureEvery).UnixNano())
	if pressureOff {
		return false
	}
	if pressureFile == nil {
		f, err := os.Open("/proc/pressure/cpu")
		if err != nil {
			pressureOff = true
			return false
		}
		pressureFile = f
	}
	n, err := pressureFile.ReadAt(pressureBuf[:], 0)
	if n == 0 {
		pressureOff = err != nil
		return false
	}
	us, ok := someTotal(pressureBuf[:n])
	if !ok {
		pressureOff = true
		return false
	}
	if !pressureAt.IsZero() {
		wall := now.Sub(pressureAt).Microseconds()
		contended.Store(wall > 0 && float64(us-pressureUs) > pressureMax*float64(wall))
	}
	pressureAt, pressureUs = now, us
	return contended.Load()
}

// someTotal is the "total=" of the file's first line ("some ...").
func someTotal(b []byte) (int64, bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	_, v, ok := bytes.Cut(line, []byte(" total="))
	if !ok {
		return 0, false
	}
	us, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	return us, err == nil
}
