package policy_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simdex/simdex/index"
	idxsqlite "github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/corpustest"
	"github.com/simdex/simdex/internal/pgdb"
	"github.com/simdex/simdex/internal/pgtest"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/policy"
	policypg "github.com/simdex/simdex/policy/postgres"
	"github.com/simdex/simdex/policy/sqlite"
)

// pgMain runs the tests under pgtest.Main, which stops the PostgreSQL
// server the replica tests start.
type pgMain struct{ m *testing.M }

func (p pgMain) Run() int { return pgtest.Main(p.m) }

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgMain{m},
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// corpus reads a document of the committed fixtures (testdata/corpora).
func corpus(t testing.TB, rel string) string {
	t.Helper()
	return string(corpustest.Read(t, rel))
}

// edit inserts a word at n random places.
func edit(text string, n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, seed))
	words := strings.Fields(text)
	for range n {
		p := r.IntN(len(words) + 1)
		words = append(words[:p], append([]string{"inserted"}, words[p:]...)...)
	}
	return strings.Join(words, " ")
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeEnforcer is an in-memory Object Lock: a set of held versions and a
// set of deleted ones.
type fakeEnforcer struct {
	mu       sync.Mutex
	versions map[string][]string // index key → versions
	held     map[string]bool     // index key@version
	deleted  map[string]bool
	failRead bool
	failHold bool // HoldAll fails, as S3 does when unreachable
}

func newFakeEnforcer() *fakeEnforcer {
	return &fakeEnforcer{versions: map[string][]string{}, held: map[string]bool{}, deleted: map[string]bool{}}
}

func (f *fakeEnforcer) HoldAll(_ context.Context, o policy.Object) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failHold {
		return nil, fmt.Errorf("connection refused")
	}
	vs := f.versions[o.IndexKey]
	if len(vs) == 0 {
		vs = []string{o.VersionID}
	}
	for _, v := range vs {
		f.held[o.IndexKey+"@"+v] = true
	}
	return vs, nil
}

func (f *fakeEnforcer) Held(_ context.Context, o policy.Object) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failRead {
		return false, fmt.Errorf("connection refused")
	}
	return f.held[o.IndexKey+"@"+o.VersionID], nil
}

func (f *fakeEnforcer) Delete(_ context.Context, o policy.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held[o.IndexKey+"@"+o.VersionID] {
		return policy.ErrLegalHold
	}
	f.deleted[o.IndexKey+"@"+o.VersionID] = true
	return nil
}

// publisher records alerts.
type publisher struct {
	mu     sync.Mutex
	alerts []notifier.Alert
	fail   bool
}

func (p *publisher) Notify(_ context.Context, a notifier.Alert) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail {
		return fmt.Errorf("outbox unavailable")
	}
	p.alerts = append(p.alerts, a)
	return nil
}

func (p *publisher) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.alerts)
}

// env is a real index over a real SQLite store, a policy store, and an
// engine with a fake clock.
type env struct {
	t     testing.TB
	ix    *index.Index
	st    policy.Store
	sq    *sqlite.Store // st on SQLite, else nil
	clock *clock
	enf   *fakeEnforcer
	pub   *publisher
	e     *policy.Engine
	cfg   policy.Config
}

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newEnv(t testing.TB, cfg policy.Config) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	opts := index.DefaultOptions()
	ist, err := idxsqlite.Open(ctx, filepath.Join(dir, "index.db"), idxsqlite.Options{Scheme: opts.Scheme(), Durability: idxsqlite.Normal})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(ctx, ist, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ix.Close()
		ist.Close()
	})
	en := &env{t: t, ix: ix, clock: &clock{t: epoch}, enf: newFakeEnforcer(), pub: &publisher{}, cfg: cfg}
	en.st, en.sq = openStore(t, dir)
	en.engine()
	return en
}

// onPostgres makes newEnv put the policy state in PostgreSQL instead of
// SQLite (TestEngineOnPostgres).
var onPostgres bool

// openStore opens the policy store of a test environment in dir, or on
// PostgreSQL when onPostgres is set; sq is the store on SQLite, else nil.
func openStore(t testing.TB, dir string) (st policy.Store, sq *sqlite.Store) {
	t.Helper()
	if onPostgres {
		pool, err := pgdb.Open(ctx, pgtest.DSN(t), 8)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		pst, err := policypg.New(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		return pst, nil
	}
	sq, err := sqlite.Open(ctx, filepath.Join(dir, "policy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return sq, sq
}

// engine (re)builds the engine from en.cfg.
func (en *env) engine() {
	en.t.Helper()
	e, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix),
		Enforcer: en.enf, Publisher: en.pub, Now: en.clock.Now, Workers: 2})
	if err != nil {
		en.t.Fatal(err)
	}
	if err := e.Sync(context.Background()); err != nil {
		en.t.Fatal(err)
	}
	en.e = e
}

// doc describes a test object in an S3 bucket.
type doc struct {
	bucket, key, version, text string
	mod                        time.Time
	meta                       map[string]string
}

// add indexes docs as S3 objects of connector "s3:main" and returns their ids.
func (en *env) add(docs ...doc) []index.DocID {
	en.t.Helper()
	ins := make([]index.Input, len(docs))
	for i, d := range docs {
		if d.bucket == "" {
			d.bucket = "records"
		}
		if d.version == "" {
			d.version = "v1"
		}
		if d.mod.IsZero() {
			d.mod = epoch.AddDate(-10, 0, 0)
		}
		ins[i] = index.Input{
			Doc: index.Doc{Key: "s3:main/" + d.bucket + "/" + d.key, VersionID: d.version, Name: d.key, Source: "s3:main",
				ModTime: d.mod, Origin: d.meta, MediaType: "text/plain", KeepVersions: true},
			RawSHA256: sha256.Sum256([]byte(d.text)), RawSize: int64(len(d.text)), Text: []byte(d.text), Parent: -1,
		}
	}
	res, err := en.ix.Add(context.Background(), ins)
	if err != nil {
		en.t.Fatal(err)
	}
	ids := make([]index.DocID, len(res))
	for i, r := range res {
		if r.Err != nil {
			en.t.Fatalf("add %s: %v", docs[i].key, r.Err)
		}
		ids[i] = r.ID
	}
	return ids
}

func (en *env) flags(f policy.FlagFilter) []policy.Flag {
	en.t.Helper()
	f.Limit = 10000
	fs, err := en.e.Flags(context.Background(), f)
	if err != nil {
		en.t.Fatal(err)
	}
	return fs
}

// byName maps flags by document name.
func byName(fs []policy.Flag) map[string]policy.Flag {
	out := map[string]policy.Flag{}
	for _, f := range fs {
		out[f.Document.Name] = f
	}
	return out
}

// auditCount counts the audit entries of action on object.
func auditCount(t testing.TB, en *env, action, object string) int {
	t.Helper()
	n := 0
	if err := en.st.Audit(ctx, 1, func(a policy.AuditEntry) error {
		if a.Action == action && a.Object == object {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
