package main

import (
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/api"
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
		Args: oneArg("CONNECTOR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.daemonClient(addr)
			if err != nil {
				return err
			}
			if err := c.doWith(cmd.Context(), "POST", "/api/v1/connectors/"+url.PathEscape(args[0])+"/backfill", nil, nil, nil); err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backfill of %s queued\n", args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "daemon address (default: http.addr)")
	return cmd
}

func newDeadLettersCmd(g *globals) *cobra.Command {
	var (
		addr   string
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "deadletters",
		Short: "List events that exhausted their deliveries",
		Long: `deadletters lists, oldest first, the events the running daemon gave up
on after max_deliver attempts (malformed event JSON, objects over the size
cap, references to missing objects...), with the reason. They stay in the
DEADLETTER stream for review; nothing is dropped silently.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var out struct {
				DeadLetters []api.DeadLetter `json:"deadletters"`
			}
			c, err := g.daemonClient(addr)
			if err != nil {
				return err
			}
			if err := c.doWith(cmd.Context(), "GET", "/api/v1/deadletters?limit="+strconv.Itoa(limit), nil, &out, nil); err != nil {
				return &exitError{code: 1, err: err}
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return printJSON(w, out.DeadLetters)
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tSOURCE\tSUBJECT\tSEQ\tDELIVERED\tERROR")
			for _, d := range out.DeadLetters {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", d.Time.Format(time.RFC3339), d.Source, d.Subject, d.Sequence, d.Delivered, d.Error)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "daemon address (default: http.addr)")
	cmd.Flags().IntVar(&limit, "limit", 100, "most records shown (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}
