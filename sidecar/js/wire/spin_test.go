package wire

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/sqlfs/sqlfs/internal/testenv"
)

// pipePair is both sides of Pipes in this process.
func pipePair(t *testing.T) (owner, peer *Conn, own, theirs [3]*os.File) {
	t.Helper()
	own, theirs, err := Pipes()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range append(own[:], theirs[:]...) {
			f.Close()
		}
	})
	owner = PipeConn(own, MaxOwnerFrame)
	peer = peerConn(theirs[0], theirs[1], int(theirs[2].Fd()), MaxWorkerFrame)
	if owner.sent == nil || peer.sent == nil {
		t.Fatal("no shared page")
	}
	return owner, peer, own, theirs
}

// answer has peer answer each call with reply's message until the test
// ends, which closes the channel, and waits for it.
func answer(t *testing.T, peer *Conn, own [3]*os.File, reply func(*Msg) *Msg) {
	done := make(chan struct{})
	t.Cleanup(func() {
		own[1].Close() // the peer's Recv ends
		<-done
	})
	go func() {
		defer close(done)
		for {
			m, err := peer.Recv()
			if err != nil {
				return
			}
			if err := peer.Send(reply(m)); err != nil {
				return
			}
		}
	}()
}

// TestSpinRoundTrips: calls answered at once are received while spinning,
// in order, on both sides, through the slots; a peer without the page
// still works.
func TestSpinRoundTrips(t *testing.T) {
	owner, peer, own, _ := pipePair(t)
	answer(t, peer, own, func(m *Msg) *Msg { return &Msg{Op: OpReply, N: m.N + 1} })
	for i := range int64(2000) {
		if err := owner.Send(&Msg{Op: OpStat, N: i}); err != nil {
			t.Fatal(err)
		}
		m, err := owner.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.N != i+1 {
			t.Fatalf("answer %d to call %d", m.N, i)
		}
	}
	t.Logf("owner %+v, load %.1f", owner.spin, testenv.LoadAverage())
	// Between two spinning sides the frames go through the page's slots.
	if owner.slotted == 0 {
		t.Errorf("no answer came through the slot (spinner %+v, load %.1f)", owner.spin, testenv.LoadAverage())
	}
}

// TestSpinSeesFrame: a frame written while the receiver spins ends the
// spin, with no back-off.
func TestSpinSeesFrame(t *testing.T) {
	oldMax, oldGap := spinMax, preempted
	spinMax, preempted = time.Hour, time.Hour
	t.Cleanup(func() { spinMax, preempted = oldMax, oldGap })
	owner, peer, _, _ := pipePair(t)
	go func() {
		time.Sleep(2 * time.Millisecond)
		_ = peer.Send(&Msg{Op: OpReply, N: 7})
	}()
	m, err := owner.Recv()
	if err != nil || m.N != 7 {
		t.Fatalf("Recv: %v, %v", m, err)
	}
	if owner.spin.spun != 1 || owner.spin.skip != 0 {
		t.Errorf("spinner %+v, want one answered spin", owner.spin)
	}
}

// TestSpinPeerDies: a receiver spinning when its peer dies sees the end
// of the channel at once, spinning no longer than spinMax.
func TestSpinPeerDies(t *testing.T) {
	owner, _, _, theirs := pipePair(t)
	got := make(chan error, 1)
	go func() {
		_, err := owner.Recv()
		got <- err
	}()
	time.Sleep(5 * time.Millisecond) // spinning or blocked by now
	theirs[1].Close()                // the peer's write end: as its death does
	select {
	case err := <-got:
		if err != io.EOF {
			t.Errorf("Recv: %v, want EOF", err)
		}
	case <-time.After(testenv.Slack(time.Second)):
		t.Fatal("Recv still waiting after the peer's end closed")
	}
}

// TestSpinBackoff: each spin that runs out doubles the receives that block
// without spinning; an answered spin, or a miss whose frame came long
// after (the peer was idle, not short of CPU), resets it.
func TestSpinBackoff(t *testing.T) {
	var s spinner
	miss := s.miss
	for want := 1; want <= maxBackoff; want *= 2 {
		miss()
		if s.skip != want {
			t.Fatalf("skip %d after %d misses, want %d", s.skip, s.missed, want)
		}
		s.blocked(idleWait / 10)
	}
	miss()
	if s.skip != maxBackoff {
		t.Errorf("skip %d, want at most %d", s.skip, maxBackoff)
	}
	s.blocked(2 * idleWait)
	if s.skip != 0 || s.backoff != 0 {
		t.Errorf("after an idle wait: skip %d, backoff %d", s.skip, s.backoff)
	}
}

