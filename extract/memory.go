package extract

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrMemory reports that the process's memory budget could not give an
// extraction, a fingerprinting or an upload the bytes it needed: busy
// with other work (an upload is answered 503, to be sent again later) or,
// for the pipeline, given up to older work (the object is read again once
// that work is done).
var ErrMemory = errors.New("memory budget exhausted")

// errPreempted stops an object of the pipeline that holds memory an older
// object waits for.
var errPreempted = fmt.Errorf("%w: given up to an older object that needs the memory", ErrMemory)

// Budget bounds the bytes that extraction, fingerprinting and uploads
// hold at once across the process: the objects' raw bytes, what is
// decompressed from them and the texts made of them. Each object draws
// from it through its own Account, charging as it reads and decompresses.
//
// Accounts that wait (the pipeline's) never deadlock: only the oldest open
// one waits for memory while it holds some, and it gets it, since every
// other account finishes or gives way; a younger one that holds bytes and
// needs more than is free is stopped (ErrMemory, Account.Preempted) and
// gives back everything, to be read again once as much as it needed is
// free (Account.Peak) or it is the oldest; others wait before they take
// anything (Reserve). Accounts that do not wait (uploads) fail at once
// with ErrMemory when the bytes are not free. An object that needs more
// than the whole budget fails, whoever reads it, with ErrMemory and
// ErrTooLarge: the process's memory stays bounded by the budget, and the
// object is recorded with that error rather than retried in vain. A nil
// *Budget bounds nothing.
type Budget struct {
	total int64

	mu          sync.Mutex
	used        int64
	seq         uint64
	open        map[*Account]struct{}
	seniorWaits bool          // the oldest waiting account is blocked
	changed     chan struct{} // closed and replaced at every change
}

// NewBudget returns a budget of total bytes (total > 0).
func NewBudget(total int64) *Budget {
	return &Budget{total: max(total, 1), open: make(map[*Account]struct{}), changed: make(chan struct{})}
}

// Total returns the budget's size in bytes; 0 for a nil budget.
func (b *Budget) Total() int64 {
	if b == nil {
		return 0
	}
	return b.total
}

// InUse returns the bytes taken now; it may exceed Total while an object
// larger than the budget runs alone.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Open opens an account for one object. wait says whether Charge and
// Reserve wait for memory (the pipeline) or fail at once (an upload).
// Close it when the object's memory is dropped. A nil budget gives a nil
// account, which charges nothing.
func (b *Budget) Open(wait bool) *Account {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	a := &Account{b: b, seq: b.seq, wait: wait}
	b.open[a] = struct{}{}
	return a
}

// notify wakes every waiter; b.mu is held.
func (b *Budget) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// senior returns the oldest open account that waits; b.mu is held.
func (b *Budget) senior() *Account {
	var s *Account
	for a := range b.open {
		if a.wait && (s == nil || a.seq < s.seq) {
			s = a
		}
	}
	return s
}

// Account is one object's share of a Budget: what it has taken
// (reserved) and what it holds now (used, at most reserved). Bytes
// released stay reserved until Reset or Close, so an object's share is
// the most it held at once. Its methods are safe for concurrent use; a
// nil *Account charges nothing.
type Account struct {
	b        *Budget
	seq      uint64
	wait     bool
	reserved int64 // guarded by b.mu
	used     int64
	peak     int64 // the most it needed, when stopped
	stopped  error
}

// Peak returns the most the account needed before it was stopped: what
// reading the object again is worth reserving first.
func (a *Account) Peak() int64 {
	if a == nil {
		return 0
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.peak
}

// Reserve takes n bytes for the account before they are used (the size of
// an object about to be fetched), waiting for them if the account waits.
func (a *Account) Reserve(ctx context.Context, n int64) error {
	if a == nil {
		return nil
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if need := n - a.reserved; need > 0 {
		return a.grow(ctx, need)
	}
	return nil
}

// Charge records n more bytes held, taking from the budget what the
// reservation does not cover; it fails with ErrMemory (with ErrTooLarge
// too when the account would need more than the whole budget), and from
// then on until Reset.
func (a *Account) Charge(ctx context.Context, n int64) error {
	if a == nil || n <= 0 {
		return nil
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.stopped != nil {
		return a.stopped
	}
	if need := a.used + n - a.reserved; need > 0 {
		if err := a.grow(ctx, need); err != nil {
			a.stopped = err
			return err
		}
	}
	a.used += n
	return nil
}

// Err returns why a Charge failed, nil if none did since the last Reset:
// what was extracted or fingerprinted meanwhile is incomplete.
func (a *Account) Err() error {
	if a == nil {
		return nil
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.stopped
}

// Release records that n bytes charged are no longer held.
func (a *Account) Release(n int64) {
	if a == nil || n <= 0 {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.used = max(a.used-n, 0)
}

// Preempted reports whether the account was stopped to give its memory
// to an older object: what it extracted is incomplete, and the object
// must be read again after Reset.
func (a *Account) Preempted() bool {
	if a == nil {
		return false
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return errors.Is(a.stopped, errPreempted)
}

// Reset gives back everything the account holds and clears its failure;
// the account keeps its age, so an object read again is not stopped
// again once it is the oldest.
func (a *Account) Reset() {
	if a == nil {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.giveBack()
	a.stopped = nil
}

// Close gives back everything the account holds; the account must not be
// used again.
func (a *Account) Close() {
	if a == nil {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.giveBack()
	delete(a.b.open, a)
	a.b.notify()
}

// giveBack returns the reservation to the budget; b.mu is held.
func (a *Account) giveBack() {
	a.b.used -= a.reserved
	a.reserved, a.used = 0, 0
	a.b.notify()
}

// grow adds need bytes to the reservation, under the rules of Budget;
// b.mu is held (and released while waiting).
func (a *Account) grow(ctx context.Context, need int64) error {
	b := a.b
	if a.reserved+need > b.total {
		return fmt.Errorf("%w: %w: the object needs more than the whole memory budget (%d bytes; memory.budget)", ErrMemory, ErrTooLarge, b.total)
	}
	for {
		if a.stopped != nil {
			return a.stopped
		}
		senior := b.senior() == a
		if b.used+need <= b.total && (!b.seniorWaits || senior) {
			if senior && b.seniorWaits {
				b.seniorWaits = false
			}
			b.used += need
			a.reserved += need
			return nil
		}
		switch {
		case !a.wait:
			return fmt.Errorf("%w: %d bytes needed, %d of %d in use", ErrMemory, need, b.used, b.total)
		case !senior && a.reserved > 0:
			// Waiting while holding could deadlock, and would count
			// against the extraction's Timeout: give way instead.
			a.peak = max(a.peak, a.reserved+need)
			return errPreempted
		}
		if senior && !b.seniorWaits {
			b.seniorWaits = true
			b.notify() // accounts waiting to start wait behind it
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
			b.mu.Lock()
		case <-ctx.Done():
			b.mu.Lock()
			if senior && b.seniorWaits {
				b.seniorWaits = false
				b.notify()
			}
			return fmt.Errorf("wait for memory: %w", context.Cause(ctx))
		}
	}
}
