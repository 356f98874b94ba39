// Command simdex finds every copy and near-copy of a document, so that
// retention and legal holds follow the content: `simdex serve` runs the
// daemon, `simdex scan` and `simdex similar` query an index directly.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/daemon"
)

// exitError carries a process exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// globals are the persistent flags every command shares.
type globals struct {
	configPath string
	logLevel   string
	token      string
}

func (g *globals) load() (daemon.Config, error) {
	cfg, err := daemon.LoadFromEnvironment(g.configPath)
	if err != nil {
		return cfg, &exitError{code: 2, err: err}
	}
	if g.logLevel != "" {
		cfg.Log.Level = g.logLevel
	}
	return cfg, nil
}

func (g *globals) logger(cfg daemon.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "simdex",
		Short:         "Find every copy and near-copy of a document",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.configPath, "config", "", "configuration file (YAML); SIMDEX_* environment variables override it")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&g.token, "token", "", "API token for commands that call the daemon (default: $SIMDEX_TOKEN, else the daemon's initial admin token file when readable)")
	root.AddCommand(newServeCmd(g), newScanCmd(g), newSimilarCmd(g), newBackfillCmd(g), newDeadLettersCmd(g),
		newHoldCmd(g), newFlagsCmd(g), newPolicyCmd(g), newAuditCmd(g), newExportCmd(g), newTokenCmd(g))
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "simdex:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(2)
	}
}
