package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/jetstream"
	"github.com/simdex/simdex/internal/natstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testName    = "test:js"
	testSubject = "test.in"
	waitLong    = 15 * time.Second
)

// testDecoder yields N events per message (header "N", default 1), fails
// with an Invalid error when header "Bad" is set, and records the delivery
// count in the events' metadata.
type testDecoder struct{}

func (testDecoder) Decode(_ context.Context, m jetstream.Message) ([]connectors.Event, error) {
	if bad := m.Header.Get("Bad"); bad != "" {
		return nil, &connectors.Error{Op: "decode", Key: string(m.Data), Kind: connectors.Invalid, Err: errors.New(bad)}
	}
	n := 1
	if v := m.Header.Get("N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	evs := make([]connectors.Event, 0, n)
	for i := range n {
		evs = append(evs, connectors.Event{
			Kind:      connectors.Created,
			Key:       fmt.Sprintf("%s#%d", m.Data, i),
			VersionID: strconv.FormatUint(m.Sequence, 10),
			Size:      int64(len(m.Data)),
			Time:      m.Time,
			Metadata:  map[string]string{"delivered": strconv.FormatUint(m.Delivered, 10)},
		})
	}
	return evs, nil
}

type env struct {
	srv *natstest.Server
	nc  *nats.Conn
	js  natsjs.JetStream
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := natstest.Start(t)
	nc := srv.Conn(t)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, nc: nc, js: js}
}

func testConfig() jetstream.Config {
	return jetstream.Config{
		Name:          testName,
		Stream:        "TEST",
		Subjects:      []string{"test.>"},
		CreateStream:  true,
		Durable:       "simdex-test",
		MaxDeliver:    3,
		AckWait:       time.Second,
		Backoff:       []time.Duration{10 * time.Millisecond},
		MaxAckPending: 64,
	}
}

func (e *env) source(t *testing.T, cfg jetstream.Config) *jetstream.Source {
	t.Helper()
	src, err := jetstream.New(e.nc, cfg, testDecoder{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return src
}

// running is a Source running in the background.
type running struct {
	t      *testing.T
	events chan connectors.Event
	cancel context.CancelFunc
	done   chan error
}

// start runs src and waits until its consumer exists.
func (e *env) start(t *testing.T, src *jetstream.Source, buffer int) *running {
	t.Helper()
	r := startAsync(t, src, buffer)
	cfg := src.Config()
	waitFor(t, "consumer "+cfg.Durable, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := e.js.Consumer(ctx, cfg.Stream, cfg.Durable)
		return err == nil
	})
	return r
}

// startAsync runs src in the background.
func startAsync(t *testing.T, src *jetstream.Source, buffer int) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, events: make(chan connectors.Event, buffer), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- src.Run(ctx, r.events) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop cancels Run and waits for it to return.
func (r *running) stop() error {
	r.t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
			return err
		}
		return nil
	case <-time.After(5 * time.Second):
		r.t.Fatal("Run did not return within 5s of cancel")
		return nil
	}
}

func (r *running) next() connectors.Event {
	r.t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case err := <-r.done:
		r.t.Fatalf("Run returned early: %v", err)
	case <-time.After(waitLong):
		r.t.Fatal("no event within timeout")
	}
	return connectors.Event{}
}

func (r *running) none(d time.Duration) {
	r.t.Helper()
	select {
	case ev := <-r.events:
		r.t.Fatalf("unexpected event %q (delivered %s)", ev.Key, ev.Metadata["delivered"])
	case <-time.After(d):
	}
}

