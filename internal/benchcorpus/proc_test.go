//go:build linux

// The CPU of a process tree is read from /proc: Linux only.

package benchcorpus

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestTreeCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid, err := ChildPID("while [ $i -lt 200000 ]")
	if err != nil || pid != cmd.Process.Pid {
		t.Fatalf("ChildPID = %d, %v; want %d", pid, err, cmd.Process.Pid)
	}
	// The shell's busy loop shows in its own time and in this process's
	// tree.
	deadline := time.Now().Add(10 * time.Second)
	for {
		child, err := TreeCPU(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := TreeCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if child > 0 && tree >= child {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %v, tree %v", child, tree)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (a b) S 0 1 1 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 1 0"))
	f.Add([]byte("1 (x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseStat(1, b)
		if err == nil && p.pid != 1 {
			t.Fatalf("pid %d", p.pid)
		}
	})
}
