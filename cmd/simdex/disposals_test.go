package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/policy"
)

// TestDisposalsOnTheWatchedFolderThroughTheCLI runs the quick start's
// setup (the embedded default's watched inbox): a hold on a file says it
// locks nothing and flags it; of three approved deletions, the file still
// as indexed is deleted and listed by `simdex disposals --format csv`
// with its SHA-256, the edited file and the held one read refused with
// why in `flags list`. Before, every execution failed "502 … is not an S3
// object" and the flags stayed approved.
func TestDisposalsOnTheWatchedFolderThroughTheCLI(t *testing.T) {
	d := startServe(t, func(c *daemon.Config) {
		c.Policy.Retention = []policy.RetentionRule{{Name: "old-30d", Selector: policy.Selector{Prefix: "old/"},
			Period: "30d", Action: policy.ActionDelete}}
	})
	addr := d.Addr().String()
	inbox := filepath.Join(d.Config().DataDir, "inbox")
	names := []string{"Apache-2.0.txt", "GPL-3.0-only.txt", "MPL-2.0.txt"}
	for _, n := range names {
		drop(t, inbox, "old/"+n, readCorpus(t, n), 90*24*time.Hour)
	}
	waitUntil(t, "three documents indexed", func() bool {
		var st struct{ Documents int }
		resp, err := http.Get("http://" + addr + "/api/v1/stats")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&st)
		return st.Documents == len(names)
	})
	cli := func(want int, args ...string) string {
		t.Helper()
		out, code, err := run(t, append(args, "--addr", addr)...)
		if code != want {
			t.Fatalf("simdex %s: exit %d, want %d: %v\n%s", strings.Join(args, " "), code, want, err, out)
		}
		return out
	}
	cli(0, "policy", "eval")
	due := map[string]policy.FlagView{}
	for _, f := range flagsOf(t, addr, "--kind", "disposition-due") {
		due[strings.TrimPrefix(f.Name, "old/")] = f
		cli(0, "flags", "approve", fmt.Sprint(f.ID), "--reason", "past retention")
	}
	if len(due) != 3 {
		t.Fatalf("disposition flags: %+v", due)
	}
	held := due["MPL-2.0.txt"]
	if out := cli(0, "hold", "create", "--matter", "M-40", "--seed-id", fmt.Sprint(held.Document)); !strings.Contains(out, "1 document on sources that cannot lock (flagged hold-unenforced)") {
		t.Errorf("hold create: %s; want it to say the document is on a source that cannot lock", out)
	}
	if fs := flagsOf(t, addr, "--kind", "hold-unenforced"); len(fs) != 1 || fs[0].Document != held.Document {
		t.Errorf("hold-unenforced flags: %+v", fs)
	}
	edited := filepath.Join(inbox, "old", "GPL-3.0-only.txt")
	if err := os.WriteFile(edited, append(readCorpus(t, "GPL-3.0-only.txt"), " Amended."...), 0o600); err != nil {
		t.Fatal(err)
	}

	cli(0, "flags", "execute", fmt.Sprint(due["Apache-2.0.txt"].ID))
	cli(1, "flags", "execute", fmt.Sprint(due["GPL-3.0-only.txt"].ID))
	cli(1, "flags", "execute", fmt.Sprint(held.ID))
	if _, err := os.Stat(filepath.Join(inbox, "old", "Apache-2.0.txt")); !os.IsNotExist(err) {
		t.Errorf("the deleted file: %v", err)
	}
	table := cli(0, "flags", "list", "--status", "refused")
	for _, want := range []string{"REFUSED BECAUSE", "held for matter M-40", "stale: "} {
		if !strings.Contains(table, want) {
			t.Errorf("flags list --status refused lacks %q:\n%s", want, table)
		}
	}
	if n := len(flagsOf(t, addr, "--status", "approved")); n != 0 {
		t.Errorf("%d flags still approved", n)
	}

	rows, err := csv.NewReader(strings.NewReader(cli(0, "disposals", "--format", "csv"))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("disposals csv: %v %v", rows, err)
	}
	row := map[string]string{}
	for i, c := range rows[0] {
		row[c] = rows[1][i]
	}
	sum := sha256.Sum256(readCorpus(t, "Apache-2.0.txt"))
	if row["key"] != "old/Apache-2.0.txt" || row["rule"] != "old-30d" || row["sha256"] != hex.EncodeToString(sum[:]) ||
		row["flag"] != fmt.Sprint(due["Apache-2.0.txt"].ID) || row["approver"] == "" || row["approved_at"] == "" {
		t.Errorf("disposal row %v", row)
	}
	if rows, _ := csv.NewReader(strings.NewReader(cli(0, "disposals", "--format", "csv", "--rule", "other"))).ReadAll(); len(rows) != 1 {
		t.Errorf("disposals of another rule: %v", rows)
	}
	cli(2, "disposals", "--since", "yesterday")
}