func (e *env) publish(t *testing.T, data string, hdr map[string]string) {
	t.Helper()
	msg := nats.NewMsg(testSubject)
	msg.Data = []byte(data)
	for k, v := range hdr {
		msg.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := e.js.PublishMsg(ctx, msg); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func (e *env) consumerInfo(t *testing.T) *natsjs.ConsumerInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cons, err := e.js.Consumer(ctx, "TEST", "simdex-test")
	if err != nil {
		t.Fatalf("consumer info: %v", err)
	}
	return cons.CachedInfo()
}

func (e *env) deadLetters(t *testing.T) []jetstream.DeadLetter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	dls, err := jetstream.ListDeadLetters(ctx, e.nc, 0)
	if err != nil {
		t.Fatalf("ListDeadLetters: %v", err)
	}
	return dls
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func transient(msg string) error {
	return &connectors.Error{Op: "index", Kind: connectors.Transient, Err: errors.New(msg)}
}

func permanent(msg string) error {
	return &connectors.Error{Op: "index", Kind: connectors.Permanent, Err: errors.New(msg)}
}

func TestNewValidatesConfig(t *testing.T) {
	nc := &nats.Conn{} // New does no I/O
	cases := []struct {
		name  string
		edit  func(*jetstream.Config)
		field string
	}{
		{"no name", func(c *jetstream.Config) { c.Name = "" }, "Name"},
		{"no stream", func(c *jetstream.Config) { c.Stream = "" }, "Stream"},
		{"dotted stream", func(c *jetstream.Config) { c.Stream = "a.b" }, "Stream"},
		{"no durable", func(c *jetstream.Config) { c.Durable = "" }, "Durable"},
		{"durable with space", func(c *jetstream.Config) { c.Durable = "a b" }, "Durable"},
		{"create without subjects", func(c *jetstream.Config) { c.Subjects = nil }, "Subjects"},
		{"empty subject token", func(c *jetstream.Config) { c.Subjects = []string{"a..b"} }, "Subjects[0]"},
		{"bad filter", func(c *jetstream.Config) { c.FilterSubject = "a.>.b" }, "FilterSubject"},
		{"negative max deliver", func(c *jetstream.Config) { c.MaxDeliver = -1 }, "MaxDeliver"},
		{"negative ack wait", func(c *jetstream.Config) { c.AckWait = -time.Second }, "AckWait"},
		{"six replicas", func(c *jetstream.Config) { c.Replicas = 6 }, "Replicas"},
		{"negative backoff", func(c *jetstream.Config) { c.Backoff = []time.Duration{time.Second, -1} }, "Backoff[1]"},
		{"negative max processing", func(c *jetstream.Config) { c.MaxProcessing = -time.Second }, "MaxProcessing"},
		{"negative max ack pending", func(c *jetstream.Config) { c.MaxAckPending = -5 }, "MaxAckPending"},
		{"wildcard dead-letter subject", func(c *jetstream.Config) { c.DeadLetterSubject = "dl.*" }, "DeadLetterSubject"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.edit(&cfg)
			_, err := jetstream.New(nc, cfg, testDecoder{})
			if !errors.Is(err, jetstream.ErrInvalidConfig) {
				t.Fatalf("New error = %v, want ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tc.field+":") {
				t.Errorf("error %q does not name field %s", err, tc.field)
			}
		})
	}
	if _, err := jetstream.New(nil, testConfig(), testDecoder{}); !errors.Is(err, jetstream.ErrInvalidConfig) {
		t.Errorf("nil conn: error = %v", err)
	}
	if _, err := jetstream.New(nc, testConfig(), nil); !errors.Is(err, jetstream.ErrInvalidConfig) {
		t.Errorf("nil decoder: error = %v", err)
	}
}

func TestDefaults(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDeliver, cfg.AckWait, cfg.Backoff, cfg.MaxAckPending = 0, 0, nil, 0
	cfg.Name = "nats:docs.in"
	src, err := jetstream.New(&nats.Conn{}, cfg, testDecoder{})
	if err != nil {
		t.Fatal(err)
	}
	got := src.Config()
	if got.MaxDeliver != 5 || got.AckWait != 2*time.Minute || got.MaxAckPending != 256 || len(got.Backoff) == 0 || got.MaxProcessing != 30*time.Minute {
		t.Errorf("defaults not applied: %+v", got)
	}
	if got.DeadLetterSubject != "simdex.deadletter.nats_docs_in" {
		t.Errorf("DeadLetterSubject = %q", got.DeadLetterSubject)
	}
}

func TestAckOnlyAfterDoneForAllEvents(t *testing.T) {
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.Metrics = jetstream.NewMetrics(reg)
	r := e.start(t, e.source(t, cfg), 10)
	e.publish(t, "m", map[string]string{"N": "3"})
	evs := []connectors.Event{r.next(), r.next(), r.next()}
	for i, ev := range evs {
		if ev.Source != testName || ev.Done == nil || ev.Key != fmt.Sprintf("m#%d", i) {
			t.Fatalf("event %d = %+v", i, ev)
		}
	}
	ctx := context.Background()
	evs[0].Done(ctx, nil)
	evs[2].Done(ctx, nil)
	if n := e.consumerInfo(t).NumAckPending; n != 1 {
		t.Fatalf("after 2 of 3 Done: ack pending = %d, want 1", n)
	}
	if got := testutil.ToFloat64(cfg.Metrics.Acked.WithLabelValues(testName)); got != 0 {
		t.Fatalf("acked before all events settled: %v", got)
	}
	evs[1].Done(ctx, nil)
	// The double ack is confirmed before Done returns.
	if n := e.consumerInfo(t).NumAckPending; n != 0 {
		t.Fatalf("after all Done: ack pending = %d, want 0", n)
	}
	evs[1].Done(ctx, nil) // a second settlement is ignored
	for name, c := range map[string]prometheus.Collector{
		"received": cfg.Metrics.Received, "events": cfg.Metrics.Events, "acked": cfg.Metrics.Acked,
	} {
		want := 1.0
		if name == "events" {
			want = 3
		}
		if got := testutil.ToFloat64(c); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	r.none(1500 * time.Millisecond) // not redelivered after AckWait
}

func TestZeroEventsAckedAtOnce(t *testing.T) {
	e := newEnv(t)
	r := e.start(t, e.source(t, testConfig()), 10)
	e.publish(t, "empty", map[string]string{"N": "0"})
	e.publish(t, "after", nil)
	if ev := r.next(); ev.Key != "after#0" {
		t.Fatalf("got %q", ev.Key)
	}
	waitFor(t, "ack of the empty message", func() bool { return e.consumerInfo(t).AckFloor.Stream >= 1 })
}

func TestUnsettledRedeliveredAfterServerRestart(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	r := e.start(t, e.source(t, cfg), 10)
	e.publish(t, "crash", nil)
	ev := r.next()
	if ev.Metadata["delivered"] != "1" {
		t.Fatalf("first delivery = %s", ev.Metadata["delivered"])
	}
	// The daemon dies with the event in the pipeline: never settled.
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	e.srv.Restart(t)
	r2 := e.start(t, e.source(t, cfg), 10)
	ev2 := r2.next()
	if ev2.Key != ev.Key || ev2.VersionID != ev.VersionID || ev2.Metadata["delivered"] != "2" {
		t.Fatalf("redelivered event = %q v%s delivered %s", ev2.Key, ev2.VersionID, ev2.Metadata["delivered"])
	}
	ev2.Done(context.Background(), nil)
	if n := e.consumerInfo(t).NumAckPending; n != 0 {
		t.Fatalf("ack pending = %d", n)
	}
}

func TestDoneAfterRunReturned(t *testing.T) {
	e := newEnv(t)
	r := e.start(t, e.source(t, testConfig()), 10)
	e.publish(t, "late", nil)
	ev := r.next()
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	ev.Done(context.Background(), nil)
	if n := e.consumerInfo(t).NumAckPending; n != 0 {
		t.Fatalf("ack pending = %d after Done following Run's return", n)
	}
}

func TestTransientRetriedThenDeadLettered(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig() // MaxDeliver 3
	r := e.start(t, e.source(t, cfg), 10)
	e.publish(t, "flaky", map[string]string{"X-Custom": "kept", "Nats-Msg-Id": "orig-1"})
	for want := 1; want <= 3; want++ {
		ev := r.next()
		if ev.Metadata["delivered"] != strconv.Itoa(want) {
			t.Fatalf("delivery %s, want %d", ev.Metadata["delivered"], want)
		}
		ev.Done(context.Background(), transient(fmt.Sprintf("index unavailable %d", want)))
	}
	r.none(1500 * time.Millisecond)
	var dls []jetstream.DeadLetter
	waitFor(t, "dead letter", func() bool { dls = e.deadLetters(t); return len(dls) == 1 })
	dl := dls[0]
	if dl.Source != testName || dl.Subject != testSubject || dl.Stream != "TEST" || dl.Sequence != 1 || dl.Delivered != 3 {
		t.Errorf("dead letter = %+v", dl)
	}
	if !strings.Contains(dl.Error, "giving up after 3 deliveries") || !strings.Contains(dl.Error, "index unavailable 3") {
		t.Errorf("Error = %q", dl.Error)
	}
	if string(dl.Data) != "flaky" || dl.Header.Get("X-Custom") != "kept" || dl.Header.Get("Nats-Msg-Id") != "orig-1" {
		t.Errorf("original not kept: data %q header %v", dl.Data, dl.Header)
	}
	if dl.Time.IsZero() || dl.Published.IsZero() || dl.Time.Before(dl.Published) {
		t.Errorf("times: dead-lettered %v, published %v", dl.Time, dl.Published)
	}
	if n := e.consumerInfo(t).NumAckPending; n != 0 {
		t.Errorf("ack pending = %d after termination", n)
	}
}

func TestPermanentAndInvalidDeadLettered(t *testing.T) {
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig()
	cfg.Metrics = jetstream.NewMetrics(reg)
	r := e.start(t, e.source(t, cfg), 10)
	e.publish(t, "doomed", nil)
	r.next().Done(context.Background(), permanent("object too large"))
	e.publish(t, "garbage", map[string]string{"Bad": "no Simdex-Id header"})
	e.publish(t, "fine", nil)
	ev := r.next()
	if ev.Key != "fine#0" {
		t.Fatalf("after garbage got %q", ev.Key)
	}
	ev.Done(context.Background(), nil)
	var dls []jetstream.DeadLetter
	waitFor(t, "two dead letters", func() bool { dls = e.deadLetters(t); return len(dls) == 2 })
	if !strings.Contains(dls[0].Error, "object too large") || dls[0].Delivered != 1 {
		t.Errorf("first dead letter = %+v", dls[0])
	}
	if !strings.Contains(dls[1].Error, "no Simdex-Id header") || string(dls[1].Data) != "garbage" {
		t.Errorf("second dead letter = %+v", dls[1])
	}
	if got := testutil.ToFloat64(cfg.Metrics.DeadLettered); got != 2 {
		t.Errorf("dead-lettered metric = %v", got)
	}
	r.none(1500 * time.Millisecond)
	if dls, err := jetstream.ListDeadLetters(context.Background(), e.nc, 1); err != nil || len(dls) != 1 || dls[0].Sequence != 1 {
		t.Errorf("ListDeadLetters(limit 1) = %v, %v", dls, err)
	}
}

func TestDeadLetterPublishFailureHandsBack(t *testing.T) {
	e := newEnv(t)
	r := e.start(t, e.source(t, testConfig()), 10)
	e.publish(t, "precious", nil)
	ev := r.next()
	// The dead-letter stream vanishes: the record cannot be written.
	ctx := context.Background()
	if err := e.js.DeleteStream(ctx, jetstream.DeadLetterStream); err != nil {
		t.Fatal(err)
	}
	ev.Done(ctx, permanent("cannot parse"))
	ev = r.next()
	if ev.Key != "precious#0" || ev.Metadata["delivered"] != "2" {
		t.Fatalf("redelivered = %q delivered %s", ev.Key, ev.Metadata["delivered"])
	}
	if dls := e.deadLetters(t); len(dls) != 0 {
		t.Fatalf("dead letters = %d", len(dls))
	}
	if _, err := e.js.CreateStream(ctx, natsjs.StreamConfig{Name: jetstream.DeadLetterStream, Subjects: []string{"simdex.deadletter.>"}}); err != nil {
		t.Fatal(err)
	}
	ev.Done(ctx, permanent("cannot parse"))
	waitFor(t, "dead letter", func() bool { return len(e.deadLetters(t)) == 1 })
	r.none(1500 * time.Millisecond)
}

func TestInProgressKeepsSlowEventsAlive(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.AckWait = 400 * time.Millisecond
	src := e.source(t, cfg)
	r := e.start(t, src, 0) // unbuffered: queued messages wait in the Source
	for i := range 5 {
		e.publish(t, fmt.Sprintf("slow%d", i), nil)
	}
	first := r.next()
	// Four AckWaits pass with one event in the pipeline and four queued.
	time.Sleep(4 * cfg.AckWait)
	first.Done(context.Background(), nil)
	seen := map[string]bool{first.Key: true}
	for range 4 {
		ev := r.next()
		if seen[ev.Key] || ev.Metadata["delivered"] != "1" {
			t.Fatalf("event %q delivered %s (seen before: %v)", ev.Key, ev.Metadata["delivered"], seen[ev.Key])
		}
		seen[ev.Key] = true
		ev.Done(context.Background(), nil)
	}
	r.none(3 * cfg.AckWait)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r2 := e.start(t, e.source(t, cfg), 10)
	r2.none(3 * cfg.AckWait)
}

func TestLostEventRedeliveredAfterMaxProcessing(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.AckWait = 300 * time.Millisecond
	cfg.MaxProcessing = 600 * time.Millisecond
	r := e.start(t, e.source(t, cfg), 10)
	e.publish(t, "lost", nil)
	lost := r.next() // the pipeline never settles it
	again := r.next()
	if again.Key != lost.Key || again.Metadata["delivered"] != "2" {
		t.Fatalf("redelivered %q delivered %s", again.Key, again.Metadata["delivered"])
	}
	again.Done(context.Background(), nil)
	lost.Done(context.Background(), nil) // a late settlement is harmless
	r.none(3 * cfg.AckWait)
}

func TestUnsettledDeliveriesExhaustedDeadLettered(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.MaxDeliver = 1
	r := e.start(t, e.source(t, cfg), 10)
	e.publish(t, "poison", nil)
	r.next() // the daemon crashes on it: never settled
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r2 := e.start(t, e.source(t, cfg), 10)
	var dls []jetstream.DeadLetter
	waitFor(t, "dead letter", func() bool { dls = e.deadLetters(t); return len(dls) == 1 })
	if !strings.Contains(dls[0].Error, jetstream.ErrDeliveriesExhausted.Error()) || dls[0].Delivered != 2 {
		t.Errorf("dead letter = %+v", dls[0])
	}
	r2.none(500 * time.Millisecond)
}

func TestShutdownHandsBackQueuedMessages(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.AckWait = time.Minute // only an explicit nak brings them back quickly
	cfg.Logger = logOnFailure(t)
	r := e.start(t, e.source(t, cfg), 0)
	for i := range 3 {
		e.publish(t, fmt.Sprintf("q%d", i), nil)
	}
	waitFor(t, "messages delivered to the source", func() bool { return e.consumerInfo(t).NumAckPending == 3 })
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// Nothing was handed out (nobody read out), so all three come back at
	// once, each delivered once more: handed back while the subscription
	// was still open, they came straight back to it, again and again,
	// until the next Run dead-lettered them past MaxDeliver.
	r2 := e.start(t, e.source(t, cfg), 10)
	for range 3 {
		ev := r2.next()
		if d := ev.Metadata["delivered"]; d != "2" {
			t.Errorf("%s: delivery %s, want 2", ev.Key, d)
		}
		ev.Done(context.Background(), nil)
	}
}

// TestShutdownHandsBackPartlyHandedOut: a message stopped after some of its
// events were handed out and settled comes back once, whole.
func TestShutdownHandsBackPartlyHandedOut(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.AckWait = time.Minute
	cfg.Logger = logOnFailure(t)
	r := e.start(t, e.source(t, cfg), 0)
	e.publish(t, "two", map[string]string{"N": "2"})
	r.next().Done(context.Background(), nil) // the second event waits to be handed out
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r2 := e.start(t, e.source(t, cfg), 10)
	for i := range 2 {
		ev := r2.next()
		if want := fmt.Sprintf("two#%d", i); ev.Key != want || ev.Metadata["delivered"] != "2" {
			t.Errorf("got %s, delivery %s; want %s, delivery 2", ev.Key, ev.Metadata["delivered"], want)
		}
		ev.Done(context.Background(), nil)
	}
}

// logOnFailure returns a debug logger whose lines the test prints if it
// fails.
func logOnFailure(t *testing.T) *slog.Logger {
	var mu sync.Mutex
	var buf strings.Builder
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			t.Log(buf.String())
			mu.Unlock()
		}
	})
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestRunTwiceConcurrently(t *testing.T) {
	e := newEnv(t)
	src := e.source(t, testConfig())
	r := e.start(t, src, 1)
	e.publish(t, "x", nil)
	r.next().Done(context.Background(), nil) // Run is up
	err := src.Run(context.Background(), make(chan connectors.Event))
	if !errors.Is(err, jetstream.ErrRunning) {
		t.Fatalf("second Run = %v, want ErrRunning", err)
	}
}

