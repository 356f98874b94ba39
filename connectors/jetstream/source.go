// Package jetstream turns the messages of a JetStream stream into
// connectors.Events through a durable pull consumer, at least once. It is
// the delivery engine shared by the nats and s3 connectors; each supplies a
// Decoder that turns one message into zero or more events.
//
// Delivery semantics:
//
//   - Every event handed out carries Done. A message is acknowledged (with a
//     confirmed double ack) only after Done(nil) was called for all of its
//     events; a message that decodes to no event is acknowledged at once.
//   - If any event of a message fails with a transient error
//     (connectors.IsTransient) and deliveries remain, the message is handed
//     back with NakWithDelay(Backoff[delivered-1]) and all of its events
//     come again; the pipeline's idempotency check skips those already
//     committed.
//   - Otherwise a failed message (a permanent or invalid error, a decode
//     error, or a transient error on delivery MaxDeliver) is published to
//     the dead-letter subject with a JetStream publish acknowledgement and
//     only then terminated. If that publish fails the message is handed
//     back instead, so it is never lost.
//   - MaxDeliver is enforced here, not by the server: the consumer allows
//     unlimited deliveries, and a message that arrives for delivery
//     MaxDeliver+1 (because earlier deliveries were never settled, for
//     example when simdex crashed while handling it) is dead-lettered
//     without being decoded. The server's own MaxDeliver would drop such a
//     message with nothing but an advisory that nobody may be listening to.
//   - Every message received is tracked from the moment it arrives: while
//     it waits in the Source's queue or its events are in the pipeline, the
//     Source sends a progress note whenever AckWait/2 has passed, so that
//     slow work is not redelivered while Run runs. Events still unsettled
//     MaxProcessing after they were handed out are presumed lost by the
//     pipeline: the notes stop and the server redelivers the message.
//   - When Run returns, messages received but not yet handed out are handed
//     back at once, once the subscription is closed (handed back while it
//     was open, they came straight back to it, again and again, and the
//     next Run dead-lettered them as exhausted); events already handed out
//     may still be settled through Done afterwards (while the NATS
//     connection is open). Anything left unsettled is redelivered by the
//     server after AckWait.
//
// In-flight work is bounded by MaxAckPending, enforced by the server.
package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/simdex/simdex/connectors"
)

// Message is one JetStream message as a decoder sees it. Decoders must not
// modify Header or Data; events may keep references to Data.
type Message struct {
	Subject   string
	Header    nats.Header
	Data      []byte
	Stream    string
	Sequence  uint64    // stream sequence
	Delivered uint64    // delivery count, 1 on first delivery
	Time      time.Time // when the message was stored in the stream
}

// Decoder turns a message into zero or more events. It must not set
// Event.Done (the Source does); it may leave Event.Source empty (the Source
// fills in Config.Name). It returns a *connectors.Error of kind Invalid for
// a malformed message, which is then dead-lettered; a transient error
// makes the message come again. Decode may be called concurrently with
// the Open and Done functions of earlier events.
type Decoder interface {
	Decode(ctx context.Context, m Message) ([]connectors.Event, error)
}

// Errors callers branch on with errors.Is.
var (
	// ErrRunning is returned by Run when the Source is already running.
	ErrRunning = errors.New("source already running")
	// ErrDeliveriesExhausted is the cause recorded for a message that
	// reached delivery MaxDeliver+1 without having been settled.
	ErrDeliveriesExhausted = errors.New("deliveries exhausted")
)

// Timing of internal loops.
const (
	lagInterval     = 10 * time.Second
	drainWait       = 2 * time.Second // at most, for the messages buffered at shutdown
	setupRetryFirst = 100 * time.Millisecond
	setupRetryMax   = 30 * time.Second
)

// Source consumes one durable JetStream consumer. Create it with New.
type Source struct {
	nc      *nats.Conn
	js      natsjs.JetStream
	cfg     Config
	dec     Decoder
	log     *slog.Logger
	running atomic.Bool

	mu      sync.Mutex
	tracked map[*inflight]struct{} // received and not yet settled
}

var _ connectors.Source = (*Source)(nil)

// inflight is one received message and the settlement of its events.
type inflight struct {
	msg natsjs.Msg
	m   Message

	// Guarded by Source.mu: the last receipt or progress note, and when
	// the events were handed out (zero while queued).
	touched, dispatched time.Time

	mu        sync.Mutex
	settled   []bool // per event: Done called
	unsettled int    // events not settled yet
	errs      []error
	abandoned bool // some events were never handed out
}

