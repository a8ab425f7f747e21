package wire

import "time"

// Waking a thread asleep in read(2) costs tens of microseconds on a VM
// whose idle vCPUs halt (two wake-ups a round trip), more than the
// owner's work for most calls. So a receiver with a shared page spins on
// the peer's count of frames written for up to spinMax before it blocks:
// in a tight loop of calls, the answer comes while it spins and neither
// side sleeps. The pipes still carry every frame, so a spin that runs out
// only costs its time, and a dead peer is seen as before (end of file).
//
// A spin pays only while the peer answers within it: on a loaded machine
// the peer waits for a CPU the spinner holds (naive spinning once cost
// 190 µs a round trip at load 20). So each spin that runs out, or that
// loses its CPU meanwhile, doubles how many receives block without
// spinning (up to maxBackoff) before the next try; a spin that is
// answered resets it, and so does a miss whose frame came long after
// (the peer was computing or idle). Gating spins on the machine's CPU
// pressure as well (/proc/pressure/cpu) was measured and dropped: it
// turned spinning off where it still paid (see the js README's Speed).
var spinMax = 50 * time.Microsecond

const maxBackoff = 256

// preempted is a gap between a spinner's looks at the clock (64 loads of
// the peer's count apart, well under a microsecond) that says it lost its
// CPU meanwhile, which is a spin that runs out.
var preempted = 20 * time.Microsecond

// spinner is a receiver's spinning state.
type spinner struct {
	skip    int // receives left that block without spinning
	backoff int // the skip after the next spin that runs out
	spun    int // spins answered, for tests
	missed  int // spins run out
	skipped int // receives that blocked at once
}

// idleWait is how long a frame may take after a spin ran out for the
// miss to say nothing about load: the peer was computing, or idle.
const idleWait = time.Millisecond

// wait spins until the peer has written a frame Recv has not read, for
// at most spinMax, unless the back-off says to block at once. It returns
// when a spin ran out, for blocked.
func (c *Conn) wait() (missed time.Time) {
	s := &c.spin
	if spinMax <= 0 {
		return
	}
	if s.skip > 0 {
		s.skip--
		s.skipped++
		return
	}
	start := time.Now()
	last := start
	for i := 1; ; i++ {
		if c.peer.Load() > c.got {
			s.backoff = 0
			s.spun++
			return
		}
		if i%64 == 0 {
			// A gap between two looks at the clock is the spinner
			// descheduled: another task wanted its CPU.
			now := time.Now()
			if now.Sub(start) > spinMax || now.Sub(last) > preempted {
				break
			}
			last = now
		}
	}
	s.miss()
	return time.Now()
}

// miss backs off after a spin that ran out.
func (s *spinner) miss() {
	s.missed++
	s.backoff = min(max(2*s.backoff, 1), maxBackoff)
	s.skip = s.backoff
}

// blocked is told how long the frame took after the spin that ran out at
// missed: long, and the peer was busy or idle rather than short of CPU,
// so the back-off is undone.
func (s *spinner) blocked(d time.Duration) {
	if d > idleWait {
		s.skip, s.backoff = 0, 0
	}
}
