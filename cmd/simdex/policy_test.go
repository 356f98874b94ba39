package main

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	_ "modernc.org/sqlite"

	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/internal/daemontest"
	"github.com/simdex/simdex/policy"
)

// startServe runs `simdex serve`'s daemon in-process on its embedded
// default (embedded NATS, embedded index, watched inbox) with cfg changed
// by edit, and returns it once ready.
func startServe(t *testing.T, edit func(*daemon.Config)) *daemon.Daemon {
	t.Helper()
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Connectors.FS.Interval = 100 * time.Millisecond
	cfg.Connectors.FS.Settle = 100 * time.Millisecond
	cfg.Connectors.NATS = nil
	edit(&cfg)
	d := daemontest.Start(t, cfg, nil)
	// The CLI and the test's own calls use the daemon's initial admin token.
	tok, err := daemon.ReadTokenFile(cfg.InitialAdminTokenPath())
	if err != nil {
		t.Fatalf("initial admin token: %v", err)
	}
	t.Setenv("SIMDEX_TOKEN", tok)
	return d
}

// envBearer signs the tests' plain http.Get calls with $SIMDEX_TOKEN, as the
// CLI does.
type envBearer struct{ base http.RoundTripper }

func (b envBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if tok := os.Getenv("SIMDEX_TOKEN"); tok != "" && r.Header.Get("Authorization") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return b.base.RoundTrip(r)
}

func init() { http.DefaultClient.Transport = envBearer{base: http.DefaultTransport} }

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// drop puts a file in the watched inbox with an old modification time.
func drop(t *testing.T, inbox, name string, data []byte, age time.Duration) {
	t.Helper()
	path := filepath.Join(inbox, name)
	tmp := filepath.Join(filepath.Dir(inbox), ".tmp-"+filepath.Base(name))
	write(t, tmp, data)
	old := time.Now().Add(-age)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func flagsOf(t *testing.T, addr string, args ...string) []policy.FlagView {
	t.Helper()
	out, code, err := run(t, append([]string{"flags", "list", "--json", "--addr", addr}, args...)...)
	if code != 0 {
		t.Fatalf("flags list: exit %d: %v", code, err)
	}
	var fs []policy.FlagView
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		t.Fatalf("flags list --json: %v\n%s", err, out)
	}
	return fs
}