// New validates cfg, applies defaults and returns a Source that consumes
// through nc. It starts nothing and does no I/O; Run creates the stream
// (if asked), the consumer and the dead-letter stream.
func New(nc *nats.Conn, cfg Config, dec Decoder) (*Source, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nats connection is nil", ErrInvalidConfig)
	}
	if dec == nil {
		return nil, fmt.Errorf("%w: decoder is nil", ErrInvalidConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := natsjs.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream context for %s: %w", cfg.Name, err)
	}
	return &Source{
		nc:      nc,
		js:      js,
		cfg:     cfg,
		dec:     dec,
		log:     cfg.Logger.With("component", "connector/jetstream", "source", cfg.Name),
		tracked: make(map[*inflight]struct{}),
	}, nil
}

// Config returns the configuration in effect, defaults applied.
func (s *Source) Config() Config { return s.cfg }

// Run consumes messages and delivers their events on out until ctx is
// cancelled, returning nil then. Setup failures that retrying can cure
// (server unreachable, JetStream unavailable, stream not created yet) are
// logged and retried with backoff; other failures, such as a closed
// connection or a stream configuration the server rejects, are returned.
// Run never closes out. Only one Run may be active at a time.
func (s *Source) Run(ctx context.Context, out chan<- connectors.Event) error {
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("run %s: %w", s.cfg.Name, ErrRunning)
	}
	defer s.running.Store(false)
	for {
		cons, err := s.setup(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		err = s.consume(ctx, cons, out)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, nats.ErrConnectionClosed) {
			return err
		}
		s.log.Warn("consumer subscription ended; recreating it", "stream", s.cfg.Stream, "durable", s.cfg.Durable, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// Lag returns the consumer's backlog: messages not yet delivered plus
// messages delivered and not yet acknowledged. It also updates the lag
// gauge.
func (s *Source) Lag(ctx context.Context) (uint64, error) {
	cons, err := s.js.Consumer(ctx, s.cfg.Stream, s.cfg.Durable)
	if err != nil {
		return 0, fmt.Errorf("consumer %s on stream %s: %w", s.cfg.Durable, s.cfg.Stream, err)
	}
	info := cons.CachedInfo()
	lag := info.NumPending + uint64(max(info.NumAckPending, 0))
	s.cfg.Metrics.setLag(s.cfg.Name, lag)
	return lag, nil
}

// setup creates what Run needs, retrying failures that retrying can cure.
func (s *Source) setup(ctx context.Context) (natsjs.Consumer, error) {
	delay := setupRetryFirst
	for {
		cons, err := s.trySetup(ctx)
		if err == nil {
			return cons, nil
		}
		if ctx.Err() != nil || !retryable(err) {
			return nil, err
		}
		s.log.Error("set up JetStream consumer; will retry", "stream", s.cfg.Stream, "durable", s.cfg.Durable, "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, setupRetryMax)
	}
}

func (s *Source) trySetup(ctx context.Context) (natsjs.Consumer, error) {
	if s.cfg.CreateStream {
		if err := ensureStream(ctx, s.js, s.cfg.Stream, s.cfg.Subjects, s.cfg.Replicas); err != nil {
			return nil, err
		}
	}
	if err := ensureStream(ctx, s.js, DeadLetterStream, []string{DeadLetterPrefix + ">", s.cfg.DeadLetterSubject}, s.cfg.Replicas); err != nil {
		return nil, err
	}
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.cfg.Stream, natsjs.ConsumerConfig{
		Durable:       s.cfg.Durable,
		Description:   "simdex source " + s.cfg.Name,
		AckPolicy:     natsjs.AckExplicitPolicy,
		AckWait:       s.cfg.AckWait,
		MaxDeliver:    -1, // enforced by the Source; see the package doc
		MaxAckPending: s.cfg.MaxAckPending,
		FilterSubject: s.cfg.FilterSubject,
	})
	if err != nil {
		return nil, fmt.Errorf("create consumer %s on stream %s: %w", s.cfg.Durable, s.cfg.Stream, err)
	}
	return cons, nil
}

// retryable reports whether a setup error may go away by itself.
func retryable(err error) bool {
	if errors.Is(err, nats.ErrConnectionClosed) {
		return false
	}
	var apiErr *natsjs.APIError
	if errors.As(err, &apiErr) {
		// 503: JetStream not enabled yet or temporarily unavailable. Other
		// API errors are configuration problems, reported, not retried.
		return apiErr.Code == 503 || apiErr.ErrorCode == natsjs.JSErrCodeStreamNotFound
	}
	return true // timeouts, no responders, disconnections
}

// ensureStream creates stream with subjects (file storage, on replicas
// servers) if it is missing, and adds any of subjects it lacks otherwise.
func ensureStream(ctx context.Context, js natsjs.JetStream, name string, subjects []string, replicas int) error {
	stream, err := js.Stream(ctx, name)
	if errors.Is(err, natsjs.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, natsjs.StreamConfig{
			Name:     name,
			Subjects: dedupe(subjects),
			Storage:  natsjs.FileStorage,
			Replicas: max(1, replicas),
		})
		if err == nil {
			return nil
		}
		if !errors.Is(err, natsjs.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("create stream %s: %w", name, err)
		}
		stream, err = js.Stream(ctx, name) // created concurrently
	}
	if err != nil {
		return fmt.Errorf("look up stream %s: %w", name, err)
	}
	cfg := stream.CachedInfo().Config
	missing := false
	for _, subj := range subjects {
		if !covered(cfg.Subjects, subj) {
			cfg.Subjects = append(cfg.Subjects, subj)
			missing = true
		}
	}
	if !missing {
		return nil
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("add subjects to stream %s: %w", name, err)
	}
	return nil
}

// dedupe drops the subjects that another one covers.
func dedupe(subjects []string) []string {
	var out []string
	for i, s := range subjects {
		others := append(append([]string(nil), out...), subjects[i+1:]...)
		if !covered(others, s) {
			out = append(out, s)
		}
	}
	return out
}

// covered reports whether one of patterns matches every subject that
// subject (which may hold wildcards) matches.
func covered(patterns []string, subject string) bool {
	for _, p := range patterns {
		if subsumes(p, subject) {
			return true
		}
	}
	return false
}

// subsumes reports whether pattern matches everything subject matches.
func subsumes(pattern, subject string) bool {
	pt, st := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, p := range pt {
		switch {
		case p == ">":
			return len(st) > i
		case i >= len(st):
			return false
		case p == "*":
			if st[i] == ">" {
				return false
			}
		case p != st[i]:
			return false
		}
	}
	return len(pt) == len(st)
}

// consume runs one subscription until ctx is done or it fails.
func (s *Source) consume(ctx context.Context, cons natsjs.Consumer, out chan<- connectors.Event) error {
	iter, err := cons.Messages(natsjs.PullMaxMessages(s.cfg.MaxAckPending))
	if err != nil {
		return fmt.Errorf("subscribe to consumer %s on stream %s: %w", s.cfg.Durable, s.cfg.Stream, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	q := &queue{ready: make(chan struct{}, 1)}
	readErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); readErr <- s.read(ctx, iter, q) }()
	go func() { defer wg.Done(); s.keepAlive(ctx) }()
	go func() { defer wg.Done(); s.watchLag(ctx, cons) }()
	err = s.deliver(ctx, q, out, readErr)
	cancel()
	wg.Wait()
	for _, f := range q.drain() {
		s.release(f)
	}
	return err
}

// read moves every message received into the queue, tracking it at once.
// When ctx is done it unsubscribes and queues the messages still buffered
// by the client library too, for consume to hand back once the
// subscription is closed: handed back while it was open, a message came
// straight back to it, and again, twenty times in 20 ms under load, until
// the next Run received it past MaxDeliver and dead-lettered it unread.
func (s *Source) read(ctx context.Context, iter natsjs.MessagesContext, q *queue) error {
	for {
		msg, err := iter.Next(natsjs.NextContext(ctx))
		if err != nil {
			if ctx.Err() == nil {
				iter.Stop()
				return fmt.Errorf("next message from consumer %s on stream %s: %w", s.cfg.Durable, s.cfg.Stream, err)
			}
			// Drained, Next returns what the library holds and then
			// ErrMsgIteratorClosed once the subscription's messages in
			// flight have arrived. Waiting 100 ms for each one instead
			// gave up on them under load (they then came back only after
			// AckWait).
			iter.Drain()
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainWait)
			defer cancel()
			for {
				msg, err := iter.Next(natsjs.NextContext(dctx))
				if err != nil {
					iter.Stop()
					return nil
				}
				s.enqueue(msg, q)
			}
		}
		s.enqueue(msg, q)
	}
}

