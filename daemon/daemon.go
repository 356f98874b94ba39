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
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/index"
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
	p, err := d.open(ctx) // data directory, NATS, index, notifier, connectors, policy, HTTP
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
		member{"serve http", p.serveHTTP},
	)
	err = runGroup(ctx, members, func() {
		d.ready.Store(true)
		p.log.Info("simdex is serving", "http", p.addr.String(), "sources", len(p.sources), "index", d.cfg.IndexPath())
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
	for _, a := range members {
		g.Go(func() error {
			if err := a.run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%s: %w", a.name, err)
			}
			return nil
		})
	}
	started()
	<-ctx.Done()
	stopping()
	return g.Wait()
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
		return fmt.Errorf("%w: no S3 connector named %q", ErrNotFound, name)
	}
	return nil
}

// ErrNotFound reports an unknown connector or document.
var ErrNotFound = errors.New("not found")

// policyObserver fits policy's observer hooks, which still take the event,
// to the pipeline's, which hand ids only.
type policyObserver struct{ e *policy.Engine }

func (o policyObserver) Indexed(ctx context.Context, ids []index.DocID) error {
	return o.e.Indexed(ctx, connectors.Event{}, ids)
}
func (o policyObserver) Removed(ctx context.Context, ids []index.DocID) {
	o.e.Removed(ctx, connectors.Event{}, ids)
}
