package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/robfig/cron/v3"
	"golang.org/x/sync/semaphore"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/connectors"
	s3conn "github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/datadir"
	"github.com/simdex/simdex/internal/dirlock"
	"github.com/simdex/simdex/notifier"
	notifiersqlite "github.com/simdex/simdex/notifier/sqlite"
	"github.com/simdex/simdex/policy"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
	"github.com/simdex/simdex/webui"
)

// Daemon is `simdex serve`: connectors feeding the ingest pipeline, the
// index, and the HTTP endpoints.
type Daemon struct {
	cfg    Config
	logger *slog.Logger
	reg    *prometheus.Registry

	buckets []*bucket
	events  chan<- connectors.Event
	reconMu sync.Mutex

	ready    atomic.Bool
	addr     atomic.Value // net.Addr of the HTTP listener once bound
	natsURL  atomic.Value // string
	notifier atomic.Pointer[notifier.Notifier]
	policy   atomic.Pointer[policy.Engine]
	// ui serves the review UI at / and /ui/.
	ui http.Handler
}

// Policy returns the policy engine once Run has started it, or nil.
func (d *Daemon) Policy() *policy.Engine { return d.policy.Load() }

// Notifier returns the notifier once Run has started it, or nil.
func (d *Daemon) Notifier() *notifier.Notifier { return d.notifier.Load() }

// New validates cfg and returns a daemon; it starts nothing.
func New(cfg Config, logger *slog.Logger) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Daemon{cfg: cfg, logger: logger, reg: reg, ui: webui.Handler()}, nil
}

// Addr returns the HTTP listener's address once Run has bound it, or nil.
func (d *Daemon) Addr() net.Addr {
	a, _ := d.addr.Load().(net.Addr)
	return a
}

// NATSURL returns the NATS URL in use once Run has connected, or "".
func (d *Daemon) NATSURL() string {
	u, _ := d.natsURL.Load().(string)
	return u
}

