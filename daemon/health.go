package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/simdex/simdex/api"
)

// healthChecks are what /readyz checks: the daemon has started, NATS
// answers a round trip, and the index and policy stores answer a query.
func (d *Daemon) healthChecks(p *parts) []api.Check {
	return []api.Check{
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
		{Name: "index", Run: func(ctx context.Context) error {
			_, err := p.eng.Store.Seen(ctx, "simdex:readyz")
			return err
		}},
		{Name: "policy", Run: func(ctx context.Context) error {
			_, err := p.records.HoldsVersion(ctx)
			return err
		}},
	}
}
