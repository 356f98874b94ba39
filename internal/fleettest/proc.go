package fleettest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopTimeout bounds a graceful stop before the process is killed.
const stopTimeout = 30 * time.Second

// proc is a child process that can be killed and started again with the
// same arguments, its output appended to one log file.
type proc struct {
	name    string
	path    string
	args    []string
	env     []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// start launches the process; it is an error if it is running.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("start %s: already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log of %s: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// exited is closed when the running process exits; nil when none runs.
func (p *proc) exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// kill sends SIGKILL, as a crash or the OOM killer would, and waits for
// the process to exit. It does nothing when none runs.
func (p *proc) kill() { p.signal(syscall.SIGKILL) }

// stop sends SIGTERM and waits, killing the process after stopTimeout.
func (p *proc) stop() { p.signal(syscall.SIGTERM) }

func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
	}
}

// dumpLog prints the end of the process's log into the test output.
func (p *proc) dumpLog(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Logf("fleettest: read log of %s: %v", p.name, err)
		return
	}
	const maxLog = 24 << 10
	if len(b) > maxLog {
		b = b[len(b)-maxLog:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	t.Logf("fleettest: log of %s (%s):\n%s", p.name, p.logPath, b)
}

// dumpStacks ends the process with SIGQUIT, which makes the Go runtime
// print every goroutine's stack to the log, and prints into the test
// output the stacks that pass through simdex's own code: where a stuck
// process waits.
func (p *proc) dumpStacks(t testing.TB) {
	t.Helper()
	fi, err := os.Stat(p.logPath)
	if err != nil {
		t.Logf("fleettest: stat log of %s: %v", p.name, err)
		return
	}
	p.signal(syscall.SIGQUIT)
	f, err := os.Open(p.logPath)
	if err != nil {
		t.Logf("fleettest: open log of %s: %v", p.name, err)
		return
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, fi.Size(), 64<<20))
	if err != nil {
		t.Logf("fleettest: read log of %s: %v", p.name, err)
		return
	}
	var out []byte
	for _, g := range bytes.Split(b, []byte("\n\n")) {
		if bytes.Contains(g, []byte("simdex/simdex/")) {
			out = append(append(out, g...), "\n\n"...)
		}
	}
	t.Logf("fleettest: goroutines of %s in simdex's code at SIGQUIT:\n%s", p.name, out)
}

// pid returns the running process's id, 0 when none runs.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}