// enqueue tracks msg and queues it.
func (s *Source) enqueue(msg natsjs.Msg, q *queue) {
	meta, err := msg.Metadata()
	if err != nil {
		// Not a JetStream delivery; nothing to settle.
		s.log.Error("read message metadata; ignoring message", "subject", msg.Subject(), "err", err)
		return
	}
	f := &inflight{msg: msg, m: Message{
		Subject:   msg.Subject(),
		Header:    msg.Headers(),
		Data:      msg.Data(),
		Stream:    meta.Stream,
		Sequence:  meta.Sequence.Stream,
		Delivered: meta.NumDelivered,
		Time:      meta.Timestamp,
	}}
	s.cfg.Metrics.add(received, s.cfg.Name, 1)
	s.mu.Lock()
	f.touched = time.Now()
	s.tracked[f] = struct{}{}
	s.mu.Unlock()
	q.push(f)
}

// deliver decodes queued messages and hands their events out. A message
// it stops before handing out goes back to the queue, which consume hands
// back once the subscription is closed.
func (s *Source) deliver(ctx context.Context, q *queue, out chan<- connectors.Event, readErr <-chan error) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		if f := q.pop(); f != nil {
			if !s.dispatch(ctx, f, out) {
				q.push(f)
			}
			continue
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			return err
		}
	}
}

