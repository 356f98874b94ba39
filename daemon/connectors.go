package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/robfig/cron/v3"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/connectors"
	fsconn "github.com/simdex/simdex/connectors/fs"
	jsconn "github.com/simdex/simdex/connectors/jetstream"
	natsconn "github.com/simdex/simdex/connectors/nats"
	s3conn "github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/lease"
)

// singletons is the lease under which the daemon's singletons run on one
// replica at a time: reconciliation, the first start's backfill, the
// policy schedules, the notifier's dispatch. internal/lease's Local with
// the embedded driver; its Postgres, on the shared pool, for a fleet.
type singletons interface {
	// Hold waits for the lease name and runs fn while it holds it.
	Hold(ctx context.Context, name string, fn lease.Func) error
	// Now returns the time every replica agrees on.
	Now(ctx context.Context) (time.Time, error)
	// RunSlot runs fn for one scheduled slot of job, once across replicas.
	RunSlot(ctx context.Context, job string, slot time.Time, fn lease.Func) (bool, error)
	// LastSlot returns the last slot of job recorded complete.
	LastSlot(ctx context.Context, job string) (time.Time, error)
	// Run runs fn if no replica holds the lease name.
	Run(ctx context.Context, name string, fn lease.Func) (bool, error)
}

var (
	_ singletons = (*lease.Local)(nil)
	_ singletons = (*lease.Postgres)(nil)
)

// namedSource is a configured connector.
type namedSource struct {
	name string
	src  connectors.Source
}

// bucket is a configured S3 connector with its client, for backfill,
// reconciliation and hold enforcement.
type bucket struct {
	cfg    S3SourceConfig
	source string // Event.Source of its events
	client *s3conn.Client
}

// openBuckets builds the client of every configured S3 connector.
func (d *Daemon) openBuckets(_ context.Context, p *parts) error {
	cfg, logger := &d.cfg, d.logger
	var metrics *s3conn.Metrics
	for _, b := range cfg.Connectors.S3 {
		access, secret, err := b.Credentials()
		if err != nil {
			return fmt.Errorf("%w: connectors.s3 %s: %w", ErrConfig, b.Name, err)
		}
		bk := &bucket{cfg: b, source: "s3:" + b.Name}
		if b.Mode == "listen" && metrics == nil {
			metrics = s3conn.NewMetrics(d.reg)
		}
		c, err := s3conn.NewClient(s3conn.Config{
			Name: bk.source, Endpoint: b.Endpoint, Secure: b.Secure, Region: b.Region,
			AccessKey: access, SecretKey: secret, Bucket: b.Bucket, Prefix: b.Prefix, Mode: b.Mode,
			Versioned: true, MaxObjectSize: cfg.Extract.MaxFetchSize(), SettleTimeout: b.SettleTimeout,
			ProbeInterval: b.ProbeInterval, Metrics: metrics,
			CatchUp: func(ctx context.Context) { d.catchUp(ctx, p, bk) },
			Logger:  logger.With("connector", bk.source),
		})
		if err != nil {
			return fmt.Errorf("connector %s: %w", bk.source, err)
		}
		bk.client = c
		if b.Mode == "listen" && b.Reconcile == "" {
			p.log.Info("listen-mode bucket reconciled by default: its events are a hint only",
				"connector", bk.source, "reconcile", DefaultListenReconcile)
		}
		p.buckets = append(p.buckets, bk)
	}
	return nil
}

// catchUp reconciles b once a listen subscription holds, the first or one
// replacing a subscription that stalled or failed: MinIO replays none of
// the events before it.
func (d *Daemon) catchUp(ctx context.Context, p *parts, b *bucket) {
	p.log.Info("listen subscription established; reconciling the bucket for the events before it", "connector", b.source)
	d.reconcile(ctx, p, b)
}