func TestRunEndsWhenConnectionCloses(t *testing.T) {
	e := newEnv(t)
	r := e.start(t, e.source(t, testConfig()), 1)
	e.publish(t, "x", nil)
	r.next()
	e.nc.Close()
	select {
	case err := <-r.done:
		if !errors.Is(err, nats.ErrConnectionClosed) {
			t.Fatalf("Run = %v, want ErrConnectionClosed", err)
		}
		close(r.done)
	case <-time.After(waitLong):
		t.Fatal("Run did not return after the connection closed")
	}
}

func TestWaitsForStreamCreatedElsewhere(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.CreateStream = false
	r := startAsync(t, e.source(t, cfg), 1)
	time.Sleep(300 * time.Millisecond) // Run retries meanwhile
	ctx := context.Background()
	if _, err := e.js.CreateStream(ctx, natsjs.StreamConfig{Name: "TEST", Subjects: []string{"test.>"}}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, "eventually", nil)
	if ev := r.next(); ev.Key != "eventually#0" {
		t.Fatalf("got %q", ev.Key)
	}
}

func TestCreateStreamAddsSubjects(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.js.CreateStream(ctx, natsjs.StreamConfig{Name: "TEST", Subjects: []string{"other.>"}, MaxMsgs: 1000}); err != nil {
		t.Fatal(err)
	}
	r := e.start(t, e.source(t, testConfig()), 1)
	e.publish(t, "x", nil) // published on test.in, which the stream lacked
	r.next().Done(ctx, nil)
	stream, err := e.js.Stream(ctx, "TEST")
	if err != nil {
		t.Fatal(err)
	}
	cfg := stream.CachedInfo().Config
	if strings.Join(cfg.Subjects, ",") != "other.>,test.>" || cfg.MaxMsgs != 1000 {
		t.Errorf("stream config = subjects %v, max msgs %d", cfg.Subjects, cfg.MaxMsgs)
	}
}

