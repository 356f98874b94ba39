package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/connectors"
	s3conn "github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/ingest"
	"github.com/simdex/simdex/internal/datadir"
	"github.com/simdex/simdex/internal/dirlock"
	"github.com/simdex/simdex/notifier"
	notifiersqlite "github.com/simdex/simdex/notifier/sqlite"
	"github.com/simdex/simdex/policy"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// parts are what Run opens, step by step; close releases them in reverse.
type parts struct {
	log       *slog.Logger
	undo      []func()
	natsURL   string
	nc        *nats.Conn
	eng       *Engine
	notifier  *notifier.Notifier
	sources   []namedSource
	buckets   []*bucket
	events    chan connectors.Event
	records   *policysqlite.Store
	policy    *policy.Engine
	schedules *policy.Scheduler
	pipeline  *ingest.Pipeline
	ln        net.Listener
	addr      net.Addr
	srv       *http.Server
	shutdown  time.Duration // how long HTTP requests under way may take after stop
}

// open opens and builds every part in order; on failure it closes what it
// had opened.
func (d *Daemon) open(ctx context.Context) (*parts, error) {
	p := &parts{log: d.logger.With("component", "daemon"), events: make(chan connectors.Event, 4*d.cfg.Pipeline.Workers),
		shutdown: d.cfg.Pipeline.ShutdownTimeout}
	for _, step := range []func(context.Context, *parts) error{
		d.lockDataDir, d.openNATS, d.openEngine, d.openNotifier, d.openConnectors, d.openPolicy, d.buildPipeline, d.openHTTP,
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
// connects to it.
func (d *Daemon) openNATS(_ context.Context, p *parts) error {
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
		p.onClose(ns.Shutdown)
		url = ns.URL()
		p.log.Info("embedded NATS with JetStream started", "url", url, "store", filepath.Join(d.cfg.DataDir, "nats"))
	}
	nc, err := connectNATS(url, auth, p.log)
	if err != nil {
		return err
	}
	p.onClose(nc.Close)
	p.natsURL, p.nc = url, nc
	return nil
}

// openEngine opens the index with its store and extraction.
func (d *Daemon) openEngine(ctx context.Context, p *parts) error {
	eng, err := OpenEngine(ctx, &d.cfg, "", d.logger)
	if err != nil {
		return err
	}
	p.onClose(func() { eng.Close() })
	p.eng = eng
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
	p.onClose(func() { d.reg.Unregister(anchors) })
	return nil
}

// openNotifier opens the outbox and the notifier sending from it.
func (d *Daemon) openNotifier(ctx context.Context, p *parts) error {
	outbox, err := notifiersqlite.Open(ctx, d.cfg.OutboxPath())
	if err != nil {
		return fmt.Errorf("open notifier outbox %s: %w", d.cfg.OutboxPath(), err)
	}
	p.onClose(func() { outbox.Close() })
	p.notifier, err = notifier.New(notifier.Options{Config: d.cfg.Notifier, Outbox: outbox, Publisher: p.nc, Logger: d.logger})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// openPolicy opens the policy store and puts the configured rules and holds
// in force, before the first event.
func (d *Daemon) openPolicy(ctx context.Context, p *parts) error {
	pst, err := policysqlite.Open(ctx, d.cfg.PolicyPath())
	if err != nil {
		return fmt.Errorf("open policy store %s: %w", d.cfg.PolicyPath(), err)
	}
	p.onClose(func() { pst.Close() })
	p.records = pst
	p.policy, err = policy.New(policy.Options{
		Config: d.cfg.Policy, Store: pst, Index: policy.IndexOf(p.eng.Index), Publisher: p.notifier, Logger: d.logger,
		Enforcer: &policy.S3Enforcer{Client: func(source, bucketName string) (*s3conn.Client, bool) {
			for _, b := range p.buckets {
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
	if err := p.policy.Sync(ctx); err != nil {
		return fmt.Errorf("start policy: %w", err)
	}
	if p.schedules, err = policy.NewScheduler(p.policy, d.cfg.Policy.Schedules); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// buildPipeline builds the pipeline from the connectors' events to the
// index, the legal holds and the policy's checks.
func (d *Daemon) buildPipeline(_ context.Context, p *parts) error {
	cfg := d.cfg.Pipeline
	p.pipeline = ingest.NewPipeline(ingest.PipelineOptions{
		Ingester: p.eng.Ingester, Ledger: p.eng.Store, Remover: p.eng.Index, Holds: p.policy, Marker: p.eng.Store,
		Observers: []ingest.Observer{policyObserver{p.policy}}, Workers: cfg.Workers, InFlightBytes: cfg.InFlightBytes,
		ShutdownTimeout: cfg.ShutdownTimeout, Progress: true, Registerer: d.reg, Logger: d.logger.With("component", "pipeline"),
	})
	return nil
}

// openHTTP opens the token stores and binds the HTTP listener.
func (d *Daemon) openHTTP(ctx context.Context, p *parts) error {
	cfg := &d.cfg
	tokens, tokenStores, err := openTokens(ctx, cfg, p.records)
	if err != nil {
		return err
	}
	p.onClose(func() { tokenStores.Close() })
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
	searches, err := newSearchGate(cfg.HTTP.Searches(), d.reg)
	if err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	p.onClose(func() { searches.unregister(d.reg) })
	a := &api{
		ix: p.eng.Index, ex: p.eng.Extractor, th: cfg.IndexOptions().Thresholds, gather: d.reg,
		maxBody: cfg.Extract.MaxObjectSize, logger: d.logger.With("component", "http"),
		backfill: d.Backfill,
		outbox:   p.notifier,
		policy:   p.policy,
		ingester: p.eng.Ingester,
		authn:    tokens,
		tokens:   tokens,
		records:  p.records,
		ui:       d.ui,
		searches: searches,
		certs:    d.certs,
		deadLetters: func(ctx context.Context, limit int) ([]DeadLetter, error) {
			return listDeadLetters(ctx, p.nc, limit)
		},
		ready: func() error {
			if !d.ready.Load() {
				return errors.New("starting")
			}
			return nil
		},
	}
	p.srv = &http.Server{Handler: a.handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: d.tls}
	return nil
}

// serveHTTP serves until ctx is done, then shuts the server down: requests
// under way may finish within the shutdown timeout.
func (p *parts) serveHTTP(ctx context.Context) error {
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
	shutCtx, cancel := context.WithTimeout(context.Background(), p.shutdown)
	defer cancel()
	if err := p.srv.Shutdown(shutCtx); err != nil {
		p.log.Warn("http shutdown", "err", err)
	}
	<-served
	return nil
}
