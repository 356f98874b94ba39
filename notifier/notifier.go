package notifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"
)

// Sender delivers alerts to one place. Send receives one alert, or the
// alerts of a digest period; it returns an error wrapping ErrPermanent when
// retrying cannot help.
type Sender interface {
	Send(ctx context.Context, alerts []Alert) error
}

// Lease runs the dispatcher on one replica of a fleet at a time
// (internal/lease's Postgres; its Local for one process).
type Lease interface {
	// Hold waits for the lease name, runs fn while it holds it (fn's
	// context is cancelled when the lease is lost, and Hold waits for it
	// again) and returns fn's error; it returns nil when ctx is done.
	Hold(ctx context.Context, name string, fn func(ctx context.Context) error) error
}

// DispatchLease is the name of the dispatcher's lease.
const DispatchLease = "notifier/dispatch"

// Options configures a Notifier.
type Options struct {
	Config Config
	Outbox Outbox
	// Senders overrides the senders built from Config.Channels, by channel
	// name (tests; custom channels).
	Senders map[string]Sender
	// Publisher is the NATS connection of nats channels (*nats.Conn).
	Publisher Publisher
	// Lease makes Run dispatch on one replica at a time; nil dispatches
	// always (one process).
	Lease Lease
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Notifier routes alerts to channels through the outbox.
type Notifier struct {
	cfg     Config
	ob      Outbox
	senders map[string]Sender
	lease   Lease
	digest  map[string]time.Duration // channel -> digest period
	now     func() time.Time
	log     *slog.Logger
	wake    chan struct{}
}

// New validates the configuration and builds the channels.
func New(opts Options) (*Notifier, error) {
	if opts.Outbox == nil {
		return nil, errors.New("notifier: no outbox")
	}
	if err := opts.Config.Validate(os.Getenv, os.ReadFile); err != nil {
		return nil, err
	}
	n := &Notifier{
		cfg: opts.Config, ob: opts.Outbox, senders: map[string]Sender{}, digest: map[string]time.Duration{},
		lease: opts.Lease, now: opts.Now, log: opts.Logger, wake: make(chan struct{}, 1),
	}
	if n.now == nil {
		n.now = time.Now
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	n.log = n.log.With("component", "notifier")
	if opts.Config.FlagsSubject != "" {
		// The flags subject is a channel like the others, so its
		// publications go through the outbox and survive NATS outages.
		n.cfg.Channels = append(slices.Clone(n.cfg.Channels), ChannelConfig{Name: FlagsChannel, Type: TypeNATS, Subject: opts.Config.FlagsSubject})
		n.cfg.Routes = append(slices.Clone(n.cfg.Routes), Route{Channels: []string{FlagsChannel}})
	}
	for _, ch := range n.cfg.Channels {
		if s, ok := opts.Senders[ch.Name]; ok {
			n.senders[ch.Name] = s
		} else {
			s, err := newSender(ch, opts.Publisher)
			if err != nil {
				return nil, fmt.Errorf("notifier channel %s: %w", ch.Name, err)
			}
			n.senders[ch.Name] = s
		}
		if ch.Type == TypeEmail && ch.SMTP.Digest > 0 {
			n.digest[ch.Name] = ch.SMTP.Digest
		}
	}
	return n, nil
}

// Channels returns the channels an alert is routed to, sorted.
func (n *Notifier) Channels(a Alert) []string {
	var out []string
	for _, r := range n.cfg.Routes {
		if match(r.Kinds, a.Kind) && match(r.Matters, a.Matter) && match(r.Rules, a.Rule) {
			for _, c := range r.Channels {
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func match(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }

// Notify records the alert's deliveries in the outbox; the dispatcher
// sends them. It returns once they are durable, so an alert notified is
// never lost. An alert no route matches is recorded nowhere (its flag is).
func (n *Notifier) Notify(ctx context.Context, a Alert) error {
	if err := a.validate(); err != nil {
		return err
	}
	chans := n.Channels(a)
	if len(chans) == 0 {
		return nil
	}
	if a.Created.IsZero() {
		a.Created = n.now()
	}
	due := make(map[string]time.Time, len(chans))
	now := n.now()
	for _, c := range chans {
		due[c] = now
		if p := n.digest[c]; p > 0 {
			due[c] = now.Truncate(p).Add(p) // the end of the current period
		}
	}
	if err := n.ob.Enqueue(ctx, a, due); err != nil {
		return fmt.Errorf("notify %s: enqueue: %w", a.ID, err)
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
	return nil
}

// Run dispatches due deliveries until ctx is done. With a Lease, only the
// replica holding DispatchLease dispatches; the others wait to take it
// over, and alerts they notify are sent by the holder at its next
// Interval. (Claims in the outbox keep two dispatchers from sending one
// delivery at once anyway; the lease keeps a fleet from polling it N
// times over and digests from splitting.)
func (n *Notifier) Run(ctx context.Context) error {
	if n.lease != nil {
		return n.lease.Hold(ctx, DispatchLease, n.dispatchLoop)
	}
	return n.dispatchLoop(ctx)
}

// dispatchLoop dispatches every Interval, or when woken, until ctx is
// done.
func (n *Notifier) dispatchLoop(ctx context.Context) error {
	t := time.NewTicker(n.cfg.Interval)
	defer t.Stop()
	var pruned time.Time
	for {
		if _, err := n.Dispatch(ctx); err != nil && ctx.Err() == nil {
			n.log.Error("dispatch alerts", "err", err)
		}
		if now := n.now(); n.cfg.KeepDelivered > 0 && now.Sub(pruned) >= pruneEvery {
			if _, err := n.Prune(ctx); err != nil && ctx.Err() == nil {
				n.log.Error("prune delivered alerts", "err", err)
			}
			pruned = now
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-n.wake:
		}
	}
}

// pruneEvery is how often the dispatcher deletes delivered alerts older
// than Config.KeepDelivered, and pruneBatch how many deliveries one
// statement deletes (short transactions beside the dispatch).
const (
	pruneEvery = time.Hour
	pruneBatch = 1000
)

// Prune deletes the deliveries delivered more than Config.KeepDelivered
// ago, and their alerts, and returns how many deliveries it deleted. With
// KeepDelivered 0 it deletes nothing.
func (n *Notifier) Prune(ctx context.Context) (int, error) {
	if n.cfg.KeepDelivered <= 0 {
		return 0, nil
	}
	before := n.now().Add(-n.cfg.KeepDelivered)
	total := 0
	for {
		k, err := n.ob.Prune(ctx, before, pruneBatch)
		total += k
		if err != nil {
			return total, fmt.Errorf("prune deliveries delivered before %s: %w", before.Format(time.RFC3339), err)
		}
		if k < pruneBatch {
			if total > 0 {
				n.log.Info("pruned delivered alerts", "deliveries", total, "delivered_before", before)
			}
			return total, nil
		}
	}
}

// Dispatch sends every delivery due now and returns how many were sent.
func (n *Notifier) Dispatch(ctx context.Context) (int, error) {
	sent := 0
	for {
		claimed, err := n.ob.Claim(ctx, n.now(), n.cfg.Retry.Lease, 100)
		if err != nil {
			return sent, fmt.Errorf("claim deliveries: %w", err)
		}
		if len(claimed) == 0 {
			return sent, nil
		}
		// Digest channels get their due alerts in one message.
		byChan := map[string][]Claimed{}
		var order []string
		for _, c := range claimed {
			if _, ok := byChan[c.Channel]; !ok {
				order = append(order, c.Channel)
			}
			byChan[c.Channel] = append(byChan[c.Channel], c)
		}
		for _, ch := range order {
			batch := byChan[ch]
			if n.digest[ch] > 0 {
				sent += n.send(ctx, ch, batch)
				continue
			}
			for _, c := range batch {
				sent += n.send(ctx, ch, []Claimed{c})
			}
		}
		if ctx.Err() != nil {
			return sent, ctx.Err()
		}
	}
}

// send delivers one batch to one channel and records the outcome.
func (n *Notifier) send(ctx context.Context, channel string, batch []Claimed) int {
	ids := make([]int64, len(batch))
	alerts := make([]Alert, len(batch))
	for i, c := range batch {
		ids[i], alerts[i] = c.ID, c.Alert
	}
	s, ok := n.senders[channel]
	var err error
	if !ok {
		err = fmt.Errorf("%w: channel %q is no longer configured", ErrPermanent, channel)
	} else {
		err = s.Send(ctx, alerts)
	}
	if err == nil {
		if err := n.ob.Delivered(ctx, ids, n.now()); err != nil {
			n.log.Error("record delivery (it will be sent again)", "channel", channel, "err", err)
		}
		return len(batch)
	}
	attempts := batch[0].Attempts + 1
	final := errors.Is(err, ErrPermanent) || attempts >= n.cfg.Retry.MaxAttempts
	next := n.now().Add(n.backoff(attempts))
	level := slog.LevelWarn
	if final {
		level = slog.LevelError
	}
	n.log.Log(ctx, level, "alert delivery failed", "channel", channel, "alerts", len(batch), "attempt", attempts, "final", final, "err", err)
	if err := n.ob.Retry(ctx, ids, err.Error(), next, final); err != nil {
		n.log.Error("record failed delivery", "channel", channel, "err", err)
	}
	return 0
}

// backoff is the delay after the given number of failed attempts.
func (n *Notifier) backoff(attempts int) time.Duration {
	d := n.cfg.Retry.Initial
	for i := 1; i < attempts && d < n.cfg.Retry.Max; i++ {
		d *= 2
	}
	return min(d, n.cfg.Retry.Max)
}

// Deliveries lists the outbox, newest first (status "" for all).
func (n *Notifier) Deliveries(ctx context.Context, status string, limit int) ([]Delivery, error) {
	return n.ob.List(ctx, status, limit)
}

// Requeue retries failed deliveries now.
func (n *Notifier) Requeue(ctx context.Context, ids ...int64) error {
	if err := n.ob.Requeue(ctx, ids, n.now()); err != nil {
		return err
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
	return nil
}
