package api

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// DefaultHealthTimeout bounds each readiness check when Deps.HealthTimeout
// is zero: well under a Kubernetes probe's default timeout.
const DefaultHealthTimeout = 2 * time.Second

// Check is one named readiness check of GET /readyz.
type Check struct {
	// Name names the component in the answer: "index", "nats".
	Name string
	// Run returns nil when the component answers. It is called once per
	// request, concurrently with the other checks, and must return
	// promptly when ctx is done.
	Run func(ctx context.Context) error
}

// errCheckTimeout reports a check that did not return within its timeout.
var errCheckTimeout = errors.New("no answer within the timeout")

// readyz answers 200 when every check of Deps.Health passes, and 503 with
// the names of those that fail otherwise. The answer is public, so it
// names the checks only; their errors go to the log.
func (a *Server) readyz(w http.ResponseWriter, r *http.Request) {
	failing := a.failingChecks(r.Context())
	if len(failing) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "failing": failing})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready"})
}

// failingChecks runs every check at once, each within the health timeout,
// and returns the names of those that failed, in the order of Deps.Health.
func (a *Server) failingChecks(ctx context.Context) []string {
	timeout := a.HealthTimeout
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	errs := make([]chan error, len(a.Health))
	for i, c := range a.Health {
		errs[i] = make(chan error, 1)
		go func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] <- c.Run(cctx)
		}()
	}
	deadline := time.NewTimer(timeout + timeout/10)
	defer deadline.Stop()
	failing := []string{}
	for i, c := range a.Health {
		var err error
		select {
		case err = <-errs[i]:
		case <-deadline.C: // a check that ignores its context
			err = errCheckTimeout
		}
		if err != nil {
			failing = append(failing, c.Name)
			if a.Logger != nil {
				a.Logger.Warn("readiness check failing; answering 503", "check", c.Name, "err", err)
			}
		}
	}
	return failing
}
