// Command simdex finds every copy and near-copy of a document, so that
// retention and legal holds follow the content: `simdex serve` runs the
// daemon, `simdex scan` and `simdex similar` query an index directly.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/internal/buildinfo"
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
	cpuProfile string
	// stopProfile ends the CPU profile, when one was started.
	stopProfile func()
}

// load reads the configuration of a command that does not serve: the
// credentials of connectors, NATS and notifier channels, which only serve
// uses, need not be set (daemon.LoadWithoutSecrets).
func (g *globals) load() (daemon.Config, error) { return g.loadWith(daemon.LoadWithoutSecrets) }

// loadServing reads the configuration serve runs, every secret checked.
func (g *globals) loadServing() (daemon.Config, error) { return g.loadWith(daemon.Load) }

func (g *globals) loadWith(load func(path string, environ []string) (daemon.Config, error)) (daemon.Config, error) {
	cfg, err := load(g.configPath, os.Environ())
	if err != nil {
		return cfg, &exitError{code: 2, err: err}
	}
	cfg.Log.Level = cmp.Or(g.logLevel, cfg.Log.Level)
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

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{Use: "simdex", Short: "Find every copy and near-copy of a document", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().StringVar(&g.configPath, "config", "", "configuration file (YAML); SIMDEX_* environment variables override it")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&g.token, "token", "", "API token for commands that call the daemon (default: $SIMDEX_TOKEN, else the daemon's initial admin token file when readable)")
	root.PersistentFlags().StringVar(&g.cpuProfile, "cpu-profile", "", "write a CPU profile of the command to this file (for performance reports)")
	_ = root.PersistentFlags().MarkHidden("cpu-profile")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if g.cpuProfile == "" {
			return nil
		}
		f, err := os.Create(g.cpuProfile)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("create CPU profile: %w", err)}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return &exitError{code: 2, err: fmt.Errorf("start CPU profile: %w", err)}
		}
		g.stopProfile = func() {
			pprof.StopCPUProfile()
			f.Close()
		}
		return nil
	}
	root.AddCommand(newServeCmd(g), newScanCmd(g), newSimilarCmd(g), newBackfillCmd(g), newDeadLettersCmd(g),
		newHoldCmd(g), newFlagsCmd(g), newPolicyCmd(g), newAuditCmd(g), newDisposalsCmd(g), newExportCmd(g), newTokenCmd(g), newVersionCmd(), newStatsCmd(g))
	markUsageErrors(root)
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	g := &globals{}
	cmd, err := newRoot(g).ExecuteContextC(ctx)
	err = asUsageError(cmd, err)
	if g.stopProfile != nil {
		g.stopProfile() // whatever the outcome: a failed scan is worth profiling too
	}
	stop()
	if err != nil {
		printError(os.Stderr, err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(2)
	}
}

func newServeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: connectors, ingest pipeline, index and HTTP endpoints",
		Long: `serve runs simdex until SIGINT or SIGTERM. With no external services
configured it runs the embedded default: an in-process NATS server with
JetStream storing under data_dir, the embedded index, a watched inbox folder
(data_dir/inbox) and the HTTP endpoints on 127.0.0.1:8080
(/healthz, /readyz, /metrics, /api/v1).

On a stop signal, connectors stop first, events under way are finished and
acknowledged (within pipeline.shutdown_timeout), and the index is closed;
anything not acknowledged is delivered again after restart.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadServing()
			if err != nil {
				return err
			}
			d, err := daemon.New(cfg, g.logger(cfg))
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			return d.Run(cmd.Context())
		},
	}
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and format versions",
		Long: `version prints which simdex this is: its version and commit, the Go that
built it, and the versions of what it writes (normal form, fingerprint
scheme, index schema). The daemon's /api/v1/about and the review UI's
footer show the same.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := buildinfo.Read()
			if asJSON {
				return printJSON(cmd.OutOrStdout(), in)
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), in)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
