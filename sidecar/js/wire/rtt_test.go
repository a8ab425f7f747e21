package wire

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// echoEnv makes the test binary an echo peer (BenchmarkRoundTrip): on the
// pipes at fds 3 and 4, or with "socket" on a socket at fd 3.
const echoEnv = "SQLFS_WIRE_ECHO"

func TestMain(m *testing.M) {
	if mode := os.Getenv(echoEnv); mode != "" {
		var c *Conn
		if mode == "socket" {
			c = NewConn(os.NewFile(3, "peer"), MaxWorkerFrame)
		} else {
			c = PeerConn(MaxWorkerFrame)
		}
		reply := &Msg{Op: OpReply, Info: &FileInfo{Name: "f", Size: 7, Mode: 0o644, HasStat: true}}
		for {
			if _, err := c.Recv(); err != nil {
				os.Exit(0)
			}
			if err := c.Send(reply); err != nil {
				os.Exit(0)
			}
		}
	}
	os.Exit(m.Run())
}

// BenchmarkRoundTrip is one call and its answer between two processes,
// a stat's worth of fields, as a worker's fs call is without the owner's
// work: the transport's share of a call. pipes is what workers use;
// socketpair, what they used before, is the comparison.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("pipes", func(b *testing.B) {
		own, theirs, err := Pipes()
		if err != nil {
			b.Fatal(err)
		}
		defer own[0].Close()
		defer own[1].Close()
		roundTrips(b, PipeConn(own, MaxOwnerFrame), "pipes", theirs[:])
	})
	b.Run("socketpair", func(b *testing.B) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		own := os.NewFile(uintptr(fds[0]), "own")
		defer own.Close()
		roundTrips(b, NewConn(own, MaxOwnerFrame), "socket", []*os.File{os.NewFile(uintptr(fds[1]), "theirs")})
	})
}

// roundTrips starts an echo peer in mode on theirs and calls it b.N times.
func roundTrips(b *testing.B, c *Conn, mode string, theirs []*os.File) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), echoEnv+"="+mode)
	cmd.ExtraFiles = theirs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Start()
	for _, f := range theirs {
		f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	call := &Msg{Op: OpStat, Path: "/workspace/run-1/f123.json"}
	for b.Loop() {
		if err := c.Send(call); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}
