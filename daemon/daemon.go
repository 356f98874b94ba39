// Package daemon wires simdex together: configuration, the connectors, the
// ingest pipeline, the index, policy and notifier, the HTTP endpoints, and
// their lifecycle (start, signals, graceful shutdown). It is the only
// package that imports all the others.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/connectors"
	s3conn "github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/datadir"
	"github.com/simdex/simdex/internal/dirlock"
	"github.com/simdex/simdex/internal/lease"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/policy"
	"github.com/simdex/simdex/webui"
)

// Daemon is `simdex serve`: connectors feeding the ingest pipeline, the
// index, and the HTTP endpoints.
type Daemon struct {
	cfg      Config
	logger   *slog.Logger
	reg      *prometheus.Registry
	natsAuth []nats.Option         // credentials for an external NATS server
	tls      *tls.Config           // nil: plain HTTP
	certs    *auth.CertMap         // client certificates' identities, nil: none
	ui       http.Handler          // the review UI at / and /ui/
	reconMu  sync.Mutex            // reconciliation runs one at a time
	ready    atomic.Bool           // every part has started
	parts    atomic.Pointer[parts] // what Run opened, nil before
	pgOpts   []pgdb.Option         // how Run connects to PostgreSQL (tests trace it)
}

// New validates cfg, reads the credentials and certificates it names and
// returns a daemon; it opens no store and starts nothing.
func New(cfg Config, logger *slog.Logger) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, logger: logger, reg: prometheus.NewRegistry(), ui: webui.Handler()}
	var err error
	if d.natsAuth, err = cfg.NATS.clientOptions(os.Getenv, os.ReadFile); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if d.certs, err = cfg.HTTP.TLS.certMap(); err != nil {
		return nil, fmt.Errorf("%w: http.tls.client_certs: %w", ErrConfig, err)
	}
	if d.tls, err = cfg.HTTP.TLS.serverTLS(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if d.tls == nil || len(cfg.HTTP.TLS.ClientCerts) == 0 {
		d.certs = nil
	}
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return d, nil
}

// Run opens the stores and runs every part until ctx is done, a stop
// signal arrives or a part fails. Then the parts stop together: connectors
// stop, the pipeline finishes the events under way, HTTP drains (both
// within pipeline.shutdown_timeout), the notifier leaves what it has not
// sent in its outbox; the connectors, stores, index and embedded NATS
// close last, in reverse order of opening.
func (d *Daemon) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := d.open(ctx) // data directory, NATS, index, notifier, connectors, policy, pipeline, HTTP
	if err != nil {
		return err
	}
	defer p.close()
	d.parts.Store(p)
	members := append(d.connectorMembers(p), // sources, first-start backfills, reconciliations
		member{"pipeline", func(ctx context.Context) error { p.pipeline.Run(ctx, p.events); return nil }},
		member{"purge", func(ctx context.Context) error { p.pipeline.PurgeEvery(ctx, d.cfg.Pipeline.PurgeInterval); return nil }},
		member{"policy schedules", p.schedules.Run},
		member{"notifier", p.notifier.Run},
		member{"serve http", func(ctx context.Context) error { return d.serveHTTP(ctx, p) }},
	)
	err = runGroup(ctx, members, func() {
		d.ready.Store(true)
		p.log.Info("simdex is serving", append([]any{"http", p.addr.String(), "sources", len(p.sources)}, d.cfg.storeAttrs()...)...)
	}, func() {
		d.ready.Store(false)
		p.log.Info("shutting down")
	})
	p.log.Info("stopped")
	return err
}

// member is one long-running part of the daemon: run blocks until ctx is
// done or the part fails.
type member struct {
	name string
	run  func(ctx context.Context) error
}

// runGroup runs every member until ctx is done or one fails, then cancels
// the others and waits for them; it returns the first failure, named by
// its member. started is called once all are running, stopping once they
// are told to stop.
func runGroup(ctx context.Context, members []member, started, stopping func()) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, m := range members {
		g.Go(func() error {
			if err := m.run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			return nil
		})
	}
	started()
	<-ctx.Done()
	stopping()
	return g.Wait()
}