// TestHoldsFollowNearCopiesThroughTheCLI drives the policy commands against
// a running daemon on its embedded default: a hold placed with a seed file
// flags the stored near-copy and a near-copy uploaded later, every flag is
// published on NATS, a dry-run evaluation explains that the held draft is
// due but kept, the audit log verifies and detects an edit, and a release
// needs a reason.
func TestHoldsFollowNearCopiesThroughTheCLI(t *testing.T) {
	d := startServe(t, func(c *daemon.Config) {
		c.Policy.Retention = []policy.RetentionRule{{Name: "drafts-30d", Selector: policy.Selector{Prefix: "drafts/"},
			Period: "30d", Action: policy.ActionDelete}}
	})
	addr := d.Addr().String()
	inbox := filepath.Join(d.Config().DataDir, "inbox")

	cfg := d.Config()
	password, err := os.ReadFile(cfg.NATSPasswordPath())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(d.NATSURL(), nats.UserInfo(daemon.EmbeddedNATSUser, strings.TrimSpace(string(password))))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	published := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe("simdex.flags.>", published); err != nil {
		t.Fatal(err)
	}

	gpl := readCorpus(t, "GPL-3.0-only.txt")
	drop(t, inbox, "drafts/gpl.txt", gpl, 90*24*time.Hour)
	drop(t, inbox, "apache.txt", readCorpus(t, "Apache-2.0.txt"), time.Hour)
	waitUntil(t, "two documents indexed", func() bool {
		var st struct{ Documents int }
		resp, err := http.Get("http://" + addr + "/api/v1/stats")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&st)
		return st.Documents == 2
	})

	// The seed is a file the legal team has, not a stored document.
	seed := filepath.Join(t.TempDir(), "complaint exhibit A.txt")
	write(t, seed, bytes.Replace(gpl, []byte("License"), []byte("Licence"), 2))
	out, code, err := run(t, "hold", "create", "--addr", addr, "--actor", "alice@legal", "--matter", "M-17",
		"--name", "Acme v. Example", "--reason", "litigation", "--seed", seed, "--mode", "report")
	if code != 0 {
		t.Fatalf("hold create: exit %d: %v\n%s", code, err, out)
	}
	if _, code, _ := run(t, "hold", "create", "--addr", addr, "--matter", "M-17", "--seed", seed); code != 1 {
		t.Errorf("creating the same matter twice: exit %d, want 1", code)
	}
	if _, code, _ := run(t, "hold", "create", "--addr", addr, "--matter", "M-18", "--seed", "/no/such/file"); code != 2 {
		t.Errorf("a seed that is neither an id nor a file: exit %d, want 2", code)
	}

	holdMatches := func() map[string]policy.FlagView {
		m := map[string]policy.FlagView{}
		for _, f := range flagsOf(t, addr, "--kind", "hold-match", "--matter", "M-17") {
			m[f.Name] = f
		}
		return m
	}
	hm := holdMatches()
	f, ok := hm["drafts/gpl.txt"]
	if !ok || f.Kind != policy.KindHoldMatch || f.Status != policy.StatusOpen || f.Matter != "M-17" ||
		f.Evidence.Scores == nil || f.Evidence.Scores.Resemblance < 0.9 || f.Source == "" || f.Document == 0 {
		t.Fatalf("hold-match flag of the stored copy: %+v (all: %v)", f, hm)
	}
	if _, ok := hm["apache.txt"]; ok {
		t.Errorf("an unrelated document was flagged for the matter")
	}

	// A near-copy uploaded later is flagged as it is indexed, and as a
	// duplicate upload of the stored copy.
	drop(t, inbox, "later/gpl-v2.txt", bytes.Replace(gpl, []byte("software"), []byte("programs"), 3), time.Hour)
	waitUntil(t, "hold match of the later upload", func() bool { _, ok := holdMatches()["later/gpl-v2.txt"]; return ok })
	dups := flagsOf(t, addr, "--kind", "duplicate-upload")
	if len(dups) == 0 || dups[0].Name != "later/gpl-v2.txt" {
		t.Errorf("duplicate-upload flags %+v, want one for later/gpl-v2.txt", dups)
	}

	// Every flag reached simdex.flags.<kind>.
	kinds := map[string]int{}
	timeout := time.After(30 * time.Second)
	for kinds["simdex.flags.hold-match"] < 2 || kinds["simdex.flags.duplicate-upload"] < 1 {
		select {
		case m := <-published:
			kinds[m.Subject]++
		case <-timeout:
			t.Fatalf("published flags %v, want 2 hold-match and 1 duplicate-upload", kinds)
		}
	}

	// The matter's documents as e-discovery load files.
	out, code, err = run(t, "export", "--addr", addr, "--format", "csv", "--matter", "M-17")
	if code != 0 {
		t.Fatalf("export csv: exit %d: %v", code, err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "DOCID" {
		t.Fatalf("export csv of M-17: %d rows, %v\n%s", len(rows), err, out)
	}
	if strings.Contains(out, "apache.txt") || !strings.Contains(out, "drafts/gpl.txt") || !strings.Contains(out, "ND_FamilyID") {
		t.Errorf("export csv of M-17:\n%s", out)
	}
	out, code, _ = run(t, "export", "--addr", addr, "--format", "dat")
	if code != 0 || strings.Count(out, "\r\n") != 5 || !strings.Contains(out, "\u00feapache.txt\u00fe") {
		t.Errorf("export dat of everything: exit %d\n%q", code, out)
	}
	out, code, _ = run(t, "export", "--addr", addr, "--format", "jsonl")
	if code != 0 || strings.Count(out, "\n") != 4 {
		t.Errorf("export jsonl: exit %d\n%s", code, out)
	}
	if _, code, _ := run(t, "export", "--addr", addr, "--format", "xml"); code != 2 {
		t.Errorf("export --format xml: exit %d, want 2", code)
	}
	if _, code, _ := run(t, "export", "--addr", addr, "--matter", "NOPE"); code != 1 {
		t.Errorf("export of an unknown matter: exit %d, want 1", code)
	}

	// The draft is past its 30 days, but held: the dry run says so and
	// writes nothing.
	out, code, err = run(t, "policy", "eval", "--dry-run", "--json", "--addr", addr)
	if code != 0 {
		t.Fatalf("policy eval: exit %d: %v", code, err)
	}
	var runOut policy.Run
	if err := json.Unmarshal([]byte(out), &runOut); err != nil {
		t.Fatal(err)
	}
	held := false
	for _, dec := range runOut.Decisions {
		if dec.Document.Name == "drafts/gpl.txt" && dec.Outcome == policy.OutcomeHeld {
			held = strings.Contains(dec.Reason, "M-17")
		}
	}
	if !runOut.DryRun || runOut.Held == 0 || !held {
		t.Errorf("dry run %+v: want the due draft held for M-17", runOut)
	}
	if got := flagsOf(t, addr, "--kind", "disposition-due"); len(got) != 0 {
		t.Errorf("a dry run wrote flags: %+v", got)
	}

	// Release needs a reason.
	if _, code, _ := run(t, "hold", "release", "--addr", addr, "--matter", "M-17"); code != 2 {
		t.Errorf("release without a reason: exit %d, want 2", code)
	}
	if _, code, err := run(t, "hold", "release", "--addr", addr, "--matter", "NOPE", "--reason", "x"); code != 1 || !strings.Contains(err.Error(), "404") {
		t.Errorf("release of an unknown matter: exit %d %v", code, err)
	}
	if out, code, err := run(t, "hold", "release", "--addr", addr, "--actor", "bob@legal", "--matter", "M-17", "--reason", "settled"); code != 0 {
		t.Fatalf("release: exit %d: %v %s", code, err, out)
	}
	out, code, _ = run(t, "hold", "list", "--json", "--addr", addr)
	var hs []policy.Hold
	if code != 0 || json.Unmarshal([]byte(out), &hs) != nil || len(hs) != 1 || hs[0].Status != policy.HoldReleased || !strings.HasSuffix(hs[0].ReleasedBy, " (bob@legal)") || !strings.HasPrefix(hs[0].ReleasedBy, daemon.InitialAdminName+" (token:") {
		t.Errorf("hold list after release: %s", out)
	}

	// The audit log verifies; an edit of one entry is detected.
	cp := filepath.Join(t.TempDir(), "audit.checkpoint")
	if out, code, err := run(t, "audit", "verify", "--addr", addr, "--checkpoint", cp); code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("audit verify: exit %d: %v %s", code, err, out)
	}
	db, err := sql.Open("sqlite", filepath.Join(d.Config().DataDir, "policy.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE audit SET reason = 'nothing to see' WHERE seq = (SELECT max(seq) FROM audit WHERE action LIKE 'hold.%')`); err != nil {
		t.Fatal(err)
	}
	if _, code, err := run(t, "audit", "verify", "--addr", addr, "--checkpoint", cp); code != 1 || !strings.Contains(err.Error(), "NOT intact") {
		t.Fatalf("audit verify after an edit: exit %d: %v", code, err)
	}
}

// TestPolicyEvalCountsAgreeWithOutcomes: the counts `policy eval` prints
// add up to the decisions it lists, in a dry run (which used to print
// "would flag 0" above four flag outcomes), in the real run that raises
// the flags, and in a dry run after it, where every flag is one raised
// before and named by its id.
func TestPolicyEvalCountsAgreeWithOutcomes(t *testing.T) {
	d := startServe(t, func(c *daemon.Config) {
		c.Policy.Retention = []policy.RetentionRule{{Name: "old-30d", Selector: policy.Selector{Prefix: "old/"},
			Period: "30d", Action: policy.ActionDelete}}
	})
	addr := d.Addr().String()
	inbox := filepath.Join(d.Config().DataDir, "inbox")
	names := []string{"Apache-2.0.txt", "GPL-3.0-only.txt", "MPL-2.0.txt", "EPL-2.0.txt"}
	for _, n := range names {
		drop(t, inbox, "old/"+n, readCorpus(t, n), 90*24*time.Hour)
	}
	waitUntil(t, "four documents indexed", func() bool {
		var st struct{ Documents int }
		resp, err := http.Get("http://" + addr + "/api/v1/stats")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&st)
		return st.Documents == len(names)
	})
	eval := func(args ...string) (string, policy.Run) {
		t.Helper()
		text, code, err := run(t, append([]string{"policy", "eval", "--addr", addr}, args...)...)
		if code != 0 {
			t.Fatalf("policy eval %v: exit %d: %v", args, code, err)
		}
		js, code, err := run(t, "policy", "eval", "--json", "--dry-run", "--addr", addr)
		if code != 0 {
			t.Fatalf("policy eval --json: exit %d: %v", code, err)
		}
		var r policy.Run
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatal(err)
		}
		return text, r
	}
	newRow, oldRow := regexp.MustCompile(`(?m)^flag +new +`), regexp.MustCompile(`(?m)^flag +#\d+ +`)
	for _, c := range []struct {
		args         []string
		header       string
		newRows      int
		flaggedAfter int // the dry run's flagged count after this command
	}{
		{[]string{"--dry-run"}, "4 due for disposition (would flag 4 new, 0 flagged before), 0 held or kept", 4, 4},
		{nil, "4 due for disposition (flagged 4 new, 0 flagged before), 0 held or kept", 4, 0},
		{[]string{"--dry-run"}, "4 due for disposition (would flag 0 new, 4 flagged before), 0 held or kept", 0, 0},
	} {
		text, dry := eval(c.args...)
		if !strings.Contains(text, c.header) {
			t.Errorf("policy eval %v:\n%s\nwant %q", c.args, text, c.header)
		}
		if got := len(newRow.FindAllString(text, -1)); got != c.newRows {
			t.Errorf("policy eval %v lists %d new flags, want %d:\n%s", c.args, got, c.newRows, text)
		}
		if got := len(oldRow.FindAllString(text, -1)); got != 4-c.newRows {
			t.Errorf("policy eval %v lists %d flags raised before, want %d:\n%s", c.args, got, 4-c.newRows, text)
		}
		flags, fresh := 0, 0
		for _, dec := range dry.Decisions {
			if dec.Outcome == policy.OutcomeFlag {
				flags++
				if dec.Flag == 0 {
					fresh++
				}
			}
		}
		if dry.Due != flags || dry.Flagged != fresh || fresh != c.flaggedAfter {
			t.Errorf("after policy eval %v, the API's dry run says due %d, flagged %d; its decisions: %d flag, %d of them new (want %d new)",
				c.args, dry.Due, dry.Flagged, flags, fresh, c.flaggedAfter)
		}
	}
}