func TestLag(t *testing.T) {
	e := newEnv(t)
	src := e.source(t, testConfig())
	r := e.start(t, src, 0)
	e.publish(t, "a", nil)
	first := r.next() // the consumer exists now
	for _, d := range []string{"b", "c"} {
		e.publish(t, d, nil)
	}
	ctx := context.Background()
	waitFor(t, "lag 3", func() bool {
		lag, err := src.Lag(ctx)
		return err == nil && lag == 3
	})
	first.Done(ctx, nil)
	r.next().Done(ctx, nil)
	r.next().Done(ctx, nil)
	if lag, err := src.Lag(ctx); err != nil || lag != 0 {
		t.Fatalf("Lag = %d, %v; want 0", lag, err)
	}
}

func TestListDeadLettersWithoutStream(t *testing.T) {
	e := newEnv(t)
	dls, err := jetstream.ListDeadLetters(context.Background(), e.nc, 10)
	if err != nil || len(dls) != 0 {
		t.Fatalf("ListDeadLetters = %v, %v", dls, err)
	}
}

func TestErrorHeaderIsOneLine(t *testing.T) {
	e := newEnv(t)
	r := e.start(t, e.source(t, testConfig()), 1)
	e.publish(t, "x", nil)
	long := strings.Repeat("é", 5000)
	r.next().Done(context.Background(), permanent("line one\r\nline two\n"+long))
	var dls []jetstream.DeadLetter
	waitFor(t, "dead letter", func() bool { dls = e.deadLetters(t); return len(dls) == 1 })
	got := dls[0].Error
	if strings.ContainsAny(got, "\r\n") || !strings.Contains(got, "line one; line two; é") || len(got) > 4100 {
		t.Errorf("Error header = %.80q… (%d bytes)", got, len(got))
	}
}

func TestKeepsRunningAcrossServerRestart(t *testing.T) {
	e := newEnv(t)
	r := e.start(t, e.source(t, testConfig()), 10)
	e.publish(t, "before", nil)
	r.next().Done(context.Background(), nil)
	e.srv.Restart(t)
	e.publish(t, "after", nil) // publish retries until the client has reconnected
	ev := r.next()
	if ev.Key != "after#0" {
		t.Fatalf("got %q", ev.Key)
	}
	ev.Done(context.Background(), nil)
	r.none(1500 * time.Millisecond)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