// Registry returns the daemon's metrics registry.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// Run starts everything and blocks until ctx is done or a component fails;
// then it shuts down in order: connectors stop, the pipeline finishes the
// events under way, HTTP stops, the index closes, the embedded NATS stops.
func (d *Daemon) Run(ctx context.Context) error {
	cfg := d.cfg
	log := d.logger.With("component", "daemon")
	if err := datadir.Make(cfg.DataDir); err != nil {
		return fmt.Errorf("create data directory %s: %w", cfg.DataDir, err)
	}
	if w, err := datadir.Check(cfg.DataDir); err != nil {
		return err
	} else if w != "" {
		log.Warn("data directory open to other local users; starting anyway", "dir", cfg.DataDir, "warning", w)
	}
	// Before anything opens a store: a second daemon in the same
	// directory must not touch the embedded JetStream store or the index.
	lock, err := dirlock.Acquire(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Release()
	natsURL := cfg.NATS.URL
	natsAuth, err := cfg.NATS.clientOptions(os.Getenv, os.ReadFile)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if natsURL == "" {
		password, err := embeddedNATSPassword(cfg.NATSPasswordPath())
		if err != nil {
			return err
		}
		natsAuth = []nats.Option{nats.UserInfo(EmbeddedNATSUser, password)}
		ns, err := startEmbeddedNATS(cfg.DataDir, password, d.logger)
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		natsURL = ns.URL()
		log.Info("embedded NATS with JetStream started", "url", natsURL, "store", filepath.Join(cfg.DataDir, "nats"))
	}
	d.natsURL.Store(natsURL)

	eng, err := OpenEngine(ctx, &cfg, "", d.logger)
	if err != nil {
		return err
	}
	defer eng.Close()
	anchors := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "simdex_index_anchor_lists_in_memory",
		Help: "Whether queries read the anchor posting lists from memory (index.anchors_in_memory, once loaded): 1, or 0 while they load or when they are read from disk.",
	}, func() float64 {
		if eng.Store.AnchorsInMemory() {
			return 1
		}
		return 0
	})
	if err := d.reg.Register(anchors); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	defer d.reg.Unregister(anchors)

	nc, err := connectNATS(natsURL, natsAuth, log)
	if err != nil {
		return err
	}
	defer nc.Close()
	outbox, err := notifiersqlite.Open(ctx, cfg.OutboxPath())
	if err != nil {
		return fmt.Errorf("open notifier outbox %s: %w", cfg.OutboxPath(), err)
	}
	defer outbox.Close()
	ntf, err := notifier.New(notifier.Options{Config: cfg.Notifier, Outbox: outbox, Publisher: nc, Logger: d.logger})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	d.notifier.Store(ntf)
	sources, buckets, err := buildSources(&cfg, nc, d.reg, d.logger)
	if err != nil {
		return err
	}
	d.buckets = buckets
	pst, err := policysqlite.Open(ctx, cfg.PolicyPath())
	if err != nil {
		return fmt.Errorf("open policy store %s: %w", cfg.PolicyPath(), err)
	}
	defer pst.Close()
	pol, err := policy.New(policy.Options{
		Config: cfg.Policy, Store: pst, Index: policy.IndexOf(eng.Index), Publisher: ntf, Logger: d.logger,
		Enforcer: &policy.S3Enforcer{Client: func(source, bucketName string) (*s3conn.Client, bool) {
			for _, b := range buckets {
				if b.source == source && b.cfg.Bucket == bucketName {
					return b.client, true
				}
			}
			return nil, false
		}},
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	// Configured rules and holds are in force before the first event.
	if err := pol.Sync(ctx); err != nil {
		return fmt.Errorf("start policy: %w", err)
	}
	d.policy.Store(pol)
	polSched, err := policy.NewScheduler(pol, cfg.Policy.Schedules)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	tokens, tokenStores, err := openTokens(ctx, &cfg, pst)
	if err != nil {
		return err
	}
	defer tokenStores.Close()
	if cfg.HTTP.InitialAdminToken {
		if err := bootstrapToken(ctx, &cfg, tokens, log); err != nil {
			return err
		}
	}
	certs, err := cfg.HTTP.TLS.certMap()
	if err != nil {
		return fmt.Errorf("%w: http.tls.client_certs: %w", ErrConfig, err)
	}
	tlsCfg, err := cfg.HTTP.TLS.serverTLS()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("listen on http.addr %s: %w", cfg.HTTP.Addr, err)
	}
	d.addr.Store(ln.Addr())
	if tlsCfg == nil || len(cfg.HTTP.TLS.ClientCerts) == 0 {
		certs = nil
	}
	a, err := api.New(api.Deps{Index: eng.Index, Extractor: eng.Extractor, Thresholds: cfg.IndexOptions().Thresholds,
		MaxBody: cfg.Extract.MaxObjectSize, MaxSearches: cfg.HTTP.Searches(), Registry: d.reg, Logger: d.logger.With("component", "http"),
		Backfill: d.Backfill, Outbox: ntf, Policy: pol, Ingester: eng.Ingester, Authn: tokens, Certs: certs, Tokens: tokens, Records: pst, UI: d.ui,
		DeadLetters: func(ctx context.Context, limit int) ([]api.DeadLetter, error) { return listDeadLetters(ctx, nc, limit) },
		Ready: func() error {
			if !d.ready.Load() {
				return errors.New("starting")
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	defer a.Unregister()
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsCfg}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan connectors.Event, 4*cfg.Pipeline.Workers)
	p := &pipeline{
		ing: eng.Ingester, led: eng.Store, rm: eng.Index, workers: cfg.Pipeline.Workers,
		budget: semaphore.NewWeighted(cfg.Pipeline.InFlightBytes), capacity: cfg.Pipeline.InFlightBytes, unknown: max(1, cfg.Pipeline.InFlightBytes/int64(cfg.Pipeline.Workers)),
		shutdown: cfg.Pipeline.ShutdownTimeout, logger: d.logger.With("component", "pipeline"),
		m: newPipelineMetrics(d.reg), obs: []Observer{pol}, holds: pol, marker: eng.Store,
		progress: newProgressLog(d.logger.With("component", "pipeline"), time.Now),
	}
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}
	srcCtx, stopSources := context.WithCancel(runCtx)
	defer stopSources()
	var srcWG sync.WaitGroup
	d.events = events
	sched := cron.New(cron.WithParser(cronParser), cron.WithLogger(cronLogger{log}))
	for _, b := range buckets {
		if b.cfg.Backfill {
			srcWG.Add(1)
			go func() {
				defer srcWG.Done()
				if err := backfillOnce(srcCtx, nc, b, events, log); err != nil && srcCtx.Err() == nil {
					log.Error("backfill failed; run `simdex backfill` once the cause is fixed", "connector", b.source, "err", err)
				}
			}()
		}
		if b.cfg.Reconcile != "" {
			if _, err := sched.AddFunc(b.cfg.Reconcile, func() { d.reconcile(srcCtx, b, eng.Store) }); err != nil {
				return fmt.Errorf("%w: connectors.s3 %s reconcile: %w", ErrConfig, b.cfg.Name, err)
			}
		}
	}
	sched.Start()
	defer func() { <-sched.Stop().Done() }()
	for _, s := range sources {
		srcWG.Add(1)
		go func() {
			defer srcWG.Done()
			if err := s.src.Run(srcCtx, events); err != nil && !errors.Is(err, context.Canceled) {
				fail(fmt.Errorf("connector %s: %w", s.name, err))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.run(runCtx, events)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		polSched.Run(runCtx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.purgeEvery(runCtx, cfg.Pipeline.PurgeInterval)
	}()
	// The dispatcher stops with the rest; deliveries it has not sent stay
	// in the outbox for the next start.
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := ntf.Run(runCtx); err != nil {
			fail(fmt.Errorf("notifier: %w", err))
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		serve := func() error { return srv.Serve(ln) }
		if tlsCfg != nil {
			serve = func() error { return srv.ServeTLS(ln, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("serve http: %w", err))
		}
	}()
	d.ready.Store(true)
	log.Info("simdex is serving", "http", ln.Addr().String(), "sources", len(sources), "index", cfg.IndexPath())

	<-runCtx.Done()
	d.ready.Store(false)
	log.Info("shutting down")
	stopSources()
	srcWG.Wait()
	shutCtx, shutCancel := context.WithTimeout(context.Background(), cfg.Pipeline.ShutdownTimeout)
	defer shutCancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	wg.Wait()
	for _, s := range sources {
		if c, ok := s.src.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				log.Warn("close connector", "connector", s.name, "err", err)
			}
		}
	}
	log.Info("stopped")
	return firstErr
}

// reconcile compares one bucket with the index and queues what was missed.
// Runs are serialised: a slow run is not overlapped by the next.
func (d *Daemon) reconcile(ctx context.Context, b *bucket, st index.Reader) {
	d.reconMu.Lock()
	defer d.reconMu.Unlock()
	log := d.logger.With("component", "reconcile", "connector", b.source)
	start := time.Now()
	counts, err := b.client.Reconcile(ctx, inventory{st}, d.events)
	if err != nil {
		log.Error("reconciliation failed", "err", err, "elapsed", time.Since(start))
		return
	}
	log.Info("reconciliation done", "counts", fmt.Sprintf("%+v", counts), "elapsed", time.Since(start))
}

// Backfill queues every object version of the named S3 connector (or all
// when name is empty). It is `simdex backfill` over the API.
func (d *Daemon) Backfill(ctx context.Context, name string) error {
	if d.events == nil {
		return errors.New("daemon not running")
	}
	found := false
	for _, b := range d.buckets {
		if name != "" && b.cfg.Name != name && b.source != name {
			continue
		}
		found = true
		if _, err := b.client.Backfill(ctx, d.events); err != nil {
			return fmt.Errorf("backfill %s: %w", b.source, err)
		}
	}
	if !found {
		return fmt.Errorf("%w: no S3 connector named %q", api.ErrNotFound, name)
	}
	return nil
}

// cronLogger routes robfig/cron's logs to slog.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug(msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error(msg, append(kv, "err", err)...)
}

// Config returns the daemon's configuration.
func (d *Daemon) Config() Config { return d.cfg }
