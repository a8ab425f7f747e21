package testenv

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// maxSlack caps the stretch, so a real hang still fails the test.
const maxSlack = 20

// Slack stretches a time bound chosen on a quiet machine by how
// oversubscribed the CPUs are now (the 1-minute load average over the
// CPU count, never below 1): at load 30 on 2 CPUs a goroutine gets a
// fifteenth of the CPU it had when the bound was chosen, and a bound
// that held there fails on correct code.
func Slack(d time.Duration) time.Duration {
	return time.Duration(float64(d) * slackFactor(LoadAverage(), runtime.NumCPU()))
}

func slackFactor(load float64, cpus int) float64 {
	return min(max(load/float64(max(cpus, 1)), 1), maxSlack)
}

// LoadAverage is /proc/loadavg's first figure (the 1-minute load), 0 where
// it cannot be read; tests that report figures print it beside them.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), " ")
	load, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return 0
	}
	return load
}
