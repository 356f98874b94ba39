package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/daemon"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/daemontest"
	"github.com/simdex/simdex/policy"
	policysqlite "github.com/simdex/simdex/policy/sqlite"
)

// The browser tests drive Debian's Chromium, headless, over the DevTools
// protocol against a real daemon: embedded NATS and index, documents
// dropped in its watched folder, tokens made the way `simdex token create`
// makes them, and every assertion about the server's state checked
// through the API, not the page.

// chromium returns the browser to drive: $SIMDEX_CHROMIUM or
// /usr/bin/chromium. Without one the test fails, as it does without MinIO:
// a browser test that skips proves nothing (`make test` installs it).
func chromium(t *testing.T) string {
	t.Helper()
	p := os.Getenv("SIMDEX_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(p); err != nil {
		t.Fatalf("no Chromium at %s: install it with scripts/install-chromium.sh (make test does) or set SIMDEX_CHROMIUM: %v", p, err)
	}
	return p
}

// browser is one headless Chromium tab, with what its console reported.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	messages []string // console messages and exceptions, in order
	thrown   []string // uncaught exceptions and unhandled rejections
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromium(t)
	profile := t.TempDir() // removed after the browser has exited (cleanups run last-in first-out)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// Nothing may leave the machine: no QUIC probes, no background
		// fetches, no component or sync updates.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1366, 900),
	)
	ctx, cancel := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.thrown {
			t.Errorf("uncaught in the page: %s", e)
		}
	})
	// The first action starts the browser; give it its own deadline
	// without bounding the browser's life.
	start := time.Now()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	t.Logf("Chromium started in %v", time.Since(start).Round(time.Millisecond))
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.messages = append(b.messages, m.String())
			if m.IsException() {
				b.thrown = append(b.thrown, m.String())
			}
			b.mu.Unlock()
		}
	}()
	return b
}

