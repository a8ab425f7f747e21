package gojq_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// loaded stretches a bound chosen on a quiet machine by how oversubscribed
// the CPUs are now (1-minute load over CPUs, 1 to 20), as sqlfs's
// internal/testenv.Slack does; this module cannot import it. Under the race
// detector at load 20 on 2 CPUs, the copies of a 3M-element array between
// two cancellation checks took 2.3 s.
func loaded(d time.Duration) time.Duration {
	b, _ := os.ReadFile("/proc/loadavg")
	first, _, _ := strings.Cut(string(b), " ")
	load, _ := strconv.ParseFloat(first, 64)
	return time.Duration(float64(d) * min(max(load/float64(runtime.NumCPU()), 1), 20))
}
