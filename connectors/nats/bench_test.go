package nats_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/nats"
)

// BenchmarkThroughput measures events per second through a NATS source on
// a real embedded server: b.N 10 KB document messages are published first,
// then the timer covers consuming them, with 8 workers settling each event
// at once with Done(nil) (a confirmed ack).
func BenchmarkThroughput(b *testing.B) {
	const workers = 8
	o := newOrigin(b)
	doc := bytes.Repeat([]byte("simdex benchmark document text. "), 10<<10/32)
	ctx := context.Background()
	for i := range b.N {
		msg := natsgo.NewMsg(subject)
		msg.Header.Set(nats.HeaderID, fmt.Sprintf("bench/%d.txt", i))
		msg.Data = doc
		if _, err := o.js.PublishMsgAsync(msg); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-o.js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("publishing did not complete")
	}
	cfg := sourceConfig()
	cfg.AckWait = time.Minute
	cfg.MaxAckPending = 0 // the default, 256
	src, err := nats.New(o.nc, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ResetTimer()
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	out := make(chan connectors.Event, workers)
	done := make(chan error, 1)
	go func() { done <- src.Run(runCtx, out) }()
	var wg sync.WaitGroup
	var mu sync.Mutex
	settled := 0
	all := make(chan struct{})
	for range workers {
		wg.Go(func() {
			for {
				select {
				case ev := <-out:
					ev.Done(ctx, nil)
					mu.Lock()
					settled++
					if settled == b.N {
						close(all)
					}
					mu.Unlock()
				case <-runCtx.Done():
					return
				}
			}
		})
	}
	<-all
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	wg.Wait()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}