// TestSpinBigFrames: calls and answers of every size up to MaxChunk
// (a writer blocked in the pipe while its reader spins, then sleeps) come
// whole and in turn.
func TestSpinBigFrames(t *testing.T) {
	owner, peer, own, _ := pipePair(t)
	size := func(rng *rand.Rand, most int) int {
		if rng.IntN(4) == 0 {
			return rng.IntN(most)
		}
		return rng.IntN(200)
	}
	peerRng := rand.New(rand.NewPCG(3, 4))
	answer(t, peer, own, func(m *Msg) *Msg {
		return &Msg{Op: OpReply, N: m.N, Data: make([]byte, size(peerRng, MaxChunk))}
	})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range int64(1000) {
		if err := owner.Send(&Msg{Op: OpStat, N: i, Data: make([]byte, size(rng, MaxChunk))}); err != nil {
			t.Fatal(err)
		}
		m, err := owner.Recv()
		if err != nil || m.N != i {
			t.Fatalf("call %d: answer %v, %v", i, m, err)
		}
	}
}

// TestSlotAfterLaggingCount: a writer counts a frame sent through the
// pipe after its write returns, so its reader may have read the frame
// while the count still lags. The reader must then sleep as having
// nothing (saying so): once it read on from the pipe unannounced, and
// the writer's next frame, put in the slot with no marker, was never
// seen (a hang, seen with the first version of the slot).
func TestSlotAfterLaggingCount(t *testing.T) {
	owner, peer, _, _ := pipePair(t)
	// A frame on the pipe, not yet counted.
	if err := owner.write(encode(nil, &Msg{Op: OpStat, N: 1})); err != nil {
		t.Fatal(err)
	}
	if m, err := peer.Recv(); err != nil || m.N != 1 {
		t.Fatalf("first frame: %v, %v", m, err)
	}
	got := make(chan *Msg, 1)
	go func() {
		m, _ := peer.Recv()
		got <- m
	}()
	time.Sleep(5 * time.Millisecond) // past its spin
	owner.sent.Add(1)                // the count of the first frame, late
	if err := owner.Send(&Msg{Op: OpStat, N: 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m == nil || m.N != 2 {
			t.Fatalf("second frame: %v", m)
		}
	case <-time.After(testenv.Slack(time.Second)):
		t.Fatal("the frame sent after the late count was never received")
	}
}

// TestSleepersMeet: each side says it is going to sleep and then looks at
// the peer's count one last time, while the peer stores its count and then
// looks whether to wake it. Both need a full fence between the store and
// the load: the race detector's atomic stores are release stores, which
// x86 lets pass the load after them, and both sides then slept for good
// (the js tests' rare hang, only with -race and under load). Without
// spinning, every receive goes to sleep and meets a send.
func TestSleepersMeet(t *testing.T) {
	t.Cleanup(func(d time.Duration) func() { return func() { spinMax = d } }(spinMax))
	spinMax = 0
	owner, peer, own, _ := pipePair(t)
	answer(t, peer, own, func(m *Msg) *Msg { return &Msg{Op: OpReply, N: m.N} })
	calls := 100_000
	if testing.Short() {
		calls = 20_000
	}
	done := make(chan error, 1)
	go func() {
		for i := range calls {
			if err := owner.Send(&Msg{Op: OpStat, N: int64(i)}); err != nil {
				done <- err
				return
			}
			m, err := owner.Recv()
			if err != nil {
				done <- err
				return
			}
			if m.N != int64(i) {
				done <- fmt.Errorf("call %d answered as %d", i, m.N)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testenv.Slack(time.Minute)):
		t.Fatalf("stalled: owner sent %d read %d, peer sent %d read %d, asleep %d and %d",
			owner.sent.Load(), owner.myRead.Load(), peer.sent.Load(), peer.myRead.Load(), owner.asleep.Load(), peer.asleep.Load())
	}
	if owner.slotted == 0 || peer.slotted == 0 {
		t.Errorf("no frame went through a slot (owner %d, peer %d): the test misses the race", owner.slotted, peer.slotted)
	}
}
