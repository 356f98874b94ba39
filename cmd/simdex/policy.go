package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// policyClient is a daemon client that names the acting person.
type policyClient struct {
	*daemonClient
	actor string
}

// remoteFlags are the flags of every command that talks to the daemon.
type remoteFlags struct {
	addr  string
	actor string
}

func (f *remoteFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.addr, "addr", "", "daemon address (default: http.addr)")
	cmd.PersistentFlags().StringVar(&f.actor, "actor", "", "who acts, for the audit log (default: the login name)")
}

func (f *remoteFlags) client(g *globals) (*policyClient, error) {
	c, err := g.daemonClient(f.addr)
	if err != nil {
		return nil, err
	}
	return &policyClient{daemonClient: c, actor: cmp.Or(f.actor, localActor())}, nil
}

func (c *policyClient) call(ctx context.Context, method, path string, body, out any) error {
	if err := c.doWith(ctx, method, path, body, out, map[string]string{api.HeaderActor: c.actor}); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newHoldCmd(g *globals) *cobra.Command {
	rf := &remoteFlags{}
	cmd := &cobra.Command{
		Use:   "hold",
		Short: "Create, list and release legal holds (matters) on a running daemon",
	}
	rf.register(cmd)

	var (
		name, reason, owner, mode string
		seeds, seedKeys           []string
		seedIDs                   []int64
		resemblance, containment  float64
		asJSON                    bool
	)
	create := &cobra.Command{
		Use:   "create --matter NAME --seed PATH|ID [--seed ...]",
		Short: "Place a legal hold on seed documents and every near-copy of them",
		Long: `hold create places a legal hold for a matter. Seeds are stored document
ids, index keys (--seed-key) or files (--seed PATH: the file is sent to the
daemon and indexed as a seed). A --seed that is a number and also names a
file is refused as ambiguous: --seed ./35 for the file, --seed-id 35 for
the document. Every stored near-copy of a seed (within
--resemblance / --containment) is held and flagged "found for matter", and
so is every near-copy ingested later. In mode hold the S3 Object Lock legal
hold is turned on for every version of every near-copy.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			matter, _ := cmd.Flags().GetString("matter")
			req := api.HoldRequest{Matter: matter, Name: name, Reason: reason, Owner: owner, SeedKeys: seedKeys, Mode: mode}
			if cmd.Flags().Changed("resemblance") {
				req.Resemblance = &resemblance
			}
			if cmd.Flags().Changed("containment") {
				req.Containment = &containment
			}
			if err := addSeeds(&req, seeds, seedIDs); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			var out api.HoldResponse
			if err := c.call(cmd.Context(), "POST", "/api/v1/holds", req, &out); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), out)
			}
			p := out.Placement
			if out.Hold.Status == policy.HoldPlacing {
				fmt.Fprintf(cmd.OutOrStdout(), "hold %s stored and in force (%s), still placing in the background (%s held so far): %s\n",
					out.Hold.Matter, out.Hold.Mode, plural(out.Hold.Held, "document"), out.Error)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hold %s placed (%s): %s, %s held, %s, %s\n",
				out.Hold.Matter, out.Hold.Mode, plural(len(out.Hold.Seeds), "seed"), plural(out.Hold.Held, "document"),
				plural(p.Flagged, "new flag"), enforced(p))
			for _, e := range p.EnforceErrors {
				fmt.Fprintf(cmd.ErrOrStderr(), "not locked yet (retried by the next sweep): %s\n", e)
			}
			return nil
		},
	}
	create.Flags().String("matter", "", "matter id (unique, permanent)")
	_ = create.MarkFlagRequired("matter")
	create.Flags().StringVar(&name, "name", "", "matter name")
	create.Flags().StringVar(&reason, "reason", "", "why the hold is placed")
	create.Flags().StringVar(&owner, "owner", "", "who owns the matter")
	create.Flags().StringArrayVar(&seeds, "seed", nil, "seed: a file, or a stored document id (repeatable)")
	create.Flags().Int64SliceVar(&seedIDs, "seed-id", nil, "seed: a stored document id, where --seed ID would also name a file (repeatable)")
	create.Flags().StringArrayVar(&seedKeys, "seed-key", nil, "seed: an index key, every current version (repeatable)")
	create.Flags().Float64Var(&resemblance, "resemblance", policy.DefaultScope().Resemblance, "near-copy scope: resemblance")
	create.Flags().Float64Var(&containment, "containment", policy.DefaultScope().Containment, "near-copy scope: containment in either direction")
	create.Flags().StringVar(&mode, "mode", "", "hold (S3 legal holds and flags, the default) or report (flags only)")
	create.Flags().BoolVar(&asJSON, "json", false, "print the hold and its placement as JSON")

	var status string
	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List holds",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			var out struct {
				Holds []policy.Hold `json:"holds"`
			}
			if err := c.call(cmd.Context(), "GET", "/api/v1/holds?status="+url.QueryEscape(status), nil, &out); err != nil {
				return err
			}
			if listJSON {
				return printJSON(cmd.OutOrStdout(), out.Holds)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "MATTER\tSTATUS\tMODE\tSEEDS\tHELD\tCREATED\tNAME")
			for _, h := range out.Holds {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", h.Matter, h.Status, h.Mode, len(h.Seeds), h.Held, h.Created.Format(time.RFC3339), h.Name)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&status, "status", "", "active or released (default: all)")
	list.Flags().BoolVar(&listJSON, "json", false, "print a JSON array")

	var releaseReason string
	release := &cobra.Command{
		Use:   "release --matter NAME --reason TEXT",
		Short: "Release a hold (nothing it covered is deleted before the grace period and a fresh evaluation)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			matter, _ := cmd.Flags().GetString("matter")
			if strings.TrimSpace(releaseReason) == "" {
				return &exitError{code: 2, err: errors.New("--reason is required: releasing a hold is audited with its reason")}
			}
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			var h policy.Hold
			if err := c.call(cmd.Context(), "POST", "/api/v1/holds/"+url.PathEscape(matter)+"/release", map[string]string{"reason": releaseReason}, &h); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hold %s released by %s at %s\n", h.Matter, h.ReleasedBy, h.Released.Format(time.RFC3339))
			return nil
		},
	}
	release.Flags().String("matter", "", "matter id")
	_ = release.MarkFlagRequired("matter")
	release.Flags().StringVar(&releaseReason, "reason", "", "why the hold is released (required)")

	cmd.AddCommand(create, list, release)
	return cmd
}

// addSeeds adds a hold's seeds to req: each --seed a file, or a document
// id when it is a number that names no file (a number that names one is
// refused as ambiguous, as similar refuses it), and each --seed-id.
func addSeeds(req *api.HoldRequest, seeds []string, ids []int64) error {
	for _, id := range ids {
		if id < 1 {
			return fmt.Errorf("--seed-id %d: document ids are positive", id)
		}
		req.Seeds = append(req.Seeds, index.DocID(id))
	}
	for _, s := range seeds {
		id, convErr := strconv.ParseInt(s, 10, 64)
		_, statErr := os.Stat(s)
		switch {
		case convErr == nil && statErr == nil:
			return fmt.Errorf("--seed %s is both a file here and a document id: say --seed ./%s for the file, or --seed-id %s for the document", s, s, s)
		case convErr == nil && id > 0:
			req.Seeds = append(req.Seeds, index.DocID(id))
			continue
		}
		data, err := os.ReadFile(s)
		if err != nil {
			return fmt.Errorf("--seed %s: not a document id and not a readable file: %w", s, err)
		}
		req.SeedFiles = append(req.SeedFiles, api.SeedFile{Name: filepath.Base(s), Data: data})
	}
	return nil
}

// enforced says what a placement locked at the origins, and how many
// documents are on sources that cannot lock (a watched folder).
func enforced(p policy.Placement) string {
	locked := plural(p.Enforced, "S3 version") + " locked"
	unlockable := plural(p.Unlockable, "document") + " on sources that cannot lock (flagged hold-unenforced)"
	switch {
	case p.Unlockable == 0:
		return locked
	case p.Enforced == 0:
		return unlockable
	}
	return locked + ", " + unlockable
}

func newFlagsCmd(g *globals) *cobra.Command {
	rf := &remoteFlags{}
	cmd := &cobra.Command{
		Use:   "flags",
		Short: "List and settle review flags (disposition due, hold matches, duplicate uploads)",
	}
	rf.register(cmd)
	var (
		kind, status, matter, rule string
		document, after            int64
		limit                      int
		asJSON                     bool
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List flags",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := api.CheckFlagFilter(policy.FlagKind(kind), policy.FlagStatus(status)); err != nil {
				return &usageError{cmd: cmd, err: fmt.Errorf("--%w; leave the flag out to list them all", err)}
			}
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			q := url.Values{}
			for k, v := range map[string]string{"kind": kind, "status": status, "matter": matter, "rule": rule} {
				if v != "" {
					q.Set(k, v)
				}
			}
			for k, n := range map[string]int64{"document": document, "after": after} {
				if n > 0 {
					q.Set(k, strconv.FormatInt(n, 10))
				}
			}
			q.Set("limit", strconv.Itoa(limit))
			var out struct {
				Flags []policy.FlagView `json:"flags"`
			}
			if err := c.call(cmd.Context(), "GET", "/api/v1/flags?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), out.Flags)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tDOCUMENT\tNAME\tMATTER/RULE\tRESEMBLANCE\tREFUSED BECAUSE")
			for _, f := range out.Flags {
				why := cmp.Or(f.Matter, f.Rule)
				res, refused := "-", "-"
				if f.Evidence.Scores != nil {
					res = strconv.FormatFloat(f.Evidence.Scores.Resemblance, 'f', 3, 64)
				}
				if f.Status == policy.StatusRefused {
					refused = f.Reason
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", f.ID, f.Kind, f.Status, f.Document, f.Name, why, res, refused)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&kind, "kind", "", "disposition-due, hold-match, duplicate-upload, hold-unenforced or hold-source-changed (default: all)")
	list.Flags().StringVar(&status, "status", "", "open, approved, executing, executed, refused or dismissed (default: all)")
	list.Flags().StringVar(&matter, "matter", "", "only flags of this matter")
	list.Flags().StringVar(&rule, "rule", "", "only flags of this retention rule")
	list.Flags().Int64Var(&document, "document", 0, "only flags of this document id")
	list.Flags().Int64Var(&after, "after", 0, "page: flags after this id")
	list.Flags().IntVar(&limit, "limit", 1000, "most flags listed")
	list.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.AddCommand(list)

	for _, action := range []struct{ name, short string }{
		{"approve", "Approve a flag: a disposition-due flag agrees to its deletion (execute then carries it out); a hold-match flag confirms the document belongs to the hold; a duplicate-upload flag confirms the duplicate"},
		{"dismiss", "Dismiss a flag, with a reason"},
		{"execute", "Carry out an approved deletion (disposition-due flags only): holds are checked again and only that object version is deleted"},
	} {
		var reason string
		c := &cobra.Command{
			Use:   action.name + " ID",
			Short: action.short,
			Args:  oneArg("ID"),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := strconv.ParseInt(args[0], 10, 64)
				if err != nil || id < 1 {
					return &exitError{code: 2, err: fmt.Errorf("flag id %q: not a number", args[0])}
				}
				pc, err := rf.client(g)
				if err != nil {
					return err
				}
				var body any
				if action.name != "execute" {
					body = map[string]string{"reason": reason}
				}
				var f policy.FlagView
				if err := pc.call(cmd.Context(), "POST", fmt.Sprintf("/api/v1/flags/%d/%s", id, action.name), body, &f); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "flag %d (%s, %s): %s\n", f.ID, f.Kind, f.Name, f.Status)
				return nil
			},
		}
		if action.name != "execute" {
			// Required, and said so in the help: the server refuses a
			// review without a reason, and the user learnt it only then.
			c.Use = action.name + " ID --reason TEXT"
			c.Flags().StringVar(&reason, "reason", "", "why (recorded in the audit log; required)")
			_ = c.MarkFlagRequired("reason")
		}
		cmd.AddCommand(c)
	}
	return cmd
}

func newPolicyCmd(g *globals) *cobra.Command {
	rf := &remoteFlags{}
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Evaluate retention rules on a running daemon",
	}
	rf.register(cmd)
	var dry, asJSON bool
	eval := &cobra.Command{
		Use:   "eval [--dry-run]",
		Short: "Evaluate retention now: what is (or would be) flagged, held or kept, and why",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			var run policy.Run
			if err := c.call(cmd.Context(), "POST", "/api/v1/policy/evaluate?dry_run="+strconv.FormatBool(dry), nil, &run); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), run)
			}
			return printRun(cmd.OutOrStdout(), run)
		},
	}
	eval.Flags().BoolVar(&dry, "dry-run", false, "decide and explain without writing flags")
	eval.Flags().BoolVar(&asJSON, "json", false, "print the run with its decisions as JSON")
	cmd.AddCommand(eval)
	return cmd
}

// printRun prints an evaluation: its counts, which add up to its
// decisions (flag = new + flagged before; held or kept), then each
// decision. The FLAG column says which flag decisions raise a new flag
// and names the flag an earlier run raised for the others.
func printRun(w io.Writer, run policy.Run) error {
	verb := "flagged"
	if run.DryRun {
		verb = "would flag"
	}
	fmt.Fprintf(w, "%s evaluated: %d due for disposition (%s %d new, %d flagged before), %d held or kept\n",
		plural(run.Documents, "document"), run.Due, verb, run.Flagged, run.Due-run.Flagged, run.Held)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OUTCOME\tFLAG\tDOCUMENT\tNAME\tRULE\tREASON")
	for _, d := range run.Decisions {
		flag := "-"
		switch {
		case d.Outcome == policy.OutcomeFlag && d.Flag != 0:
			flag = "#" + strconv.FormatInt(d.Flag, 10)
		case d.Outcome == policy.OutcomeFlag:
			flag = "new"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", d.Outcome, flag, d.Document.ID, d.Document.Name, d.Rule, d.Reason)
	}
	return tw.Flush()
}

func newAuditCmd(g *globals) *cobra.Command {
	rf := &remoteFlags{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check the tamper-evident audit log",
	}
	rf.register(cmd)
	var checkpoint string
	verify := &cobra.Command{
		Use:   "verify [--checkpoint FILE]",
		Short: "Verify the audit log's hash chain; exit 0 only when it is intact",
		Long: `audit verify checks that every entry of the audit log commits to the one
before it. Against a checkpoint saved by an earlier run (--checkpoint FILE,
kept outside the daemon's data), it also detects deletion of entries and
truncation. When the log is intact the checkpoint file is advanced to the
new head. The exit status is 0 only when the log is intact.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := rf.client(g)
			if err != nil {
				return err
			}
			var cp policy.Checkpoint
			if checkpoint != "" {
				b, err := os.ReadFile(checkpoint)
				switch {
				case errors.Is(err, os.ErrNotExist):
				case err != nil:
					return &exitError{code: 2, err: fmt.Errorf("read checkpoint: %w", err)}
				default:
					if err := json.Unmarshal(b, &cp); err != nil {
						return &exitError{code: 2, err: fmt.Errorf("checkpoint %s: %w", checkpoint, err)}
					}
				}
			}
			var out api.AuditVerifyResponse
			err = c.doWith(cmd.Context(), "POST", "/api/v1/audit/verify", cp, &out, map[string]string{api.HeaderActor: c.actor})
			if err != nil && out.Error == "" {
				return &exitError{code: 2, err: err}
			}
			if !out.Intact {
				return &exitError{code: 1, err: fmt.Errorf("audit log NOT intact: %s", out.Error)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "audit log intact: %d entries, head %s\n", out.Checkpoint.Seq, out.Checkpoint.Hash)
			if checkpoint != "" {
				b, _ := json.Marshal(out.Checkpoint)
				if err := os.WriteFile(checkpoint, append(b, '\n'), 0o600); err != nil {
					return &exitError{code: 2, err: fmt.Errorf("save checkpoint: %w", err)}
				}
			}
			return nil
		},
	}
	verify.Flags().StringVar(&checkpoint, "checkpoint", "", "checkpoint file: verified against, then advanced")
	cmd.AddCommand(verify)
	return cmd
}
