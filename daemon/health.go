package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/simdex/simdex/api"
)

// healthChecks are what /readyz checks: the daemon has started, NATS
// answers a round trip and has refused it no permission lately
// (natsDeniedWindow), the index and policy stores answer a query, each
// listen-mode bucket's subscription is not known to have stalled (nor
// unable to be probed), and the fleet's PostgreSQL answers a ping.
func (d *Daemon) healthChecks(p *parts) []api.Check {
	checks := []api.Check{
		{Name: "started", Run: func(context.Context) error {
			if !d.ready.Load() {
				return errors.New("starting")
			}
			return nil
		}},
		{Name: "nats", Run: func(ctx context.Context) error {
			if !p.nc.IsConnected() {
				return fmt.Errorf("connection %s", p.nc.Status())
			}
			return p.nc.FlushWithContext(ctx)
		}},
		{Name: "nats permissions", Run: p.natsErrs.check},
		{Name: "index", Run: func(ctx context.Context) error {
			_, err := p.eng.Store.Seen(ctx, "simdex:readyz")
			return err
		}},
		{Name: "policy", Run: func(ctx context.Context) error {
			_, err := p.records.HoldsVersion(ctx)
			return err
		}},
	}
	for _, b := range p.buckets {
		if b.cfg.Mode == "listen" {
			checks = append(checks, api.Check{Name: "listen " + b.source, Run: func(context.Context) error {
				return b.client.ListenHealth()
			}})
		}
	}
	if p.pool != nil {
		checks = append(checks, api.Check{Name: "postgres", Run: p.pool.Ping})
	}
	return checks
}
