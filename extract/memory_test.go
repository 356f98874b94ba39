package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBudgetAccounts: an account that does not wait fails at once with
// ErrMemory while the budget is taken, with ErrTooLarge too when it never
// could fit; released bytes stay reserved until Close.
func TestBudgetAccounts(t *testing.T) {
	ctx := context.Background()
	b := NewBudget(100)
	a := b.Open(false)
	if err := a.Charge(ctx, 60); err != nil {
		t.Fatal(err)
	}
	a.Release(60)
	if err := a.Charge(ctx, 50); err != nil || b.InUse() != 60 {
		t.Fatalf("charge within the reservation: %v, %d in use, want 60", err, b.InUse())
	}
	other := b.Open(false)
	if err := other.Charge(ctx, 50); !errors.Is(err, ErrMemory) || errors.Is(err, ErrTooLarge) {
		t.Errorf("charge beyond what is free: %v, want ErrMemory alone", err)
	}
	if err := other.Charge(ctx, 1); !errors.Is(err, ErrMemory) {
		t.Errorf("charge after a failure: %v, want the failure again", err)
	}
	other.Close()
	big := b.Open(false)
	if err := big.Charge(ctx, 101); !errors.Is(err, ErrMemory) || !errors.Is(err, ErrTooLarge) {
		t.Errorf("charge beyond the budget: %v, want ErrMemory and ErrTooLarge", err)
	}
	big.Close()
	a.Close()
	if b.InUse() != 0 {
		t.Errorf("%d in use after every account closed", b.InUse())
	}
	var none *Account
	if err := none.Charge(ctx, 1<<40); err != nil {
		t.Errorf("nil account: %v", err)
	}
}

// TestBudgetOldestWaitsYoungerGivesWay: the oldest account waits for what
// it needs while a younger one that holds memory and needs more is
// stopped (Preempted) rather than waiting, which would deadlock the two;
// after Reset the younger waits, holding nothing, and gets its memory once
// the older is done.
func TestBudgetOldestWaitsYoungerGivesWay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := NewBudget(100)
	old, young := b.Open(true), b.Open(true)
	if err := old.Charge(ctx, 40); err != nil {
		t.Fatal(err)
	}
	if err := young.Charge(ctx, 40); err != nil {
		t.Fatal(err)
	}
	granted := make(chan error, 1)
	go func() { granted <- old.Charge(ctx, 50) }() // waits: 10 free
	if err := young.Charge(ctx, 30); !errors.Is(err, ErrMemory) || !young.Preempted() {
		t.Fatalf("younger account: %v, preempted %v; want it to give way", err, young.Preempted())
	}
	if young.Peak() != 70 {
		t.Errorf("peak %d, want 70", young.Peak())
	}
	young.Reset()
	if err := <-granted; err != nil {
		t.Fatalf("oldest account: %v", err)
	}
	again := make(chan error, 1)
	go func() { again <- young.Reserve(ctx, young.Peak()) }()
	select {
	case err := <-again:
		t.Fatalf("reserved %v while the older account holds 90 of 100", err)
	case <-time.After(50 * time.Millisecond):
	}
	old.Close()
	if err := <-again; err != nil {
		t.Fatal(err)
	}
	if err := young.Charge(ctx, 70); err != nil || young.Preempted() {
		t.Errorf("charge within the reservation: %v", err)
	}
	young.Close()
}

// TestBudgetManyWaitersFinish: accounts that wait and charge in steps,
// many more than fit at once, all finish (none deadlocks), each stopped
// one starting again, and the budget is never exceeded.
func TestBudgetManyWaitersFinish(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := NewBudget(1000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	peak := int64(0)
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := b.Open(true)
			defer a.Close()
			for {
				err := a.Reserve(ctx, max(a.Peak(), 10))
				for step := 0; err == nil && step < 10; step++ {
					err = a.Charge(ctx, int64(30+i))
					mu.Lock()
					peak = max(peak, b.InUse())
					mu.Unlock()
					time.Sleep(time.Millisecond)
				}
				if err == nil {
					return
				}
				if !a.Preempted() {
					t.Errorf("account %d: %v", i, err)
					return
				}
				a.Reset()
			}
		}()
	}
	wg.Wait()
	if peak > 1000 {
		t.Errorf("%d bytes in use at most, over the budget of 1000", peak)
	}
	if b.InUse() != 0 {
		t.Errorf("%d in use at the end", b.InUse())
	}
}

// TestExtractionChargesDecompressedBytes: a small zip of large text
// members is charged what it decompresses and the texts it makes, not its
// size: under a budget below that it fails with ErrMemory, and with
// ErrTooLarge when the budget could never hold it.
func TestExtractionChargesDecompressedBytes(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the invoice contract of shipment and payment for customer supplier within thirty days")
	for i := range 4 {
		w, _ := zw.Create(fmt.Sprintf("m%d.txt", i))
		var text strings.Builder
		for text.Len() < 1<<20 {
			text.WriteString(words[r.IntN(len(words))])
			text.WriteByte(" \n"[r.IntN(2)])
		}
		w.Write([]byte(text.String()))
	}
	zw.Close()
	x, err := New(Options{Limits: DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	roomy := NewBudget(64 << 20)
	a := roomy.Open(false)
	d, err := x.Extract(ctx, Object{Name: "a.zip", Reader: bytes.NewReader(buf.Bytes()), Memory: a})
	if err != nil || len(d.Children) != 4 {
		t.Fatalf("extract within the budget: %v, %d children", err, len(d.Children))
	}
	var texts int64
	for _, c := range d.Children {
		texts += int64(len(c.Text))
	}
	if used := roomy.InUse(); used < texts+int64(buf.Len()) {
		t.Errorf("%d bytes charged, less than the zip (%d) and its texts (%d)", used, buf.Len(), texts)
	}
	a.Close()
	busy := NewBudget(4 << 20)
	holder := busy.Open(false)
	holder.Charge(ctx, 2<<20)
	a = busy.Open(false)
	d, err = x.Extract(ctx, Object{Name: "a.zip", Reader: bytes.NewReader(buf.Bytes()), Memory: a})
	if !errors.Is(a.Err(), ErrMemory) || errors.Is(a.Err(), ErrTooLarge) || !errors.Is(err, ErrMemory) {
		t.Errorf("extract with the budget taken: %v (account: %v), want ErrMemory", err, a.Err())
	}
	if d != nil && len(d.Children) == 4 && d.Children[3].Err == nil {
		t.Error("the extraction went on after the budget refused it")
	}
	a.Close()
	holder.Close()
	small := NewBudget(2 << 20)
	a = small.Open(true)
	_, err = x.Extract(ctx, Object{Name: "a.zip", Reader: bytes.NewReader(buf.Bytes()), Memory: a})
	if !errors.Is(err, ErrTooLarge) || !errors.Is(a.Err(), ErrTooLarge) {
		t.Errorf("extract beyond the whole budget: %v, want ErrTooLarge", err)
	}
	a.Close()
}