// openConnectors builds every configured connector; close closes those
// that hold resources.
func (d *Daemon) openConnectors(_ context.Context, p *parts) error {
	cfg, logger := &d.cfg, d.logger
	p.onClose(func() {
		for _, s := range p.sources {
			if c, ok := s.src.(io.Closer); ok {
				if err := c.Close(); err != nil {
					p.log.Warn("close connector", "connector", s.name, "err", err)
				}
			}
		}
	})
	var jsm *jsconn.Metrics
	if len(cfg.Connectors.NATS) > 0 || len(p.buckets) > 0 {
		jsm = jsconn.NewMetrics(d.reg)
	}
	for _, b := range p.buckets {
		switch b.cfg.Mode {
		case "listen":
			p.sources = append(p.sources, namedSource{name: b.source, src: b.client.ListenSource()})
		case "jetstream":
			src, err := jsconn.New(p.nc, jsconn.Config{
				Name: b.source, Stream: b.cfg.Stream, Subjects: []string{b.cfg.Subject},
				CreateStream: true, Replicas: cfg.NATS.StreamReplicas, Durable: "simdex-" + b.cfg.Name, AckWait: b.cfg.AckWait,
				Logger: logger.With("connector", b.source), Metrics: jsm,
			}, s3conn.Decoder{Client: b.client})
			if err != nil {
				return fmt.Errorf("connector %s: %w", b.source, err)
			}
			p.sources = append(p.sources, namedSource{name: b.source, src: src})
		}
	}
	fetch := bucketFetcher(p.buckets)
	for _, n := range cfg.Connectors.NATS {
		src, err := natsconn.New(p.nc, natsconn.Config{
			Config: jsconn.Config{
				Name: "nats:" + n.Name, Stream: n.Stream, Subjects: n.Subjects, CreateStream: true, Replicas: cfg.NATS.StreamReplicas,
				Durable: n.Durable, MaxDeliver: n.MaxDeliver, AckWait: n.AckWait,
				Logger: logger.With("connector", "nats:"+n.Name), Metrics: jsm,
			},
			MaxPayload: n.MaxPayload,
		}, fetch)
		if err != nil {
			return fmt.Errorf("connector nats:%s: %w", n.Name, err)
		}
		p.sources = append(p.sources, namedSource{name: "nats:" + n.Name, src: src})
	}
	for _, dir := range cfg.WatchedDirs() {
		name := "fs:" + dir
		// The inbox of the embedded default must exist for users to drop
		// files in, and only its owner may list what was dropped: a name
		// can say more than its file. An existing folder is left as it is.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("connector %s: create watched folder: %w", name, err)
		}
		src, err := fsconn.New(fsconn.Config{
			Dir: dir, Name: name, Interval: cfg.Connectors.FS.Interval, Settle: cfg.Connectors.FS.Settle,
			Logger: logger.With("connector", name),
		})
		if err != nil {
			return fmt.Errorf("connector %s: %w", name, err)
		}
		p.sources = append(p.sources, namedSource{name: name, src: src})
	}
	return nil
}

// bucketFetcher resolves NATS reference messages (s3://bucket/key) through
// the configured S3 connectors.
type bucketFetcher []*bucket

// Fetch implements natsconn.Fetcher.
func (bs bucketFetcher) Fetch(ctx context.Context, name, key, versionID string) (io.ReadCloser, natsconn.ObjectInfo, error) {
	c, err := bs.client(name, key)
	if err != nil {
		return nil, natsconn.ObjectInfo{}, err
	}
	rc, info, err := c.Fetch(ctx, name, key, versionID)
	if err != nil {
		return nil, natsconn.ObjectInfo{}, err
	}
	return rc, natsconn.ObjectInfo{
		Size: info.Size, ETag: info.ETag, ContentType: info.ContentType, VersionID: info.VersionID,
		Metadata: info.Metadata, ModTime: info.ModTime,
	}, nil
}

// client returns the client of the S3 connector of bucket name, or an
// error wrapping connectors.ErrObjectMissing, naming key, when no
// connector reads that bucket.
func (bs bucketFetcher) client(name, key string) (*s3conn.Client, error) {
	for _, b := range bs {
		if b.cfg.Bucket == name {
			return b.client, nil
		}
	}
	return nil, &connectors.Error{Op: "fetch reference", Key: name + "/" + key, Kind: connectors.Permanent,
		Err: fmt.Errorf("%w: bucket %q is not configured under connectors.s3", connectors.ErrObjectMissing, name)}
}

// inventory is what reconciliation needs of the index: Seen, and the
// objects of one bucket.
type inventory struct{ index.Reader }

// Objects lists the top-level documents of one bucket.
func (i inventory) Objects(ctx context.Context, source, bucket string, fn func(key, versionID string) error) error {
	prefix := source + "/" + bucket + "/"
	return i.Documents(ctx, func(r *index.Record) error {
		if r.Parent != 0 || !strings.HasPrefix(r.Key, prefix) {
			return nil
		}
		return fn(strings.TrimPrefix(r.Key, prefix), r.VersionID)
	})
}

// connectorMembers are the configured connectors delivering events to the
// pipeline, the first start's backfills and the reconciliations.
func (d *Daemon) connectorMembers(p *parts) []member {
	var members []member
	for _, s := range p.sources {
		members = append(members, member{"connector " + s.name, func(ctx context.Context) error { return s.src.Run(ctx, p.events) }})
	}
	for _, b := range p.buckets {
		if b.cfg.Backfill {
			// One replica backfills; if it dies, the next to take the
			// lease finds no marker and backfills again.
			members = append(members, member{"backfill " + b.source, func(ctx context.Context) error {
				err := p.lease.Hold(ctx, "backfill/"+b.source, func(ctx context.Context) error {
					return backfillOnce(ctx, p.nc, d.cfg.NATS.StreamReplicas, b, p.events, p.log)
				})
				if err != nil && ctx.Err() == nil {
					p.log.Error("backfill failed; run `simdex backfill` once the cause is fixed", "connector", b.source, "err", err)
				}
				return nil
			}})
		}
	}
	return append(members, member{"reconcile", func(ctx context.Context) error { return d.reconcileEvery(ctx, p) }})
}

