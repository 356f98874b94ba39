package main

import (
	"github.com/spf13/cobra"

	"github.com/simdex/simdex/daemon"
)

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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load()
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
