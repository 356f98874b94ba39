package main

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
)

func newBackfillCmd(g *globals) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "backfill CONNECTOR",
		Short: "Queue every object version of an S3 connector for indexing",
		Long: `backfill asks the running daemon to list every object version of the
named S3 connector (connectors.s3[].name) and queue it. Versions already
indexed are recognised by their idempotency key and skipped, so running it
again is safe.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.daemonClient(addr)
			if err != nil {
				return err
			}
			if err := c.do(cmd.Context(), "POST", "/api/v1/connectors/"+url.PathEscape(args[0])+"/backfill", nil, nil); err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backfill of %s queued\n", args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "daemon address (default: http.addr)")
	return cmd
}
