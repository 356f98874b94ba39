package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/index/sqlite"
)

func newStatsCmd(g *globals) *cobra.Command {
	var (
		path   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "stats --index PATH",
		Short: "Show where an index's space goes, table by table",
		Long: `stats measures an index without changing it: its size on disk against the
input it describes (the raw size of the objects indexed), and each table
with its indexes, in bytes, as a share of the index and per document.
Run it on a copy or while nothing writes, for exact figures.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path == "" {
				return &usageError{cmd: cmd, err: fmt.Errorf("--index is required")}
			}
			if err := indexExists(path); err != nil {
				return err
			}
			fp, err := sqlite.ReadFootprint(cmd.Context(), path)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), fp)
			}
			writeFootprint(cmd.OutOrStdout(), fp)
			return nil
		},
	}
	cmd.Flags().StringVar(&path, "index", "", "index file (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	_ = cmd.MarkFlagRequired("index")
	return cmd
}

func writeFootprint(w io.Writer, fp sqlite.Footprint) {
	share := func(n, of int64) string {
		if of == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
	}
	perDoc := func(n int64) string {
		if fp.Documents == 0 {
			return "-"
		}
		return fmt.Sprintf("%d", n/fp.Documents)
	}
	fmt.Fprintf(w, "%s: %s on disk for %s of input (%s), %d objects, %d documents, %d distinct texts\n\n",
		fp.Path, bytesHuman(fp.FileBytes), bytesHuman(fp.InputBytes), share(fp.FileBytes, fp.InputBytes), fp.Objects, fp.Documents, fp.Contents)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\tbytes\tof which indexes\tshare\tper document\t")
	for _, t := range fp.Tables {
		n := t.Bytes + t.IndexBytes
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t\n", t.Table, n, t.IndexBytes, share(n, fp.PageBytes), perDoc(n))
	}
	fmt.Fprintf(tw, "pages in use\t%d\t\t%s\t%s\t\n", fp.PageBytes, share(fp.PageBytes, fp.PageBytes), perDoc(fp.PageBytes))
	tw.Flush()
}

// bytesHuman formats n bytes in the largest binary unit below it.
func bytesHuman(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