// parts are what Run opens, step by step; close releases them in reverse.
type parts struct {
	log       *slog.Logger
	lease     singletons // the singletons' lease
	undo      []func()
	natsURL   string
	nc        *nats.Conn
	natsErrs  *natsErrors // the connection's asynchronous errors
	eng       *Engine
	notifier  *notifier.Notifier
	sources   []namedSource
	buckets   []*bucket
	events    chan connectors.Event
	records   policyStore
	pool      *pgxpool.Pool    // the fleet's database; nil with the sqlite driver
	keys      ingest.KeyLocker // object-key locks across replicas; nil: the pipeline's own
	policy    *policy.Engine
	schedules *policy.Scheduler
	pipeline  *ingest.Pipeline
	memory    *extract.Budget // shared by the pipeline and the API's uploads
	ln        net.Listener
	addr      net.Addr
	srv       *http.Server
}

// open opens and builds every part in order; on failure it closes what it
// had opened.
func (d *Daemon) open(ctx context.Context) (*parts, error) {
	p := &parts{log: d.logger.With("component", "daemon"), lease: lease.NewLocal(), events: make(chan connectors.Event, 4*d.cfg.Pipeline.Workers)}
	for _, step := range []func(context.Context, *parts) error{
		d.lockDataDir, d.openNATS, d.openDatabase, d.openEngine, d.openNotifier, d.openBuckets, d.openConnectors, d.openPolicy, d.buildPipeline, d.openHTTP,
	} {
		if err := step(ctx, p); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// onClose adds f to what close runs.
func (p *parts) onClose(f func()) { p.undo = append(p.undo, f) }

// close releases the parts in reverse order of opening.
func (p *parts) close() {
	for i := len(p.undo) - 1; i >= 0; i-- {
		p.undo[i]()
	}
}

// lockDataDir makes the data directory and locks it: before anything opens
// a store, so that a second daemon in the same directory touches neither
// the embedded JetStream store nor the index.
func (d *Daemon) lockDataDir(_ context.Context, p *parts) error {
	dir := d.cfg.DataDir
	if err := datadir.Make(dir); err != nil {
		return fmt.Errorf("create data directory %s: %w", dir, err)
	}
	if w, err := datadir.Check(dir); err != nil {
		return err
	} else if w != "" {
		p.log.Warn("data directory open to other local users; starting anyway", "dir", dir, "warning", w)
	}
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		return err
	}
	p.onClose(func() { lock.Release() })
	return nil
}

// openNATS starts the embedded NATS server unless one is configured, and
// connects to it, its asynchronous errors going to the log, a metric and
// /readyz (natsErrors).
func (d *Daemon) openNATS(_ context.Context, p *parts) error {
	errs, err := newNATSErrors(d.reg, p.log)
	if err != nil {
		return err
	}
	p.natsErrs = errs
	url, auth := d.cfg.NATS.URL, d.natsAuth
	if url == "" {
		password, err := embeddedNATSPassword(d.cfg.NATSPasswordPath())
		if err != nil {
			return err
		}
		auth = []nats.Option{nats.UserInfo(EmbeddedNATSUser, password)}
		ns, err := startEmbeddedNATS(d.cfg.DataDir, password, d.logger)
		if err != nil {
			return err
		}
		p.onClose(func() { ns.Shutdown(); ns.WaitForShutdown() })
		url = ns.ClientURL()
		p.log.Info("embedded NATS with JetStream started", "url", url, "store", filepath.Join(d.cfg.DataDir, "nats"))
	}
	nc, err := connectNATS(url, auth, p.log, errs.handle)
	if err != nil {
		return err
	}
	p.onClose(nc.Close)
	p.natsURL, p.nc = url, nc
	return nil
}

// Engine is the index with its store and the ingest stage.
type Engine = ingest.Engine[indexStore]

// indexStore is the index store the daemon and its commands open: the
// index's, with the ledger the pipeline keeps of documents deleted at
// source while held.
type indexStore interface {
	ingest.Store
	ingest.Ledger
}

// OpenEngine opens the index store cfg names, the index over it and the
// extraction cfg configures, for a command that reads the index without
// the daemon. With the postgres driver it connects a pool of its own,
// closed with the engine.
func OpenEngine(ctx context.Context, cfg *Config, logger *slog.Logger) (*Engine, error) {
	var pool *pgxpool.Pool
	if cfg.postgres() {
		var err error
		if pool, err = connectPostgres(ctx, cfg, 4); err != nil {
			return nil, err
		}
	}
	st, where, err := openIndexStore(ctx, cfg, logger, pool)
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		return nil, err
	}
	if pool != nil {
		st = pooledStore{indexStore: st, pool: pool}
	}
	return openEngineOver(ctx, cfg, logger, st, where)
}

