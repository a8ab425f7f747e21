package wire

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// echoEnv makes the test binary an echo peer on fd 3 (BenchmarkRoundTrip).
const echoEnv = "SQLFS_WIRE_ECHO"

func TestMain(m *testing.M) {
	if os.Getenv(echoEnv) != "" {
		c := NewConn(os.NewFile(3, "peer"), MaxWorkerFrame)
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
// work: the transport's share of a call.
func BenchmarkRoundTrip(b *testing.B) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	own, theirs := os.NewFile(uintptr(fds[0]), "own"), os.NewFile(uintptr(fds[1]), "theirs")
	defer own.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), echoEnv+"=1")
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	theirs.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c := NewConn(own, MaxOwnerFrame)
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
