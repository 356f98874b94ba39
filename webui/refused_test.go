package webui_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/policy"
)

// TestBrowserRefusedFlag: an approved deletion a hold refused reads
// "refused" in the review queue, tagged, with why ("held for matter M"),
// and can still be dismissed. Before, the queue showed it approved.
func TestBrowserRefusedFlag(t *testing.T) {
	b := newBrowser(t)
	s := startStackWith(t, func(c *daemon.Config) {
		c.Policy.Retention = []policy.RetentionRule{{Name: "minutes-30d", Selector: policy.Selector{Prefix: "minutes"},
			Period: "30d", Action: policy.ActionDelete}}
	})
	admin := s.token(t, auth.RoleLegalAdmin)
	// Dropped with a modification time 90 days old (a rename keeps it).
	tmp := filepath.Join(s.cfg.DataDir, ".minutes.tmp")
	if err := os.WriteFile(tmp, []byte("Minutes of the board: the auditors are reappointed and the dividend is unchanged.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().AddDate(0, 0, -90)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.inbox, "minutes.txt")); err != nil {
		t.Fatal(err)
	}
	var due struct {
		Flags []Flag `json:"flags"`
	}
	waitFor(t, 90*time.Second, "the minutes flagged for disposition", func() bool {
		s.call(t, admin, "POST", "/api/v1/policy/evaluate", nil, nil)
		s.call(t, admin, "GET", "/api/v1/flags?kind=disposition-due", nil, &due)
		return len(due.Flags) == 1
	})
	f := due.Flags[0]
	if code, body := s.call(t, admin, "POST", fmt.Sprintf("/api/v1/flags/%d/approve", f.ID), map[string]string{"reason": "past retention"}, nil); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, body)
	}
	if code, body := s.call(t, admin, "POST", "/api/v1/holds", map[string]any{"matter": "M-9", "reason": "audit", "seeds": []int64{f.Document}}, nil); code != http.StatusCreated {
		t.Fatalf("hold: %d %s", code, body)
	}
	if code, body := s.call(t, admin, "POST", fmt.Sprintf("/api/v1/flags/%d/execute", f.ID), nil, nil); code != http.StatusConflict {
		t.Fatalf("execute under hold: %d %s", code, body)
	}

	b.do("open the UI", chromedp.Navigate(s.api+"/"))
	b.signIn(admin)
	b.goTo("#/flags?status=refused")
	row := fmt.Sprintf(`#flags-table tr[data-id="%d"]`, f.ID)
	b.wait("the refused flag", fmt.Sprintf(`!!document.querySelector('%s .status.status-refused.tag')`, row))
	if got := eval[string](b, fmt.Sprintf(`document.querySelector('%s .refusal').textContent`, row)); got != "held for matter M-9" {
		t.Errorf("refusal shown: %q, want held for matter M-9", got)
	}
	if !eval[bool](b, fmt.Sprintf(`!!document.querySelector('%s button.dismiss')`, row)) {
		t.Error("a refused flag offers no Dismiss")
	}
}