// openEngineOver opens the index over st, the store at where.
func openEngineOver(ctx context.Context, cfg *Config, logger *slog.Logger, st indexStore, where string) (*Engine, error) {
	opts := cfg.Index.Options
	opts.Logger = logger
	xo := cfg.Extract
	xo.SpoolDir = cfg.SpoolDir()
	return ingest.OpenEngine(ctx, st, where, opts, xo)
}

// openEngine opens the index with its store and extraction.
func (d *Daemon) openEngine(ctx context.Context, p *parts) error {
	st, where, err := openIndexStore(ctx, &d.cfg, d.logger, p.pool)
	if err != nil {
		return err
	}
	if err := d.registerAnchorGauge(p, st); err != nil {
		st.Close()
		return err
	}
	eng, err := openEngineOver(ctx, &d.cfg, d.logger, st, where)
	if err != nil {
		return err
	}
	p.eng = eng
	p.onClose(func() { eng.Close() })
	return nil
}

// openNotifier opens the outbox and the notifier sending from it.
func (d *Daemon) openNotifier(ctx context.Context, p *parts) error {
	outbox, closeOutbox, err := d.openOutbox(ctx, p)
	if err != nil {
		return err
	}
	p.onClose(func() { closeOutbox() })
	if p.notifier, err = notifier.New(notifier.Options{Config: d.cfg.Notifier, Outbox: outbox, Publisher: p.nc, Lease: p.lease, Logger: d.logger}); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// openPolicy opens the policy store and puts the configured rules and holds
// in force, before the first event.
func (d *Daemon) openPolicy(ctx context.Context, p *parts) error {
	pst, err := openPolicyStore(ctx, &d.cfg, p.pool)
	if err != nil {
		return err
	}
	p.onClose(func() { pst.Close() })
	p.records = pst
	p.policy, err = policy.New(policy.Options{
		Config: d.cfg.Policy, Store: pst, Index: policy.IndexOf(p.eng.Index), Publisher: p.notifier, Logger: d.logger, Lease: p.lease, Registerer: d.reg,
		Enforcer: d.enforcer(p),
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	// Replicas starting together place the configured holds one at a time.
	if err := p.lease.Hold(ctx, "policy/sync", p.policy.Sync); err != nil {
		return fmt.Errorf("start policy: %w", err)
	}
	if p.schedules, err = policy.NewScheduler(p.policy, d.cfg.Policy.Schedules, p.lease); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// enforcer is the policy's Enforcer: S3 Object Lock through the S3
// connectors, the files of the watched folders, and the index for the
// documents only simdex holds.
func (d *Daemon) enforcer(p *parts) policy.Enforcer {
	roots := map[string]string{}
	for _, dir := range d.cfg.WatchedDirs() {
		roots["fs:"+dir] = dir // the source name the connector is given
	}
	lookup := func(ctx context.Context, key string) ([]*index.Record, error) {
		return p.eng.Index.Store().Lookup(ctx, key)
	}
	return &originEnforcer{
		s3: &s3Enforcer{Client: func(source, bucketName string) (*s3conn.Client, bool) {
			for _, b := range p.buckets {
				if b.source == source && b.cfg.Bucket == bucketName {
					return b.client, true
				}
			}
			return nil, false
		}},
		fs:     &fsEnforcer{Roots: roots, Lookup: lookup},
		purger: &indexPurger{Remove: p.eng.Index.Remove},
		Lookup: lookup,
	}
}

// buildPipeline builds the pipeline from the connectors' events to the
// index, the legal holds and the policy's checks.
func (d *Daemon) buildPipeline(_ context.Context, p *parts) error {
	cfg := d.cfg.Pipeline
	p.memory = extract.NewBudget(d.cfg.Memory.Resolve(MachineMemory(os.ReadFile)))
	p.log.Info("memory budget", "bytes", p.memory.Total())
	p.pipeline = ingest.NewPipeline(ingest.PipelineOptions{
		Ingester: p.eng.Ingester, Ledger: p.eng.Store, Remover: p.eng.Index, Holds: p.policy,
		Observers: []ingest.Observer{p.policy}, Workers: cfg.Workers, Memory: p.memory,
		ShutdownTimeout: cfg.ShutdownTimeout, Keys: p.keys, Registerer: d.reg, Logger: d.logger.With("component", "pipeline"),
	})
	return nil
}

// openHTTP opens the token stores and binds the HTTP listener.
func (d *Daemon) openHTTP(ctx context.Context, p *parts) error {
	cfg := &d.cfg
	tokens, closeTokens, err := openTokens(ctx, cfg, p.pool, p.records)
	if err != nil {
		return err
	}
	p.onClose(func() { closeTokens() })
	if cfg.HTTP.InitialAdminToken {
		if err := bootstrapToken(ctx, cfg, tokens, p.log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("listen on http.addr %s: %w", cfg.HTTP.Addr, err)
	}
	p.onClose(func() { ln.Close() })
	p.ln, p.addr = ln, ln.Addr()
	a, err := api.New(api.Deps{Index: p.eng.Index, Extractor: p.eng.Extractor, Thresholds: cfg.Index.Thresholds,
		MaxBody: cfg.Extract.MaxObjectSize, Memory: p.memory, MaxSearches: cfg.HTTP.Searches(), Registry: d.reg, Logger: d.logger.With("component", "http"),
		Backfill: d.Backfill, Outbox: p.notifier, Policy: leasedEvaluation{p.policy, p.schedules}, Ingester: p.eng.Ingester, Authn: tokens, Certs: d.certs,
		Tokens: tokens, Records: p.records, UI: d.ui,
		Reread: ingest.NewRereader(p.eng.Extractor, p.eng.Index, p.origins()),
		DeadLetters: func(ctx context.Context, limit int) ([]api.DeadLetter, error) {
			return listDeadLetters(ctx, p.nc, limit)
		},
		Health: d.healthChecks(p),
	})
	if err != nil {
		return err
	}
	p.onClose(a.Unregister)
	p.srv = &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: d.tls}
	return nil
}

// serveHTTP serves until ctx is done, then shuts the server down: requests
// under way may finish within pipeline.shutdown_timeout.
func (d *Daemon) serveHTTP(ctx context.Context, p *parts) error {
	served := make(chan error, 1)
	go func() {
		if p.srv.TLSConfig != nil {
			served <- p.srv.ServeTLS(p.ln, "", "")
		} else {
			served <- p.srv.Serve(p.ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), d.cfg.Pipeline.ShutdownTimeout)
	defer cancel()
	if err := p.srv.Shutdown(shutCtx); err != nil {
		p.log.Warn("http shutdown", "err", err)
	}
	<-served
	return nil
}

// running returns what Run opened, or an empty set before.
func (d *Daemon) running() *parts {
	if p := d.parts.Load(); p != nil {
		return p
	}
	return &parts{}
}

// Addr returns the HTTP listener's address once Run has bound it, or nil.
func (d *Daemon) Addr() net.Addr { return d.running().addr }

// NATSURL returns the NATS URL in use once Run has connected, or "".
func (d *Daemon) NATSURL() string { return d.running().natsURL }

// Policy returns the policy engine once Run has started it, or nil.
func (d *Daemon) Policy() *policy.Engine { return d.running().policy }

// Notifier returns the notifier once Run has started it, or nil.
func (d *Daemon) Notifier() *notifier.Notifier { return d.running().notifier }

// Registry returns the daemon's metrics registry.
func (d *Daemon) Registry() *prometheus.Registry { return d.reg }

// Config returns the daemon's configuration.
func (d *Daemon) Config() Config { return d.cfg }

// Backfill queues every object version of the named S3 connector (or all
// when name is empty). It is `simdex backfill` over the API.
func (d *Daemon) Backfill(ctx context.Context, name string) error {
	p := d.parts.Load()
	if p == nil {
		return errors.New("daemon not running")
	}
	found := false
	for _, b := range p.buckets {
		if name != "" && b.cfg.Name != name && b.source != name {
			continue
		}
		found = true
		if _, err := b.client.Backfill(ctx, p.events); err != nil {
			return fmt.Errorf("backfill %s: %w", b.source, err)
		}
	}
	if !found {
		return fmt.Errorf("%w: no S3 connector named %q", api.ErrNotFound, name)
	}
	return nil
}

// leasedEvaluation is the policy engine the API sees: an evaluation asked
// for through it runs under the scheduled evaluations' lease, so that two
// replicas (or a person and the schedule) never evaluate at once.
type leasedEvaluation struct {
	*policy.Engine
	sched *policy.Scheduler
}

// Evaluate runs the evaluation through the scheduler's lease.
func (l leasedEvaluation) Evaluate(ctx context.Context, dryRun bool) (policy.Run, error) {
	return l.sched.EvaluateNow(ctx, dryRun)
}
