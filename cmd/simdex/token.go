package main

import (
	"errors"
	"fmt"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/daemon"
)

// localActor names the person running the CLI for the audit log.
func localActor() string {
	if u, err := user.Current(); err == nil {
		return "cli:" + u.Username
	}
	return "cli"
}

// checkTokenRequest refuses, before any store is opened, a token without
// a person or a viewer or reviewer token without a matter; the Manager
// checks the rest (the matter names, the e-mail address).
func checkTokenRequest(r auth.Role, name string, matters []string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("--name: %w: a token needs the name of the person it is for", auth.ErrInvalidPerson)
	}
	if len(matters) == 0 && !r.AtLeast(auth.RoleLegalAdmin) {
		return fmt.Errorf("--matter: role %s: %w", r, auth.ErrMatterRequired)
	}
	return nil
}

// tokenExitCode is 2 for a request the Manager refused as given (bad
// usage), 1 for anything else.
func tokenExitCode(err error) int {
	for _, bad := range []error{auth.ErrInvalidPerson, auth.ErrInvalidMatter, auth.ErrInvalidText, auth.ErrMatterRequired, auth.ErrUnknownRole} {
		if errors.Is(err, bad) {
			return 2
		}
	}
	return 1
}

func newTokenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke API tokens",
		Long: `Create, list and revoke the API tokens of the daemon configured by --config.

These commands open the token store (http.tokens_path, default
data_dir/auth.db) directly, whether or not the daemon is running: whoever
can write the daemon's data directory administers its tokens. Every
creation and revocation is recorded in the audit log.`,
	}
	var (
		role, description string
		name, email       string
		matters           []string
		ttl               time.Duration
	)
	create := &cobra.Command{
		Use:   "create --name PERSON --role ROLE [--matter NAME]...",
		Short: "Create a token and print it (shown once)",
		Long: `Create a token for a person and print it on standard output; it is
shown only once. Every action taken with the token is recorded under the
person's name (--name), with the token's id beside it.

Roles, from least to most privileged: viewer (documents and near-copies),
reviewer (also flags and matters: approve, dismiss), legal-admin (also
holds, dry runs, audit, exports, executing approved deletions) and admin
(also tokens, backfills, deliveries). A viewer or reviewer token must
name the matters it may see (it is refused without one); a legal-admin or
admin token with no --matter sees every matter.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := auth.ParseRole(role)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if err := checkTokenRequest(r, name, matters); err != nil {
				return &exitError{code: 2, err: err}
			}
			if ttl < 0 {
				return &exitError{code: 2, err: fmt.Errorf("--ttl %v: must not be negative", ttl)}
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			secret, t, err := daemon.CreateToken(cmd.Context(), cfg, localActor(), auth.CreateRequest{
				Role: r, Matters: matters, Name: name, Email: email, Description: description, TTL: ttl})
			if err != nil {
				return &exitError{code: tokenExitCode(err), err: err}
			}
			fmt.Fprintln(cmd.OutOrStdout(), secret)
			scope := "every matter"
			if len(t.Matters) > 0 {
				scope = "matters " + strings.Join(t.Matters, ", ")
			} else if !r.AtLeast(auth.RoleLegalAdmin) {
				scope = "no matter"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "created token %s for %s: role %s, %s\n", t.ID, t.Name, t.Role, scope)
			return nil
		},
	}
	create.Flags().StringVar(&role, "role", "", "viewer, reviewer, legal-admin or admin (required)")
	create.Flags().StringArrayVar(&matters, "matter", nil, "a matter the token may see (repeatable)")
	create.Flags().StringVar(&name, "name", "", "the person the token is for, as actions are recorded (required)")
	create.Flags().StringVar(&email, "email", "", "the person's e-mail address")
	create.Flags().StringVar(&description, "description", "", "what the token is for")
	create.Flags().DurationVar(&ttl, "ttl", 0, "expire the token after this long (e.g. 720h); 0 never expires")
	_ = create.MarkFlagRequired("role")
	_ = create.MarkFlagRequired("name")

	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List tokens (never their secrets)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.load()
			if err != nil {
				return err
			}
			ts, err := daemon.ListTokens(cmd.Context(), cfg)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			views := make([]api.TokenView, 0, len(ts))
			for _, t := range ts {
				views = append(views, api.NewTokenView(t))
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), views)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tROLE\tMATTERS\tCREATED\tSTATE\tDESCRIPTION")
			now := time.Now()
			for _, t := range ts {
				state := "active"
				switch {
				case !t.Revoked.IsZero():
					state = "revoked"
				case !t.Active(now):
					state = "expired"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.DisplayName(), t.Role, strings.Join(t.Matters, ","),
					t.Created.Format(time.DateTime), state, t.Description)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var reason string
	revoke := &cobra.Command{
		Use:   "revoke ID --reason TEXT",
		Short: "Revoke a token at once",
		Args:  oneArg("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return &exitError{code: 2, err: fmt.Errorf("--reason is required: the audit log records why")}
			}
			cfg, err := g.load()
			if err != nil {
				return err
			}
			if err := daemon.RevokeToken(cmd.Context(), cfg, localActor(), args[0], reason); err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "revoked token %s\n", args[0])
			return nil
		},
	}
	revoke.Flags().StringVar(&reason, "reason", "", "why (required)")
	cmd.AddCommand(create, list, revoke)
	return cmd
}
