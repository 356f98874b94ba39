package dirlock

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// The child process of TestSecondProcessIsRefused takes the lock and
// waits for its standard input to close.
func TestMain(m *testing.M) {
	if dir := os.Getenv("DIRLOCK_TEST_HOLD"); dir != "" {
		l, err := Acquire(dir)
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSecondProcessIsRefused(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DIRLOCK_TEST_HOLD="+dir)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("child: %q, %v", buf, err)
	}
	_, err := Acquire(dir)
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("Acquire while another process holds it: %v, want ErrLocked naming pid %d", err, cmd.Process.Pid)
	}
	// Killed, the holder's lock is gone with it.
	cmd.Process.Kill()
	stdin.Close()
	cmd.Wait()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder died: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal("second Release:", err)
	}
}
