package main

import (
	"encoding/csv"
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/policy"
)

// disposalColumns are the columns of `simdex disposals --format csv`.
var disposalColumns = []string{"seq", "time", "actor", "flag", "rule", "approver", "approved_at",
	"source", "bucket", "key", "version", "document", "name", "sha256", "size"}

func newDisposalsCmd(g *globals) *cobra.Command {
	rf := &remoteFlags{}
	var rule, since, format string
	cmd := &cobra.Command{
		Use:   "disposals [--rule R] [--since T] [--format text|csv|json]",
		Short: "List executed deletions with their proof, from the audit log",
		Long: `disposals lists every deletion an approved disposition flag carried out,
oldest first, as the audit log proves it: what was deleted (source,
bucket, key, version, document, the SHA-256 and size of its bytes), under
which rule and approval (flag, approver, approved at), when and by whom.
--since takes an RFC 3339 time or a date (2026-01-31).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := url.Values{}
			if rule != "" {
				q.Set("rule", rule)
			}
			if since != "" {
				t, err := parseSince(since)
				if err != nil {
					return &usageError{cmd: cmd, err: err}
				}
				q.Set("since", t.Format(time.RFC3339))
			}
			if format != "text" && format != "csv" && format != "json" {
				return &usageError{cmd: cmd, err: fmt.Errorf("--format %q: want text, csv or json", format)}
			}
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			var out struct {
				Disposals []policy.Disposal `json:"disposals"`
			}
			if err := c.call(cmd.Context(), "GET", "/api/v1/disposals?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			switch format {
			case "json":
				return printJSON(cmd.OutOrStdout(), out.Disposals)
			case "csv":
				return disposalsCSV(cmd, out.Disposals)
			}
			return disposalsText(cmd, out.Disposals)
		},
	}
	rf.register(cmd)
	cmd.Flags().StringVar(&rule, "rule", "", "only deletions under this retention rule")
	cmd.Flags().StringVar(&since, "since", "", "only deletions from this time on (RFC 3339, or a date)")
	cmd.Flags().StringVar(&format, "format", "text", "text, csv or json")
	return cmd
}

// parseSince reads an RFC 3339 time or a date.
func parseSince(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time or a date (2026-01-31)", v)
	}
	return t, nil
}

func disposalsCSV(cmd *cobra.Command, ds []policy.Disposal) error {
	w := csv.NewWriter(cmd.OutOrStdout())
	if err := w.Write(disposalColumns); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, d := range ds {
		o := d.Object
		row := []string{strconv.FormatInt(d.Seq, 10), d.Time.Format(time.RFC3339Nano), d.Actor, strconv.FormatInt(d.Flag, 10), d.Rule,
			d.Approver, d.Approved.Format(time.RFC3339Nano), o.Source, o.Bucket, o.Key, o.VersionID,
			strconv.FormatInt(int64(d.Document.ID), 10), d.Document.Name, d.SHA256, strconv.FormatInt(d.Size, 10)}
		if err := w.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

func disposalsText(cmd *cobra.Command, ds []policy.Disposal) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tBY\tFLAG\tRULE\tAPPROVED BY\tOBJECT\tSHA-256\tSIZE")
	for _, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\n", d.Time.Format(time.RFC3339), d.Actor, d.Flag, d.Rule, d.Approver, d.Object, d.SHA256, d.Size)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
