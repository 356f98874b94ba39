package benchcorpus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoProcess reports that no process matched.
var ErrNoProcess = errors.New("no such process")

// clockTick is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procStat is what TreeCPU reads of one /proc/PID/stat.
type procStat struct {
	pid, ppid int
	cpu       time.Duration // utime+stime+cutime+cstime
}

// TreeCPU returns the CPU time (user and system) that process pid, its
// live descendants and every child they have waited for have used: a
// server's total, PostgreSQL's exited backends included (their time is in
// the postmaster's cutime). It reads /proc, so it works on Linux only.
func TreeCPU(pid int) (time.Duration, error) {
	all, err := readProcs()
	if err != nil {
		return 0, err
	}
	children := make(map[int][]procStat)
	var total time.Duration
	found := false
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
		if p.pid == pid {
			total, found = p.cpu, true
		}
	}
	if !found {
		return 0, fmt.Errorf("cpu of process %d: %w", pid, ErrNoProcess)
	}
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		total += queue[0].cpu
		queue = append(queue, children[queue[0].pid]...)
	}
	return total, nil
}

// ChildPID returns the process id of a child of this process whose
// command line (arguments joined by spaces) contains s.
func ChildPID(s string) (int, error) {
	all, err := readProcs()
	if err != nil {
		return 0, err
	}
	for _, p := range all {
		if p.ppid != os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "cmdline"))
		if err == nil && strings.Contains(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), s) {
			return p.pid, nil
		}
	}
	return 0, fmt.Errorf("child process running %q: %w", s, ErrNoProcess)
}

// readProcs reads every process's /proc/PID/stat; processes that exit
// meanwhile are left out.
func readProcs() ([]procStat, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var all []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited
		}
		p, err := parseStat(pid, b)
		if err != nil {
			return nil, err
		}
		all = append(all, p)
	}
	return all, nil
}

// parseStat reads the parent and the CPU times from a /proc/PID/stat line.
func parseStat(pid int, b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state, ppid, …, utime (field 14 of the line) at 11.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	p := procStat{pid: pid}
	var err error
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: ppid: %w", pid, err)
	}
	for _, s := range f[11:15] {
		ticks, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("parse /proc/%d/stat: cpu times: %w", pid, err)
		}
		p.cpu += time.Duration(ticks) * clockTick
	}
	return p, nil
}

// ChildCPU returns the CPU time used by the child of this process whose
// command line contains s, and by all its descendants (TreeCPU).
func ChildCPU(s string) (time.Duration, error) {
	pid, err := ChildPID(s)
	if err != nil {
		return 0, err
	}
	return TreeCPU(pid)
}
