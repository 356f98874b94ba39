package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/simdex/simdex/api"
	natsconn "github.com/simdex/simdex/connectors/nats"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/natstest"
	"github.com/simdex/simdex/policy"
)

// fsRig is a daemon watching a folder (the quick start's setup), with a
// retention rule deleting what is older than a week.
type fsRig struct {
	inbox, addr string
	texts       map[string]string
	nc          *nats.Conn
}

func newFSRig(t *testing.T, texts map[string]string, rules ...policy.RetentionRule) *fsRig {
	t.Helper()
	ns := natstest.Start(t)
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.URL = ns.URL()
	cfg.Index.Durability = "normal"
	inbox := t.TempDir()
	cfg.Connectors.FS.Dirs = []string{inbox}
	cfg.Connectors.FS.Interval = 100 * time.Millisecond
	cfg.Policy.Retention = append([]policy.RetentionRule{{Name: "inbox-7d", Selector: policy.Selector{Source: "fs:" + inbox}, Period: "7d", Action: "delete"}}, rules...)
	old := time.Now().AddDate(0, 0, -30)
	for name, text := range texts {
		p := filepath.Join(inbox, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, cfg, nil)
	r := &fsRig{inbox: inbox, addr: d.Addr().String(), texts: texts, nc: ns.Conn(t)}
	for name := range texts {
		waitFor(t, 30*time.Second, "indexing of "+name, func() bool { return len(versionsOf(t, r.addr, r.key(name))) == 1 })
	}
	return r
}

func (r *fsRig) key(name string) string { return "fs:" + r.inbox + "/" + name }

// flags returns the flags of kind, by document name.
func (r *fsRig) flags(t *testing.T, kind policy.FlagKind) map[string]policy.FlagView {
	t.Helper()
	var out struct {
		Flags []policy.FlagView `json:"flags"`
	}
	if code := getJSON(t, r.addr, "/api/v1/flags?kind="+string(kind), &out); code != http.StatusOK {
		t.Fatalf("list %s flags: %d", kind, code)
	}
	byName := map[string]policy.FlagView{}
	for _, f := range out.Flags {
		byName[f.Name] = f
	}
	return byName
}

// audit counts the audit entries of action on object.
func (r *fsRig) audit(t *testing.T, action, object string) int {
	t.Helper()
	var out struct {
		Entries []policy.AuditEntry `json:"entries"`
	}
	getJSON(t, r.addr, "/api/v1/audit?limit=10000", &out)
	n := 0
	for _, e := range out.Entries {
		if e.Action == action && e.Object == object {
			n++
		}
	}
	return n
}

func (r *fsRig) flag(t *testing.T, id int64) policy.FlagView {
	t.Helper()
	var f policy.FlagView
	if code := getJSON(t, r.addr, fmt.Sprintf("/api/v1/flags/%d", id), &f); code != http.StatusOK {
		t.Fatalf("flag %d: %d", id, code)
	}
	return f
}

// TestWatchedFolderDispositions: approved deletions on the watched folder
// are carried out or refused, never left approved (issue 40). A file
// still as indexed is deleted, with its proof in the audit log and
// /disposals; one edited after the approval is refused as stale; one a
// hold covers after the approval is refused "held for matter M", and the
// hold, which cannot lock a file, is flagged hold-unenforced once. Before,
// every execution failed "502 … is not an S3 object", the flags stayed
// approved, the audit recorded the rollback as flag.approve, and the
// hold raised no flag.
func TestWatchedFolderDispositions(t *testing.T) {
	r := newFSRig(t, map[string]string{
		"old.txt":    strings.Repeat("The quarterly payroll ledger lists salaries, deductions and pension contributions per employee. ", 20),
		"edited.txt": strings.Repeat("Minutes of the facilities committee: the roof repair is scheduled before the winter storms. ", 20),
		"held.txt":   strings.Repeat("Supply agreement between the parties: the supplier ships turbine blades within ninety days. ", 20),
	})
	if code := postJSON(t, r.addr, "/api/v1/policy/evaluate", nil, nil); code != http.StatusOK {
		t.Fatalf("evaluate: %d", code)
	}
	due := r.flags(t, policy.KindDispositionDue)
	if len(due) != 3 {
		t.Fatalf("disposition flags: %+v", due)
	}
	for _, f := range due {
		if code := postJSON(t, r.addr, fmt.Sprintf("/api/v1/flags/%d/approve", f.ID), map[string]string{"reason": "past retention"}, nil); code != http.StatusOK {
			t.Fatalf("approve %s: %d", f.Name, code)
		}
	}
	// After the approvals: a hold covers held.txt, edited.txt is edited.
	var hold api.HoldResponse
	if code := postJSON(t, r.addr, "/api/v1/holds", api.HoldRequest{Matter: "M-40", Reason: "litigation", Seeds: []index.DocID{index.DocID(due["held.txt"].Document)}}, &hold); code != http.StatusCreated {
		t.Fatalf("place hold: %d", code)
	}
	if hold.Placement.Unlockable != 1 || hold.Placement.Enforced != 0 {
		t.Errorf("placement %+v: want 1 document on a source that cannot lock, none locked", hold.Placement)
	}
	unenforced := r.flags(t, policy.KindHoldUnenforced)
	if f, ok := unenforced["held.txt"]; len(unenforced) != 1 || !ok || f.Matter != "M-40" || !strings.Contains(f.Evidence.Note, "cannot lock files") {
		t.Errorf("hold-unenforced flags: %+v; want one, on held.txt, saying the folder cannot lock files", unenforced)
	}
	if err := os.WriteFile(filepath.Join(r.inbox, "edited.txt"), []byte(r.texts["edited.txt"]+" Amended."), 0o600); err != nil {
		t.Fatal(err)
	}

	execute := func(name string) int {
		return postJSON(t, r.addr, fmt.Sprintf("/api/v1/flags/%d/execute", due[name].ID), nil, nil)
	}
	if code := execute("old.txt"); code != http.StatusOK {
		t.Fatalf("execute old.txt: %d", code)
	}
	if _, err := os.Stat(filepath.Join(r.inbox, "old.txt")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("old.txt after its deletion: %v", err)
	}
	if f := r.flag(t, due["old.txt"].ID); f.Status != policy.StatusExecuted {
		t.Errorf("old.txt's flag: %+v", f)
	}
	for name, want := range map[string]string{"edited.txt": "stale: ", "held.txt": "held for matter M-40"} {
		if code := execute(name); code != http.StatusConflict {
			t.Errorf("execute %s: %d, want 409", name, code)
		}
		f := r.flag(t, due[name].ID)
		if f.Status != policy.StatusRefused || !strings.HasPrefix(f.Reason, want) {
			t.Errorf("%s's flag: %s %q, want refused %q", name, f.Status, f.Reason, want)
		}
		object := fmt.Sprintf("flag:%d", f.ID)
		if r.audit(t, policy.AuditFlagRefuse, object) != 1 || r.audit(t, policy.AuditFlagApprove, object) != 1 {
			t.Errorf("%s: want one flag.refuse and only the approval's flag.approve", name)
		}
	}
	if _, err := os.Stat(filepath.Join(r.inbox, "held.txt")); err != nil {
		t.Errorf("held.txt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.inbox, "edited.txt")); err != nil {
		t.Errorf("edited.txt: %v", err)
	}

	// The proof of the one disposal.
	var ds struct {
		Disposals []policy.Disposal `json:"disposals"`
	}
	if code := getJSON(t, r.addr, "/api/v1/disposals?rule=inbox-7d", &ds); code != http.StatusOK || len(ds.Disposals) != 1 {
		t.Fatalf("disposals: %d %+v", code, ds)
	}
	sum := sha256.Sum256([]byte(r.texts["old.txt"]))
	d := ds.Disposals[0]
	if d.Flag != due["old.txt"].ID || d.Rule != "inbox-7d" || d.Object.Key != "old.txt" || d.Object.Source != "fs:"+r.inbox ||
		d.SHA256 != hex.EncodeToString(sum[:]) || d.Size != int64(len(r.texts["old.txt"])) || d.Approver == "" || d.Approved.IsZero() || d.Actor == "" {
		t.Errorf("disposal %+v", d)
	}
	if r.audit(t, policy.AuditFlagDispose, fmt.Sprintf("flag:%d", d.Flag)) != 1 {
		t.Error("no flag.dispose entry")
	}

	// A sweep (every real evaluation) raises no second hold-unenforced.
	if code := postJSON(t, r.addr, "/api/v1/policy/evaluate", nil, nil); code != http.StatusOK {
		t.Fatalf("evaluate: %d", code)
	}
	if n := len(r.flags(t, policy.KindHoldUnenforced)); n != 1 {
		t.Errorf("%d hold-unenforced flags after a sweep, want 1", n)
	}
}

// TestNATSBodyDisposalPurgesTheIndex: a NATS message that carried its
// body has no origin but simdex, so executing its approved deletion
// removes it from the index, with its proof. Before, it failed "502 … is
// not an S3 object" and the flag stayed approved.
func TestNATSBodyDisposalPurgesTheIndex(t *testing.T) {
	r := newFSRig(t, nil, policy.RetentionRule{Name: "nats-now", Selector: policy.Selector{Source: "nats:docs"}, Period: "1ns", Action: "delete"})
	text := strings.Repeat("Board minutes: the dividend is unchanged and the auditors are reappointed for a year. ", 20)
	msg := nats.NewMsg("simdex.docs.minutes")
	msg.Header.Set(natsconn.HeaderID, "minutes-by-nats")
	msg.Header.Set(natsconn.HeaderName, "minutes.txt")
	msg.Data = []byte(text)
	publishToStream(t, r.nc, msg)
	const key = "nats:docs/minutes-by-nats"
	waitFor(t, 30*time.Second, "the message indexed", func() bool { return len(versionsOf(t, r.addr, key)) == 1 })
	time.Sleep(time.Millisecond) // past the rule's period
	if code := postJSON(t, r.addr, "/api/v1/policy/evaluate", nil, nil); code != http.StatusOK {
		t.Fatalf("evaluate: %d", code)
	}
	f, ok := r.flags(t, policy.KindDispositionDue)["minutes-by-nats"]
	if !ok {
		t.Fatal("no disposition flag for the message")
	}
	if code := postJSON(t, r.addr, fmt.Sprintf("/api/v1/flags/%d/approve", f.ID), map[string]string{"reason": "past retention"}, nil); code != http.StatusOK {
		t.Fatalf("approve: %d", code)
	}
	if code := postJSON(t, r.addr, fmt.Sprintf("/api/v1/flags/%d/execute", f.ID), nil, nil); code != http.StatusOK {
		t.Fatalf("execute: %d", code)
	}
	if vs := versionsOf(t, r.addr, key); len(vs) != 0 {
		t.Errorf("the message after its disposal: %+v", vs)
	}
	var ds struct {
		Disposals []policy.Disposal `json:"disposals"`
	}
	sum := sha256.Sum256([]byte(text))
	getJSON(t, r.addr, "/api/v1/disposals", &ds)
	if len(ds.Disposals) != 1 || ds.Disposals[0].Flag != f.ID || ds.Disposals[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("disposals %+v", ds.Disposals)
	}
}
