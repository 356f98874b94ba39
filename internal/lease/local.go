package lease

import (
	"context"
	"sync"
	"time"
)

// Local is the lease of a single process (the embedded SQLite driver):
// every lease is granted to it, one job per name at a time. Completed
// slots are remembered in memory, the last one per job.
type Local struct {
	now func() time.Time

	mu    sync.Mutex
	names map[string]chan struct{} // a one-place semaphore per name
	done  map[string]time.Time     // job -> last completed slot
}

// NewLocal returns a Local on the system clock.
func NewLocal() *Local { return NewLocalClock(time.Now) }

// NewLocalClock returns a Local whose Now is now (tests).
func NewLocalClock(now func() time.Time) *Local {
	return &Local{now: now, names: map[string]chan struct{}{}, done: map[string]time.Time{}}
}

func (l *Local) sem(name string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.names[name]
	if !ok {
		s = make(chan struct{}, 1)
		l.names[name] = s
	}
	return s
}

// Now returns the process's clock.
func (l *Local) Now(context.Context) (time.Time, error) { return l.now(), nil }

// Run runs fn unless a job of the process holds name already.
func (l *Local) Run(ctx context.Context, name string, fn Func) (bool, error) {
	s := l.sem(name)
	select {
	case s <- struct{}{}:
	default:
		return false, nil
	}
	defer func() { <-s }()
	return true, fn(ctx)
}

// Hold waits until no job of the process holds name, then runs fn and
// returns its error; it returns nil if ctx is done first.
func (l *Local) Hold(ctx context.Context, name string, fn Func) error {
	s := l.sem(name)
	select {
	case s <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	defer func() { <-s }()
	return fn(ctx)
}

// LastSlot returns the last slot of job the process completed, or the
// zero time.
func (l *Local) LastSlot(_ context.Context, job string) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done[job], nil
}

// RunSlot runs fn for slot unless the process completed that slot of job
// or a later one. A run cut short by ctx leaves the slot open.
func (l *Local) RunSlot(ctx context.Context, job string, slot time.Time, fn Func) (bool, error) {
	s := l.sem(job)
	select {
	case s <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-s }()
	l.mu.Lock()
	last := l.done[job]
	l.mu.Unlock()
	if !slot.After(last) {
		return false, nil
	}
	err := fn(ctx)
	if ctx.Err() == nil {
		l.mu.Lock()
		l.done[job] = slot
		l.mu.Unlock()
	}
	return true, err
}
