package fuse

import (
	"encoding/binary"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// requestsAnswered counts the requests this process's Linux mounts have answered;
// the low-latency mode watches it to tell a busy mount from an idle one.
var requestsAnswered atomic.Uint64

// cpuLatencyFile is the kernel's PM QoS interface: while a process holds
// it open with a value written, no CPU enters an idle state slower to
// leave than that many microseconds.
const cpuLatencyFile = "/dev/cpu_dma_latency"

// Low-latency mode's rhythm: how often it looks at the request count, and
// how long without a request before the CPUs may sleep again.
const (
	latencyTick = 20 * time.Millisecond
	latencyIdle = 200 * time.Millisecond
)

// keepCPUsAwake holds a PM QoS request of 0 µs while the mount answers
// requests and drops it after latencyIdle without one, until done closes.
//
// Why: a FUSE round trip wakes the server, then the caller. On a VM whose
// idle vCPUs halt (Firecracker here: haltpoll with guest_halt_poll_ns=0),
// each wake-up of a halted vCPU costs tens of µs, most of a round trip
// (a missing-name stat: 53 µs, 6x the disk; with the CPUs polling, 3x).
// Polling burns the CPUs it keeps awake, so it is held only while busy.
func keepCPUsAwake(done <-chan struct{}, log *slog.Logger) {
	var (
		qos  *os.File
		last = requestsAnswered.Load()
		idle time.Duration
	)
	release := func() {
		if qos != nil {
			qos.Close() // closing ends the request
			qos = nil
		}
	}
	defer release()
	t := time.NewTicker(latencyTick)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		now := requestsAnswered.Load()
		busy := now != last
		last = now
		switch {
		case busy && qos == nil:
			f, err := os.OpenFile(cpuLatencyFile, os.O_WRONLY, 0)
			if err == nil {
				_, err = f.Write(binary.NativeEndian.AppendUint32(nil, 0))
				if err != nil {
					f.Close()
				}
			}
			if err != nil {
				log.Warn("low-latency mode unavailable: cannot hold a CPU latency request (root needed)", "file", cpuLatencyFile, "err", err)
				return
			}
			qos, idle = f, 0
		case busy:
			idle = 0
		case qos != nil:
			if idle += latencyTick; idle >= latencyIdle {
				release()
			}
		}
	}
}