// fail reports what the page shows and what its console said, then stops.
func (b *browser) fail(format string, args ...any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	main, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + "\n" + (document.querySelector('main') || document.body).innerText.slice(0, 3000)`))
	if shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("body"))); err == nil {
		p := filepath.Join(os.TempDir(), strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name())+".png")
		if os.WriteFile(p, shot, 0o644) == nil {
			b.t.Logf("screenshot: %s", p)
		}
	}
	b.mu.Lock()
	console := strings.Join(b.messages, "\n")
	b.mu.Unlock()
	b.t.Fatalf(format+"\n--- page:\n%s\n--- console:\n%s", append(args, main, console)...)
}

// snapshot saves a PNG of the whole page as $SIMDEX_WEBUI_SCREENSHOTS/name.png
// when that variable names a folder, for people to look at the UI.
func (b *browser) snapshot(name string) {
	b.t.Helper()
	dir := os.Getenv("SIMDEX_WEBUI_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}

// do runs steps with a deadline.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail("%s: %v", what, err)
	}
}

// wait polls a JavaScript predicate until it is truthy. An exception in
// the predicate (an element not there yet) counts as false.
func (b *browser) wait(what, predicate string) {
	b.t.Helper()
	predicate = "(() => { try { return (" + predicate + "); } catch (e) { return false; } })()"
	b.do("wait for "+what, chromedp.Steps(func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingTimeout(45*time.Second), chromedp.WithPollingInterval(25*time.Millisecond))(ctx, t)
	}))
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.fail("evaluate %s: %v", expr, err)
	}
	return v
}

// goTo changes the page's route (the hash) without reloading it.
func (b *browser) goTo(hash string) {
	b.t.Helper()
	js, _ := json.Marshal(hash)
	eval[chromedp.Void](b, "location.hash = "+string(js))
}

// signIn signs in from the sign-in page with a token.
func (b *browser) signIn(token string) {
	b.t.Helper()
	b.wait("the sign-in form", `document.body.dataset.view === 'signin' && !!document.querySelector('#token')`)
	b.do("sign in",
		chromedp.Steps(func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			return chromedp.Evaluate[chromedp.Void](`document.querySelector('#token').value = ''`)(ctx, t)
		}),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#signin-form button[type=submit]")),
	)
	// Signing in leads where the user was going, the search page by default.
	b.wait("a page after sign-in", `document.body.dataset.view !== 'signin' && !document.querySelector('#nav').hidden`)
}

// stack is a running daemon and what the tests need to reach it.
type stack struct {
	cfg   daemon.Config
	api   string // http://host:port of the daemon
	inbox string
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startStack runs a daemon with its embedded defaults (NATS with
// JetStream, index, policy store, watched folder) in a temporary data
// directory until the test ends.
func startStack(t *testing.T) *stack {
	t.Helper()
	return startStackWith(t, func(*daemon.Config) {})
}

// startStackWith is startStack with its configuration changed by edit.
func startStackWith(t *testing.T, edit func(*daemon.Config)) *stack {
	t.Helper()
	cfg := daemon.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.HTTP.InitialAdminToken = false
	cfg.Index.Durability = "normal"
	cfg.Connectors.FS.Interval = 200 * time.Millisecond
	cfg.Connectors.FS.Settle = 200 * time.Millisecond
	cfg.Log.Level = "warn"
	edit(&cfg)
	inbox := cfg.WatchedDirs()[0]
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, cfg, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
	s := &stack{cfg: cfg, api: "http://" + d.Addr().String(), inbox: inbox}
	// The UI is served by the daemon itself, on the API's origin, with no
	// token needed for its files.
	if !servesUI(s.api) {
		t.Fatalf("GET %s/ does not answer the UI's index.html: is webui.Handler mounted at / and /ui/ (public)?", s.api)
	}
	return s
}

// servesUI reports whether GET / on base answers the UI's index.html.
func servesUI(base string) bool {
	resp, err := http.Get(base + "/")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`src="/ui/js/app.js"`))
}

func waitFor(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// token makes an API token as `simdex token create` does.
func (s *stack) token(t *testing.T, role auth.Role, matters ...string) string {
	t.Helper()
	secret, _, err := daemon.CreateToken(context.Background(), s.cfg, "browser-test", auth.CreateRequest{Role: role, Matters: matters,
		Name: "Browser " + string(role), Description: "browser test " + string(role)})
	if err != nil {
		t.Fatalf("create %s token: %v", role, err)
	}
	return secret
}

// call sends a request to the daemon's API and decodes a 2xx answer into
// out; it returns the status and the body.
func (s *stack) call(t *testing.T, token, method, path string, body, out any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.api+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, string(b)
}

// drop puts a file in the watched folder, whole (written beside it, then
// renamed in).
func (s *stack) drop(t *testing.T, name, text string) {
	t.Helper()
	tmp := filepath.Join(s.cfg.DataDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.inbox, name)); err != nil {
		t.Fatal(err)
	}
}

// Document and Flag are the parts of the API's answers the tests read.
type Document struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

type Flag struct {
	ID       int64  `json:"id"`
	Kind     string `json:"kind"`
	Document int64  `json:"document"`
	Matter   string `json:"matter"`
	Status   string `json:"status"`
	Actor    string `json:"actor"`
	Reason   string `json:"reason"`
}

// search returns the documents the API finds for q.
func (s *stack) search(t *testing.T, token, q string) []Document {
	t.Helper()
	var out struct {
		Documents []Document `json:"documents"`
	}
	if code, body := s.call(t, token, "GET", "/api/v1/search?limit=50&q="+url.QueryEscape(q), nil, &out); code != http.StatusOK {
		t.Fatalf("search %q: %d %s", q, code, body)
	}
	return out.Documents
}

// agreement is a contract of some forty clauses; edits replaces words
// once each, making the near-copies.
func agreement(edits ...string) string {
	var b strings.Builder
	b.WriteString("SERVICES AGREEMENT\n\nThis agreement is made between Northwind Trading B.V., a company registered in Amsterdam, and Contoso Services Limited.\n\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "%d. The supplier shall perform the services listed in schedule %d with reasonable skill and care, and the customer shall pay each invoice within %d days of its receipt. ", i, i+3, 20+i)
		switch i {
		case 17:
			b.WriteString("Service reports are delivered quarterly to the steering committee of both parties. ")
		case 29:
			b.WriteString("Either party may terminate this agreement with ninety days written notice. ")
		}
		b.WriteString("\n")
	}
	text := b.String()
	r := strings.NewReplacer(edits...)
	return r.Replace(text)
}

const hostileName = `<img src=x onerror="window.__xss=1">memo.txt`

func TestBrowserReview(t *testing.T) {
	b := newBrowser(t) // first: without Chromium, fail (CI) or skip before any set-up
	s := startStack(t)

	admin := s.token(t, auth.RoleLegalAdmin)
	s.drop(t, "services-agreement.txt", agreement())
	// v2 changes two words, far apart; v3 one clause.
	s.drop(t, "services-agreement-v2.txt", agreement("registered in Amsterdam", "registered in Rotterdam", "delivered quarterly", "delivered annually"))
	s.drop(t, "services-agreement-v3.txt", agreement("ninety days", "sixty days"))
	s.drop(t, hostileName, "Memo to all staff: the canteen closes early on Friday for the summer party. Bring your own cup and a friend.\n")
	var docs []Document
	waitFor(t, 90*time.Second, "the documents to be indexed", func() bool {
		docs = s.search(t, admin, "services-agreement")
		return len(docs) == 3 && len(s.search(t, admin, "onerror")) == 1
	})
	id := map[string]int64{}
	for _, d := range docs {
		id[d.Name] = d.ID
	}
	orig, v2, v3 := id["services-agreement.txt"], id["services-agreement-v2.txt"], id["services-agreement-v3.txt"]
	if orig == 0 || v2 == 0 || v3 == 0 {
		t.Fatalf("documents by name = %v", id)
	}

	// A legal-admin places a hold on the original: its near-copies are
	// held and flagged for review in matter M-1.
	var placed struct {
		Placement policy.Placement `json:"placement"`
	}
	if code, body := s.call(t, admin, "POST", "/api/v1/holds", map[string]any{
		"matter": "M-1", "name": "Northwind v Contoso", "reason": "litigation", "seeds": []int64{orig},
	}, &placed); code != http.StatusCreated {
		t.Fatalf("create hold: %d %s", code, body)
	}
	reviewer := s.token(t, auth.RoleReviewer, "M-1")
	var open struct {
		Flags []Flag `json:"flags"`
	}
	if code, body := s.call(t, reviewer, "GET", "/api/v1/flags?status=open&matter=M-1", nil, &open); code != http.StatusOK {
		t.Fatalf("list flags: %d %s", code, body)
	}
	flagOf := map[int64]int64{}
	for _, f := range open.Flags {
		flagOf[f.Document] = f.ID
	}
	if flagOf[v2] == 0 || flagOf[v3] == 0 {
		t.Fatalf("open flags of M-1 = %+v (placement %+v), want one for each near-copy (%d, %d)", open.Flags, placed.Placement, v2, v3)
	}

	step(t, "sign-in", func(t *testing.T) {
		b.t = t
		b.do("open the UI", chromedp.Navigate(s.api+"/"))
		b.wait("the sign-in page", `document.body.dataset.view === 'signin'`)
		// Signed out, no navigation or "Sign out" shows (a CSS display
		// rule used to override their hidden attribute).
		if shown := eval[[]string](b, `['#nav', '#who'].filter(s => getComputedStyle(document.querySelector(s)).display !== 'none')`); len(shown) > 0 {
			t.Errorf("the sign-in page shows %v", shown)
		}
		// A malformed token is refused before any request.
		b.do("type a malformed token", chromedp.SendKeys(chromedp.CSS("#token"), "not-a-token"), chromedp.Click(chromedp.CSS("#signin-form button[type=submit]")))
		b.wait("the format error", `!!document.querySelector('#signin-form .error')`)
		b.signIn(reviewer)
		who := eval[string](b, `document.querySelector('#who-name').textContent`)
		if who != "Browser reviewer (reviewer)" {
			t.Errorf("signed in as %q, want the reviewer's person, Browser reviewer", who)
		}
		// A reviewer reviews flags and reads matters but places no holds.
		nav := eval[map[string]bool](b, `Object.fromEntries([...document.querySelectorAll('#nav a')].map(a => [a.dataset.nav, !a.hidden]))`)
		if !nav["flags"] || !nav["holds"] || !nav["search"] {
			t.Errorf("navigation shown to a reviewer = %v", nav)
		}
		b.goTo("#/holds")
		b.wait("the holds page", `document.querySelectorAll('table.holds tbody tr').length === 1`)
		if eval[bool](b, `!!document.querySelector('#hold-form')`) {
			t.Error("a reviewer is offered the form to place a hold")
		}
	})

	step(t, "search and document", func(t *testing.T) {
		b.t = t
		b.goTo("#/search")
		b.wait("the search form", `!!document.querySelector('#search-form')`)
		b.do("search by name",
			chromedp.SendKeys(chromedp.CSS("#q"), "services-agreement"),
			chromedp.Click(chromedp.CSS("#search-form button[type=submit]")))
		b.wait("three results", `document.querySelectorAll('table.search-results tbody tr').length === 3`)
		b.do("open the original", chromedp.Click(chromedp.Search(`//table[contains(@class,"search-results")]//a[text()="services-agreement.txt"]`)))
		b.wait("the document page", fmt.Sprintf(`location.hash === '#/documents/%d' && document.querySelector('#doc-head h1').textContent === 'services-agreement.txt'`, orig))
		b.wait("its near-copies", `document.querySelectorAll('table.matches tbody tr').length >= 2`)
		rows := eval[[]string](b, `[...document.querySelectorAll('table.matches tbody tr')].map(r => r.dataset.id)`)
		for _, want := range []int64{v2, v3} {
			if !slices.Contains(rows, fmt.Sprint(want)) {
				t.Errorf("near-copies shown = %v, want %d among them", rows, want)
			}
		}
		// Every score is shown: resemblance, containment both ways, bytes
		// in common, Hamming, identical.
		cells := eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll('table.matches tr[data-id="%d"] td')].map(td => td.textContent.trim())`, v2))
		if len(cells) < 9 || !strings.HasPrefix(cells[2], "0.") || !strings.HasSuffix(cells[3], "%") || !strings.HasSuffix(cells[5], "B") || cells[7] != "no" {
			t.Errorf("scores of v2 = %q", cells)
		}
		b.wait("the family graph", `!!document.querySelector('#family-graph canvas') && document.querySelector('#family-graph').cy.nodes().length === 3`)
		if pivot := eval[int](b, `document.querySelector('#family-graph').cy.nodes('.pivot').length`); pivot != 1 {
			t.Errorf("pivots highlighted = %d, want 1", pivot)
		}
		b.wait("the histogram", `!!document.querySelector('#histogram canvas') && document.querySelectorAll('table.histogram-table tbody tr').length === 10`)
		// The legend names the series; a live legend showed "--" for each
		// until the pointer hovered the chart.
		if legend := eval[string](b, `document.querySelector('#histogram .u-legend')?.textContent || ''`); strings.Contains(legend, "--") || !strings.Contains(legend, "near-copies of this document") {
			t.Errorf("histogram legend %q", legend)
		}
		// Labels sit on a plate, so links do not run through them.
		if bg := eval[float64](b, `Number(document.querySelector('#family-graph').cy.nodes()[0].style('text-background-opacity'))`); bg < 0.5 {
			t.Errorf("node labels have a background opacity of %v", bg)
		}
		b.snapshot("document")
		// A click on a node opens that document.
		eval[chromedp.Void](b, fmt.Sprintf(`void document.querySelector('#family-graph').cy.getElementById('n%d').emit('tap')`, v3))
		b.wait("v3's page from the graph", fmt.Sprintf(`location.hash === '#/documents/%d' && document.querySelector('#doc-head h1').textContent === 'services-agreement-v3.txt'`, v3))
		eval[chromedp.Void](b, `history.back()`)
		b.wait("the original again", fmt.Sprintf(`document.querySelector('#doc-head h1').textContent === 'services-agreement.txt' && !!document.querySelector('table.matches tr[data-id="%d"] a.diff-link')`, v2))
	})

	step(t, "diff", func(t *testing.T) {
		b.t = t
		b.do("open the diff with v2", chromedp.Click(chromedp.CSS(fmt.Sprintf(`table.matches tr[data-id="%d"] a.diff-link`, v2))))
		b.wait("the diff", fmt.Sprintf(`location.hash === '#/diff/%d/%d' && !!document.querySelector('#diff')`, orig, v2))
		b.snapshot("diff")
		type marks struct {
			Del, Ins           []string
			StrayDel, StrayIns int
		}
		m := eval[marks](b, `({
			Del: [...document.querySelectorAll('#diff-left .del')].map(e => e.textContent),
			Ins: [...document.querySelectorAll('#diff-right .ins')].map(e => e.textContent),
			StrayDel: document.querySelectorAll('#diff-right .del').length,
			StrayIns: document.querySelectorAll('#diff-left .ins').length,
		})`)
		if !slices.Equal(m.Del, []string{"Amsterdam", "quarterly"}) || !slices.Equal(m.Ins, []string{"Rotterdam", "annually"}) || m.StrayDel+m.StrayIns != 0 {
			t.Errorf("highlighted: deleted %q, inserted %q (%d deletions right, %d insertions left); want exactly Amsterdam, quarterly -> Rotterdam, annually",
				m.Del, m.Ins, m.StrayDel, m.StrayIns)
		}
		// Long equal runs are collapsed; expanded, the left column is the
		// original text and the right one the copy, exactly.
		eval[chromedp.Void](b, `document.querySelectorAll('#diff-left button.expand').forEach(e => e.click())`)
		column := func(side string) string {
			return eval[string](b, `(() => { const c = document.querySelector('#diff-`+side+`').cloneNode(true); c.querySelector('h2').remove(); return c.textContent; })()`)
		}
		if n := eval[int](b, `document.querySelectorAll('#diff button.expand').length`); n != 0 {
			t.Errorf("%d collapsed runs left after expanding", n)
		}
		if left, want := column("left"), agreement(); strings.TrimSpace(left) != strings.TrimSpace(want) {
			t.Errorf("left column is not the original text:\n%.400q\nwant\n%.400q", left, want)
		}
		if right, want := column("right"), agreement("registered in Amsterdam", "registered in Rotterdam", "delivered quarterly", "delivered annually"); strings.TrimSpace(right) != strings.TrimSpace(want) {
			t.Errorf("right column is not v2's text:\n%.400q\nwant\n%.400q", right, want)
		}
	})

	step(t, "versions of a dropped file", func(t *testing.T) {
		b.t = t
		// A file that is not stored (a fourth edit) finds all three.
		f := filepath.Join(t.TempDir(), "draft for counsel.txt")
		if err := os.WriteFile(f, []byte(agreement("steering committee", "supervisory board")), 0o644); err != nil {
			t.Fatal(err)
		}
		b.goTo("#/search")
		b.wait("the search page", `!!document.querySelector('#file')`)
		b.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{f}))
		b.wait("its versions", `document.querySelectorAll('#upload-results table.matches tbody tr').length === 3`)
		got := eval[[]string](b, `[...document.querySelectorAll('#upload-results table.matches tbody tr')].map(r => r.dataset.id)`)
		for _, want := range []int64{orig, v2, v3} {
			if !slices.Contains(got, fmt.Sprint(want)) {
				t.Errorf("versions of the dropped file = %v, want %d among them", got, want)
			}
		}
		if title := eval[string](b, `document.querySelector('#upload-results h2').textContent`); !strings.Contains(title, "draft for counsel.txt") {
			t.Errorf("upload results titled %q", title)
		}
		// The same by dropping a file on the drop zone.
		text, _ := json.Marshal(agreement("ninety days", "thirty days"))
		eval[chromedp.Void](b, `void (() => {
			const dt = new DataTransfer();
			dt.items.add(new File([`+string(text)+`], 'dropped.txt', { type: 'text/plain' }));
			document.querySelector('#drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
		})()`)
		b.wait("the dropped file's versions", `/dropped\.txt/.test(document.querySelector('#upload-results h2').textContent) && document.querySelectorAll('#upload-results table.matches tbody tr').length === 3`)
	})

	step(t, "review queue", func(t *testing.T) {
		b.t = t
		b.goTo("#/flags?status=open&matter=M-1")
		b.wait("the queue", fmt.Sprintf(`!!document.querySelector('#flags-table tr[data-id="%d"]') && !!document.querySelector('#flags-table tr[data-id="%d"]')`, flagOf[v2], flagOf[v3]))
		// No reason, no approval: the page says so and sends nothing.
		b.do("approve without a reason", chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[aria-label="Approve flag %d"]`, flagOf[v2]))))
		b.wait("the reason error", `!!document.querySelector('#flags-status .error')`)
		// One flag, with its own button.
		b.do("approve v2's flag",
			chromedp.SendKeys(chromedp.CSS("#bulk-reason"), "copy of the contract in dispute"),
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[aria-label="Approve flag %d"]`, flagOf[v2]))))
		b.wait("the approval shown", fmt.Sprintf(`document.querySelector('#flags-table tr[data-id="%d"] .status').textContent === 'approved'`, flagOf[v2]))
		b.snapshot("flags")
		var f Flag
		if code, body := s.call(t, reviewer, "GET", fmt.Sprintf("/api/v1/flags/%d", flagOf[v2]), nil, &f); code != http.StatusOK {
			t.Fatalf("get flag: %d %s", code, body)
		}
		if f.Status != "approved" || f.Reason != "copy of the contract in dispute" || f.Actor == "" {
			t.Errorf("after approval in the UI, the API says %+v", f)
		}
		// The other with a checkbox and the bulk action.
		b.do("dismiss v3's flag in bulk",
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`#flags-table tr[data-id="%d"] input.pick`, flagOf[v3]))),
			chromedp.Click(chromedp.CSS("#bulk-dismiss")))
		b.wait("the dismissal shown", fmt.Sprintf(`document.querySelector('#flags-table tr[data-id="%d"] .status').textContent === 'dismissed'`, flagOf[v3]))
		if code, body := s.call(t, reviewer, "GET", fmt.Sprintf("/api/v1/flags/%d", flagOf[v3]), nil, &f); code != http.StatusOK || f.Status != "dismissed" {
			t.Errorf("after the bulk dismissal, the API says %d %+v %s", code, f, body)
		}
	})

	step(t, "expired session", func(t *testing.T) {
		b.t = t
		// A token the server refuses (well-formed, unknown) sends the
		// user back to sign in, and then to where they were going.
		eval[chromedp.Void](b, `sessionStorage.setItem('simdex.token', 'sdx_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')`)
		b.do("reload", chromedp.Reload())
		b.wait("the sign-in page after a 401", `document.body.dataset.view === 'signin' && sessionStorage.getItem('simdex.token') === null`)
	})

	step(t, "e-mail thread", func(t *testing.T) {
		b.t = t
		body := strings.Repeat("The shipment of spare turbine blades waits for the customs papers from Antwerp. ", 5)
		s.drop(t, "blades.eml", "From: Ann <ann@example.com>\r\nTo: Bo <bo@example.com>\r\nSubject: Blades\r\nDate: Mon, 2 Mar 2026 09:00:00 +0000\r\nMessage-ID: <p9@example.com>\r\n\r\n"+body+"\r\n")
		s.drop(t, "re-blades.eml", "From: Bo <bo@example.com>\r\nTo: Ann <ann@example.com>\r\nSubject: Re: Blades\r\nDate: Mon, 2 Mar 2026 11:00:00 +0000\r\nMessage-ID: <r9@example.com>\r\nIn-Reply-To: <p9@example.com>\r\n\r\nI will tell the warehouse in Ghent today.\r\n\r\nOn Mon, Ann wrote:\r\n> "+
			strings.ReplaceAll(strings.TrimSpace(body), ". ", ".\r\n> ")+"\r\n")
		var reply int64
		waitFor(t, 60*time.Second, "both messages indexed", func() bool {
			docs := s.search(t, admin, "blades.eml")
			for _, d := range docs {
				if d.Name == "re-blades.eml" {
					reply = d.ID
				}
			}
			return len(docs) == 2 && reply != 0
		})
		b.signIn(admin)
		b.goTo(fmt.Sprintf("#/documents/%d", reply))
		b.wait("the thread", `document.querySelectorAll('table.thread tbody tr').length === 2`)
		incl := eval[[]string](b, `[...document.querySelectorAll('table.thread tbody tr')].map(r => r.dataset.inclusive)`)
		if !slices.Equal(incl, []string{"false", "true"}) {
			t.Errorf("inclusive marks in date order = %v, want the parent contained and the reply inclusive", incl)
		}
		b.do("keep the inclusive messages", chromedp.Click(chromedp.CSS("#thread-inclusive")))
		if shown := eval[int](b, `[...document.querySelectorAll('table.thread tbody tr')].filter(r => !r.hidden).length`); shown != 1 {
			t.Errorf("%d messages shown with 'inclusive only', want 1", shown)
		}
		b.snapshot("thread")
		b.do("sign out", chromedp.Click(chromedp.CSS("#signout")))
		b.wait("the sign-in page", `document.body.dataset.view === 'signin'`)
	})

	step(t, "hostile names are text", func(t *testing.T) {
		b.t = t
		b.signIn(admin)
		b.goTo("#/search?q=onerror")
		b.wait("the memo", `document.querySelectorAll('table.search-results tbody tr').length === 1`)
		b.snapshot("search")
		name := eval[string](b, `document.querySelector('table.search-results tbody a').textContent`)
		if name != hostileName {
			t.Errorf("name shown = %q, want %q as text", name, hostileName)
		}
		if eval[bool](b, `window.__xss === 1 || !!document.querySelector('main img')`) {
			t.Error("a document name was parsed as markup")
		}
	})

	step(t, "place and release a hold", func(t *testing.T) {
		b.t = t
		b.goTo("#/holds")
		b.wait("the form to place a hold", `!!document.querySelector('#hold-form')`)
		b.do("place hold M-2",
			chromedp.SendKeys(chromedp.CSS("#h-matter"), "M-2"),
			chromedp.SendKeys(chromedp.CSS("#h-name"), "Audit 2026"),
			chromedp.SendKeys(chromedp.CSS("#h-reason"), "regulator's request"),
			chromedp.SendKeys(chromedp.CSS("#h-seeds"), fmt.Sprint(v3)),
			chromedp.Click(chromedp.CSS("#hold-form button[type=submit]")))
		b.wait("the new hold's page", `location.hash === '#/holds/M-2' && !!document.querySelector('#release-form')`)
		// The seed by its name, and every held document with why: v3 the
		// seed, the original and v2 as near-copies of it.
		b.wait("the held documents", `document.querySelectorAll('table.held tbody tr').length >= 3`)
		if seed := eval[string](b, `document.querySelector('#seeds li').textContent`); seed != "services-agreement-v3.txt" {
			t.Errorf("the seed is shown as %q, want its name", seed)
		}
		why := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('table.held tbody tr')].map(r => [r.cells[0].textContent, r.cells[1].textContent]))`)
		if why["services-agreement-v3.txt"] != "seed" || !strings.Contains(why["services-agreement.txt"], "of services-agreement-v3.txt") || !strings.Contains(why["services-agreement.txt"], "resemblance") {
			t.Errorf("why each document is held: %v", why)
		}
		b.snapshot("hold")
		// Placed by the signed-in token's person, its token id beside.
		if placed := eval[string](b, `document.querySelector('#hold').textContent`); !regexp.MustCompile(`Placed.*Browser [a-z-]+ \(token:[0-9a-f]{16}\)`).MatchString(placed) {
			t.Errorf("the hold page does not name who placed it: %q", placed)
		}
		var h policy.Hold
		if code, body := s.call(t, admin, "GET", "/api/v1/holds/M-2", nil, &h); code != http.StatusOK || h.Status != policy.HoldActive || len(h.Seeds) != 1 || int64(h.Seeds[0]) != v3 || h.Reason != "regulator's request" {
			t.Fatalf("hold placed in the UI, the API says %d %+v %s", code, h, body)
		}
		b.do("release it",
			chromedp.SendKeys(chromedp.CSS("#release-reason"), "audit closed"),
			chromedp.Click(chromedp.CSS("#release-form button[type=submit]")))
		b.wait("the release shown", `!document.querySelector('#release-form') && /released/.test(document.querySelector('#hold').textContent)`)
		if code, body := s.call(t, admin, "GET", "/api/v1/holds/M-2", nil, &h); code != http.StatusOK || h.Status != policy.HoldReleased || h.ReleaseReason != "audit closed" {
			t.Errorf("hold released in the UI, the API says %d %+v %s", code, h, body)
		}
	})

	step(t, "queue of 10000 flags", func(t *testing.T) {
		b.t = t
		ids := addBulkFlags(t, s.cfg, 10000)
		b.goTo("#/flags?status=open&kind=disposition-due&limit=100")
		var durations []float64
		last := int64(0)
		for page := 0; page < 5; page++ {
			b.wait("a full page", `document.body.dataset.flagsRendered === '100' && performance.getEntriesByName('flags-render').length === 1`)
			ms := eval[float64](b, `performance.getEntriesByName('flags-render')[0].duration`)
			durations = append(durations, ms)
			got := eval[[]int64](b, `[...document.querySelectorAll('#flags-table tbody tr')].map(r => Number(r.dataset.id))`)
			if len(got) != 100 || got[0] <= last || !sort.SliceIsSorted(got, func(i, j int) bool { return got[i] < got[j] }) {
				t.Fatalf("page %d: %d rows from %v, after %d", page+1, len(got), got[:min(3, len(got))], last)
			}
			last = got[len(got)-1]
			if rows := eval[int](b, `document.querySelectorAll('#flags-table tbody tr').length`); rows > 100 {
				t.Fatalf("page %d has %d rows", page+1, rows)
			}
			eval[chromedp.Void](b, `delete document.body.dataset.flagsRendered`)
			b.do("next page", chromedp.Click(chromedp.CSS("#next-page")))
		}
		b.wait("page 6", `document.body.dataset.flagsRendered === '100'`)
		// Previous goes back one page, not to the start.
		eval[chromedp.Void](b, `delete document.body.dataset.flagsRendered`)
		b.do("previous page", chromedp.Click(chromedp.CSS("#prev-page")))
		b.wait("page 5 again", fmt.Sprintf(`document.body.dataset.flagsRendered === '100' && Number(document.querySelector('#flags-table tbody tr:last-child').dataset.id) === %d`, last))
		sorted := slices.Clone(durations)
		slices.Sort(sorted)
		b.snapshot("queue")
		t.Logf("review queue with %d open flags: a page of 100 fetched and rendered in %.1f ms median (pages 1-5: %.1f ms)", len(ids), sorted[len(sorted)/2], durations)
	})
}

// step runs one part of a scenario; the parts depend on each other, so the
// first that fails ends the test.
func step(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

// addBulkFlags stores n open disposition flags straight in the policy
// store (as a retention run over n documents would) and returns their ids.
func addBulkFlags(t *testing.T, cfg daemon.Config, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	st, err := policysqlite.Open(ctx, cfg.PolicyPath())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	flags := make([]policy.Flag, n)
	for i := range flags {
		key := fmt.Sprintf("bulk/record-%05d.txt", i)
		flags[i] = policy.Flag{
			Kind:     policy.KindDispositionDue,
			Document: policy.DocRef{ID: index.DocID(1_000_000 + i), Name: fmt.Sprintf("record-%05d.txt", i), Source: "fs", Key: key},
			Object:   policy.Object{Source: "fs", Key: key, IndexKey: key},
			Rule:     "bulk-test",
			Evidence: policy.Evidence{Role: "selected", Due: now.Add(-24 * time.Hour), Action: "review"},
			Status:   policy.StatusOpen,
		}
	}
	added, err := st.AddFlags(ctx, flags, "browser-test", now)
	if err != nil {
		t.Fatalf("add %d flags: %v", n, err)
	}
	ids := make([]int64, len(added))
	for i, f := range added {
		ids[i] = f.ID
	}
	// They are test data: keep the notifier from sending 10,000 alerts.
	if err := st.MarkPublished(ctx, ids); err != nil {
		t.Fatal(err)
	}
	return ids
}