// dispatch decodes one message and hands its events out, or settles it
// directly when there is nothing to hand out. It reports false when ctx
// ended before it handed out an event (or settled the message): the
// caller hands the message back.
func (s *Source) dispatch(ctx context.Context, f *inflight, out chan<- connectors.Event) bool {
	if ctx.Err() != nil {
		return false
	}
	if f.m.Delivered > uint64(s.cfg.MaxDeliver) {
		f.errs = []error{fmt.Errorf("%w: delivery %d without settlement, max %d", ErrDeliveriesExhausted, f.m.Delivered, s.cfg.MaxDeliver)}
		s.finish(ctx, f)
		return true
	}
	evs, err := s.dec.Decode(ctx, f.m)
	if err != nil {
		if ctx.Err() != nil {
			return false // the decoder may have failed because we are stopping
		}
		f.errs = []error{err}
		s.finish(ctx, f)
		return true
	}
	if len(evs) == 0 {
		s.finish(ctx, f)
		return true
	}
	f.settled = make([]bool, len(evs))
	f.unsettled = len(evs)
	s.mu.Lock()
	f.dispatched = time.Now()
	s.mu.Unlock()
	for i := range evs {
		ev := evs[i]
		if ev.Source == "" {
			ev.Source = s.cfg.Name
		}
		ev.Done = func(ctx context.Context, err error) { s.settle(ctx, f, i, err) }
		select {
		case out <- ev:
			s.cfg.Metrics.add(events, s.cfg.Name, 1)
		case <-ctx.Done():
			// The events handed out settle f later, unless there are
			// none or they are all settled already.
			return i > 0 && !s.abandon(f, len(evs)-i)
		}
	}
	return true
}

// settle records the outcome of event i of f and finishes f after its last
// event.
func (s *Source) settle(ctx context.Context, f *inflight, i int, err error) {
	f.mu.Lock()
	if f.settled[i] {
		f.mu.Unlock()
		s.log.Warn("event settled twice; ignoring the second settlement", "subject", f.m.Subject, "seq", f.m.Sequence, "err", err)
		return
	}
	f.settled[i] = true
	if err != nil {
		f.errs = append(f.errs, err)
	}
	f.unsettled--
	last := f.unsettled == 0
	f.mu.Unlock()
	if last {
		s.finish(ctx, f)
	}
}

// abandon marks the last n events of f as never handed out, and reports
// whether none of the others is left to settle: the caller then hands f
// back.
func (s *Source) abandon(f *inflight, n int) (settled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abandoned = true
	f.unsettled -= n
	return f.unsettled == 0
}