// reconcileEvery reconciles each bucket on its schedule until ctx is done,
// then waits for a run under way. Each scheduled run of a bucket happens
// on one replica, under the lease "reconcile/<source>"; the replica that
// takes the lease over from one that died mid-run runs that slot again.
func (d *Daemon) reconcileEvery(ctx context.Context, p *parts) error {
	type job struct {
		b     *bucket
		sched cron.Schedule
	}
	var jobs []job
	for _, b := range p.buckets {
		if b.cfg.ReconcileSchedule() == "" {
			continue
		}
		sched, err := cronParser.Parse(b.cfg.ReconcileSchedule())
		if err != nil {
			return fmt.Errorf("%w: connectors.s3 %s reconcile: %w", ErrConfig, b.cfg.Name, err)
		}
		jobs = append(jobs, job{b, sched})
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			_ = lease.Every(ctx, p.lease, "reconcile/"+j.b.source, j.sched, func(ctx context.Context) error {
				d.reconcile(ctx, p, j.b)
				return nil
			}, p.log)
		})
	}
	wg.Wait()
	return nil
}

// reconcile compares one bucket with the index and queues what was missed.
// Runs are serialised: a slow run is not overlapped by the next.
func (d *Daemon) reconcile(ctx context.Context, p *parts, b *bucket) {
	d.reconMu.Lock()
	defer d.reconMu.Unlock()
	log := d.logger.With("component", "reconcile", "connector", b.source)
	start := time.Now()
	counts, err := b.client.Reconcile(ctx, inventory{p.eng.Store}, p.events)
	if err != nil {
		log.Error("reconciliation failed", "err", err, "elapsed", time.Since(start))
		return
	}
	log.Info("reconciliation done", "counts", fmt.Sprintf("%+v", counts), "elapsed", time.Since(start))
}

// stateBucket is the JetStream key-value bucket for state shared by every
// replica: which sources have been backfilled.
const stateBucket = "simdex_state"

// backfillOnce backfills b unless a replica already did. The marker is
// written only once every listed version is committed (or failed for good),
// so a crash at any moment before that backfills again on the next start,
// and the versions already committed are skipped by their idempotency key.
// Transient failures (MinIO or the store briefly down) run the backfill
// again after a pause, until it completes or ctx is done.
func backfillOnce(ctx context.Context, nc *nats.Conn, replicas int, b *bucket, out chan<- connectors.Event, log *slog.Logger) error {
	js, err := natsjs.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	// An existing bucket is used as it is: updating it would scale one
	// that an operator replicated over a NATS cluster down to one replica.
	kv, err := js.KeyValue(ctx, stateBucket)
	if errors.Is(err, natsjs.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, natsjs.KeyValueConfig{Bucket: stateBucket, Storage: natsjs.FileStorage, Replicas: replicas})
		if errors.Is(err, natsjs.ErrBucketExists) { // created by another replica meanwhile
			kv, err = js.KeyValue(ctx, stateBucket)
		}
	}
	if err != nil {
		return fmt.Errorf("open state bucket %s: %w", stateBucket, err)
	}
	key := "backfill." + sanitiseKey(b.source)
	if _, err := kv.Get(ctx, key); err == nil {
		return nil
	} else if !errors.Is(err, natsjs.ErrKeyNotFound) {
		return fmt.Errorf("read %s: %w", key, err)
	}
	log.Info("first start: backfilling every object version", "connector", b.source)
	for attempt := 0; ; attempt++ {
		counts, err := b.client.BackfillSettled(ctx, out)
		if err == nil && counts.Transient == 0 {
			log.Info("backfill complete", "connector", b.source, "counts", counts.String())
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("backfill %s: stopped before every version was committed (%s); the next start backfills again: %w", b.source, counts, ctx.Err())
		}
		if err != nil && !connectors.IsTransient(err) {
			return fmt.Errorf("backfill %s: %w", b.source, err)
		}
		pause := backfillRetryPause(attempt)
		log.Warn("backfill incomplete; running it again", "connector", b.source, "counts", counts.String(), "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return fmt.Errorf("backfill %s: %w", b.source, ctx.Err())
		case <-time.After(pause):
		}
	}
	if _, err := kv.PutString(ctx, key, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("mark %s backfilled: %w", b.source, err)
	}
	return nil
}

// backfillRetryPause is the pause before a backfill's next run after a
// transient failure: 1 s, 5 s, 30 s, then 2 minutes, as for redeliveries.
func backfillRetryPause(attempt int) time.Duration {
	pauses := []time.Duration{time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute}
	return pauses[min(attempt, len(pauses)-1)]
}

func sanitiseKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// listDeadLetters reads the DEADLETTER stream for the API.
func listDeadLetters(ctx context.Context, nc *nats.Conn, limit int) ([]api.DeadLetter, error) {
	dls, err := jsconn.ListDeadLetters(ctx, nc, limit)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	out := make([]api.DeadLetter, len(dls))
	for i, d := range dls {
		data := d.Data[:min(len(d.Data), 64<<10)]
		out[i] = api.DeadLetter{Source: d.Source, Subject: d.Subject, Stream: d.Stream, Sequence: d.Sequence,
			Delivered: d.Delivered, Error: d.Error, Time: d.Time, Published: d.Published,
			Headers: d.Header, Size: len(d.Data), Data: strings.ToValidUTF8(string(data), "\uFFFD")}
	}
	return out, nil
}
