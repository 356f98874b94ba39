package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/internal/buildinfo"
)

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and format versions",
		Long: `version prints which simdex this is: its version and commit, the Go that
built it, and the versions of what it writes (normal form, fingerprint
scheme, index schema). The daemon's /api/v1/about and the review UI's
footer show the same.`,
		Args: cobra.NoArgs,
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