// finish acknowledges, hands back or dead-letters a message whose events
// are all settled (or were never handed out).
func (s *Source) finish(ctx context.Context, f *inflight) {
	s.untrack(f)
	transient := false
	for _, err := range f.errs {
		if connectors.IsTransient(err) {
			transient = true
		}
	}
	switch {
	case len(f.errs) == 0 && !f.abandoned:
		s.ack(ctx, f)
	case len(f.errs) == 0:
		s.nak(f, 0, errors.New("source stopped before handing out all events"))
	case transient && f.m.Delivered < uint64(s.cfg.MaxDeliver):
		s.nak(f, s.cfg.backoff(f.m.Delivered), errors.Join(f.errs...))
	case transient:
		s.deadLetter(ctx, f, fmt.Errorf("giving up after %d deliveries: %w", f.m.Delivered, errors.Join(f.errs...)))
	default:
		s.deadLetter(ctx, f, errors.Join(f.errs...))
	}
}

func (s *Source) ack(ctx context.Context, f *inflight) {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.ReplyTimeout)
	err := f.msg.DoubleAck(rctx)
	cancel()
	if err != nil && rctx.Err() != nil {
		err = f.msg.Ack() // no confirmation in time; ack without one
	}
	if err != nil {
		s.log.Warn("acknowledge message; it will be redelivered", "subject", f.m.Subject, "seq", f.m.Sequence, "err", err)
		return
	}
	s.cfg.Metrics.add(acked, s.cfg.Name, 1)
}

func (s *Source) nak(f *inflight, delay time.Duration, cause error) {
	var err error
	if delay > 0 {
		err = f.msg.NakWithDelay(delay)
	} else {
		err = f.msg.Nak()
	}
	if err != nil {
		s.log.Warn("hand message back; it will be redelivered after the ack wait", "subject", f.m.Subject, "seq", f.m.Sequence, "err", err)
		return
	}
	s.cfg.Metrics.add(nacked, s.cfg.Name, 1)
	s.log.Debug("message handed back for redelivery", "subject", f.m.Subject, "seq", f.m.Sequence, "delivered", f.m.Delivered, "delay", delay, "cause", cause)
}

// release hands back a message that was never handed out.
func (s *Source) release(f *inflight) {
	s.untrack(f)
	s.nak(f, 0, errors.New("source stopped"))
}

func (s *Source) untrack(f *inflight) {
	s.mu.Lock()
	delete(s.tracked, f)
	s.mu.Unlock()
}

// keepAlive sends progress notes for tracked messages older than AckWait/2.
func (s *Source) keepAlive(ctx context.Context) {
	half := s.cfg.AckWait / 2
	t := time.NewTicker(max(s.cfg.AckWait/4, time.Millisecond))
	defer t.Stop()
	var due, expired []*inflight
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		due, expired = due[:0], expired[:0]
		s.mu.Lock()
		for f := range s.tracked {
			switch {
			case now.Sub(f.touched) < half:
			case !f.dispatched.IsZero() && now.Sub(f.dispatched) > s.cfg.MaxProcessing:
				delete(s.tracked, f) // stop keeping it alive; a late Done still settles it
				expired = append(expired, f)
			default:
				f.touched = now
				due = append(due, f)
			}
		}
		s.mu.Unlock()
		for _, f := range expired {
			s.log.Warn("event unsettled for longer than MaxProcessing; letting it be redelivered", "subject", f.m.Subject, "seq", f.m.Sequence, "max_processing", s.cfg.MaxProcessing)
		}
		for _, f := range due {
			if err := f.msg.InProgress(); err != nil && !errors.Is(err, natsjs.ErrMsgAlreadyAckd) {
				s.log.Warn("send progress note; message may be redelivered", "subject", f.m.Subject, "seq", f.m.Sequence, "err", err)
			}
		}
	}
}

// watchLag refreshes the lag gauge while consuming.
func (s *Source) watchLag(ctx context.Context, cons natsjs.Consumer) {
	if s.cfg.Metrics == nil {
		return
	}
	t := time.NewTicker(lagInterval)
	defer t.Stop()
	for {
		if info, err := cons.Info(ctx); err == nil {
			s.cfg.Metrics.setLag(s.cfg.Name, info.NumPending+uint64(max(info.NumAckPending, 0)))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// queue holds received messages waiting to be decoded; it is bounded by
// the server's MaxAckPending.
type queue struct {
	mu    sync.Mutex
	items []*inflight
	ready chan struct{} // signalled after push
}

func (q *queue) push(f *inflight) {
	q.mu.Lock()
	q.items = append(q.items, f)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *queue) pop() *inflight {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil
	}
	f := q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	return f
}

func (q *queue) drain() []*inflight {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
