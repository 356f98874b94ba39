package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/export"
)

func newExportCmd(g *globals) *cobra.Command {
	var addr, format, matter string
	cmd := &cobra.Command{
		Use:   "export --format csv|jsonl|dat [--matter NAME]",
		Short: "Write a load file of documents with near-duplicate fields to standard output",
		Long: `export writes every document of the running daemon's index (or, with
--matter, the documents a legal matter holds) with its e-discovery fields:
family id, pivot, similarity to the pivot, is-pivot, exact-duplicate group,
parent and attachment path, hashes and e-mail headers. Formats: csv, jsonl,
and dat (a Concordance load file: þ-quoted fields separated by U+0014).
The exit status is 1 when the export was cut short.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := export.ParseFormat(format); err != nil {
				return &exitError{code: 2, err: err}
			}
			c, err := g.daemonClient(addr)
			if err != nil {
				return err
			}
			q := url.Values{"format": {format}}
			if matter != "" {
				q.Set("matter", matter)
			}
			req, err := http.NewRequestWithContext(cmd.Context(), "GET", c.base+"/api/v1/export?"+q.Encode(), nil)
			if err != nil {
				return err
			}
			resp, err := c.hc.Do(req)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("call the daemon at %s (is `simdex serve` running?): %w", c.base, err)}
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				return &exitError{code: 1, err: answerError("GET", "/api/v1/export", resp.Status, data)}
			}
			if _, err := io.Copy(cmd.OutOrStdout(), resp.Body); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("export cut short: %w", err)}
			}
			if msg := resp.Trailer.Get(api.TrailerExportError); msg != "" {
				return &exitError{code: 1, err: fmt.Errorf("export cut short: %s", msg)}
			}
			if resp.Trailer.Get(api.TrailerExportRows) == "" {
				return &exitError{code: 1, err: fmt.Errorf("export cut short: the daemon did not confirm the end of the stream")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "daemon address (default: http.addr)")
	cmd.Flags().StringVar(&format, "format", "csv", "csv, jsonl or dat")
	cmd.Flags().StringVar(&matter, "matter", "", "only the documents this matter holds")
	return cmd
}
