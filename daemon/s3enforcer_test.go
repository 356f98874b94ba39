package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/connectors/s3"
	"github.com/simdex/simdex/index"
	idxsqlite "github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/corpustest"
	"github.com/simdex/simdex/internal/miniotest"
	"github.com/simdex/simdex/policy"
	"github.com/simdex/simdex/policy/sqlite"
)

// These tests run the policy engine with the daemon's s3Enforcer against
// a real MinIO with Object Lock. policyEnv is a real index over a real
// SQLite store, a policy store, and an engine with a fake clock.
type policyEnv struct {
	t     testing.TB
	ix    *index.Index
	st    *sqlite.Store
	clock *fakeClock
	e     *policy.Engine
	cfg   policy.Config
}

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func newPolicyEnv(t testing.TB, cfg policy.Config) *policyEnv {
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
	st, err := sqlite.Open(ctx, filepath.Join(dir, "policy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		ix.Close()
		ist.Close()
	})
	en := &policyEnv{t: t, ix: ix, st: st, clock: &fakeClock{t: epoch}, cfg: cfg}
	if en.e, err = policy.New(policy.Options{Config: cfg, Store: st, Index: policy.IndexOf(ix), Now: en.clock.Now, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if err := en.e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return en
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// s3Doc describes a test object in an S3 bucket.
type s3Doc struct {
	bucket, key, version, text string
	mod                        time.Time
}

// add indexes docs as S3 objects of connector "s3:main" and returns their ids.
func (en *policyEnv) add(docs ...s3Doc) []index.DocID {
	en.t.Helper()
	ins := make([]index.Input, len(docs))
	for i, d := range docs {
		if d.bucket == "" {
			d.bucket = "records"
		}
		ins[i] = index.Input{
			Doc: index.Doc{Key: "s3:main/" + d.bucket + "/" + d.key, VersionID: d.version, Name: d.key, Source: "s3:main",
				ModTime: d.mod, MediaType: "text/plain", KeepVersions: true},
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

func (en *policyEnv) flags(f policy.FlagFilter) []policy.Flag {
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

// retentionConfig is policy's test configuration: records kept seven
// years and deleted, archive thirty and reviewed, tax ten at least.
func retentionConfig() policy.Config {
	c := policy.DefaultConfig()
	c.Retention = []policy.RetentionRule{
		{Name: "records-7y", Selector: policy.Selector{Bucket: "records"}, Period: "7y", Action: policy.ActionDelete},
		{Name: "archive-30y", Selector: policy.Selector{Bucket: "archive"}, Period: "30y", Action: policy.ActionReview},
	}
	c.KeepAtLeast = []policy.KeepRule{{Name: "tax-10y", Selector: policy.Selector{Prefix: "tax/"}, Period: "10y"}}
	c.ReleaseGrace = 72 * time.Hour
	return c
}

// licences reads SPDX licence texts from the committed fixtures.
func licences(t testing.TB) map[string]string {
	out := map[string]string{}
	for _, n := range []string{"Apache-2.0", "GPL-3.0-only", "MPL-2.0", "EPL-2.0"} {
		out[n] = string(corpustest.Read(t, "spdx/text/"+n+".txt"))
	}
	return out
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

// randomText is n random words.
func randomText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%x", r.Uint32()%200000)
	}
	return b.String()
}

// lockedBucket is a real MinIO with an Object Lock bucket "records" and a
// connector client for it named s3:main, as the daemon names them.
type lockedBucket struct {
	ms     *miniotest.Server
	mc     *minio.Client
	client *s3.Client
}

func startLocked(t *testing.T) *lockedBucket {
	t.Helper()
	ms := miniotest.Start(t, miniotest.Options{}) // fails, never skips, without MinIO
	ms.MakeBucket(t, "records", true, true)
	c, err := s3.NewClient(s3.Config{Name: "s3:main", Endpoint: ms.Endpoint(), AccessKey: ms.AccessKey(),
		SecretKey: ms.SecretKey(), Bucket: "records", Versioned: true})
	if err != nil {
		t.Fatal(err)
	}
	return &lockedBucket{ms: ms, mc: ms.Client(t), client: c}
}

func (b *lockedBucket) enforcer() *s3Enforcer {
	return &s3Enforcer{Client: func(source, bucket string) (*s3.Client, bool) {
		return b.client, source == "s3:main" && bucket == "records"
	}}
}

// put stores an object version and returns the doc to index for it.
func (b *lockedBucket) put(t *testing.T, key, text string) s3Doc {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	info, err := b.mc.PutObject(c, "records", key, strings.NewReader(text), int64(len(text)), minio.PutObjectOptions{ContentType: "text/plain"})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return s3Doc{key: key, version: info.VersionID, text: text, mod: epoch.AddDate(-8, 0, 0)}
}

func (b *lockedBucket) held(t *testing.T, key, version string) bool {
	t.Helper()
	on, err := b.client.LegalHold(t.Context(), key, version)
	if err != nil {
		t.Fatalf("legal hold of %s@%s: %v", key, version, err)
	}
	return on
}

func (b *lockedBucket) exists(t *testing.T, key, version string) bool {
	t.Helper()
	_, err := b.mc.StatObject(t.Context(), "records", key, minio.StatObjectOptions{VersionID: version})
	if err == nil {
		return true
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.Code == "NoSuchVersion" || resp.Code == "NoSuchKey") {
		return false
	}
	t.Fatalf("stat %s@%s: %v", key, version, err)
	return false
}

func TestMinIOHoldEveryVersionOfEveryNearCopy(t *testing.T) {
	ctx := t.Context()
	tx := licences(t)
	apache := tx["Apache-2.0"]
	b := startLocked(t)
	en := newPolicyEnv(t, retentionConfig())
	e, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix), Enforcer: b.enforcer(), Now: en.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	en.e = e

	seed := b.put(t, "legal/seed.txt", apache)
	copyV1 := b.put(t, "inbox/copy.txt", edit(apache, 10, 1))
	copyV2 := b.put(t, "inbox/copy.txt", edit(apache, 12, 2)) // a second version of the copy
	unrelated := b.put(t, "inbox/unrelated.txt", tx["GPL-3.0-only"])
	ids := en.add(seed, copyV1, copyV2, unrelated)

	_, p, err := e.CreateHold(ctx, policy.HoldSpec{Matter: "M-S3", Seeds: ids[:1], Scope: policy.DefaultScope(), Mode: policy.ModeHold}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.EnforceErrors) > 0 {
		t.Fatalf("enforcement errors: %v", p.EnforceErrors)
	}
	for _, d := range []s3Doc{seed, copyV1, copyV2} {
		if !b.held(t, d.key, d.version) {
			t.Errorf("%s@%s: legal hold off", d.key, d.version)
		}
	}
	if b.held(t, unrelated.key, unrelated.version) {
		t.Error("unrelated document: legal hold on")
	}

	// A copy uploaded later is held as it is indexed.
	later := b.put(t, "uploads/later.txt", edit(apache, 6, 5))
	lid := en.add(later)
	if _, err := e.CheckIngested(ctx, lid); err != nil {
		t.Fatal(err)
	}
	if !b.held(t, later.key, later.version) {
		t.Error("later copy: legal hold off")
	}

	// Execute refuses a version under S3 legal hold, even with no hold in
	// the store (set by someone else), and deletes exactly one version of
	// an object that is not held.
	other := b.put(t, "records/other.txt", tx["MPL-2.0"])
	oid := en.add(other)
	if err := b.client.SetLegalHold(ctx, other.key, other.version); err != nil {
		t.Fatal(err)
	}
	free1 := b.put(t, "records/free.txt", tx["EPL-2.0"])
	free2 := b.put(t, "records/free.txt", tx["EPL-2.0"]+"\nsecond version")
	fid := en.add(free1)
	if _, err := e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	flagOf := func(id index.DocID) policy.Flag {
		fs := en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue, Document: id})
		if len(fs) != 1 {
			t.Fatalf("document %d: %d disposition flags", id, len(fs))
		}
		if _, err := e.Approve(ctx, fs[0].ID, "carol", "due"); err != nil {
			t.Fatal(err)
		}
		return fs[0]
	}
	of := flagOf(oid[0])
	if _, err := e.Execute(ctx, of.ID, "carol"); !errors.Is(err, policy.ErrLegalHold) {
		t.Fatalf("execute under S3 legal hold: %v", err)
	}
	if !b.exists(t, other.key, other.version) {
		t.Fatal("held version deleted")
	}
	ff := flagOf(fid[0])
	if _, err := e.Execute(ctx, ff.ID, "carol"); err != nil {
		t.Fatalf("execute free version: %v", err)
	}
	if b.exists(t, free1.key, free1.version) {
		t.Error("approved version still exists")
	}
	if !b.exists(t, free2.key, free2.version) {
		t.Error("another version of the key was deleted")
	}
	// Nothing held was deleted along the way.
	for _, d := range []s3Doc{seed, copyV1, copyV2, later} {
		if !b.exists(t, d.key, d.version) {
			t.Errorf("%s@%s deleted", d.key, d.version)
		}
	}
}

// TestMinIORaceDeletionAgainstHold: deletions and hold placements of the
// same versions at the same time, against real Object Lock.
func TestMinIORaceDeletionAgainstHold(t *testing.T) {
	ctx := t.Context()
	b := startLocked(t)
	en := newPolicyEnv(t, retentionConfig())
	e, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix), Enforcer: b.enforcer(), Now: en.clock.Now, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 24
	var docs []s3Doc
	for i := range n {
		docs = append(docs, b.put(t, fmt.Sprintf("records/r%03d.txt", i), randomText(uint64(i+1000), 300)))
	}
	ids := en.add(docs...)
	if _, err := e.Evaluate(ctx, false); err != nil {
		t.Fatal(err)
	}
	flags := make([]policy.Flag, n)
	for i, id := range ids {
		fs := en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue, Document: id})
		if len(fs) != 1 {
			t.Fatalf("doc %d: %d flags", id, len(fs))
		}
		if flags[i], err = e.Approve(ctx, fs[0].ID, "carol", "due"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _, _ = e.CreateHold(ctx, policy.HoldSpec{Matter: fmt.Sprintf("R-%d", i), Seeds: []index.DocID{ids[i]}, Scope: policy.DefaultScope(), Mode: policy.ModeHold}, "alice")
		}()
		go func() {
			defer wg.Done()
			_, _ = e.Execute(ctx, flags[i].ID, "carol")
		}()
	}
	wg.Wait()
	order := auditOrder(t, en)
	deleted := 0
	for i, d := range docs {
		gone := !b.exists(t, d.key, d.version)
		hold, claim := order["hold:"+fmt.Sprintf("R-%d", i)], order[fmt.Sprintf("flag:%d", flags[i].ID)]
		if gone {
			deleted++
			if claim == 0 || hold != 0 && hold < claim {
				t.Errorf("%s: deleted although its hold (audit %d) came before the deletion claim (audit %d)", d.key, hold, claim)
			}
		} else if !b.held(t, d.key, d.version) {
			t.Errorf("%s: neither deleted nor held", d.key)
		}
	}
	t.Logf("%d of %d versions deleted before their hold, the rest held", deleted, n)
}

// auditOrder maps objects to the sequence number of their hold.create or
// delete.claim entry (the last claim wins).
func auditOrder(t testing.TB, en *policyEnv) map[string]int64 {
	out := map[string]int64{}
	err := en.st.Audit(t.Context(), 1, func(a policy.AuditEntry) error {
		switch a.Action {
		case policy.AuditHoldCreate, policy.AuditDeleteClaim:
			out[a.Object] = a.Seq
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMinIOHoldOnBucketWithoutObjectLock: a hold reaching objects of a
// bucket made without Object Lock is a configuration error, not a
// transient failure. The documents stay held in the store (nothing deletes
// them), each is flagged hold-unenforced once, naming the bucket, for
// reviewers; the ingest check succeeds (its event is settled, not retried
// five times and dead-lettered), and neither redeliveries nor hold sweeps
// add audit entries or flags.
func TestMinIOHoldOnBucketWithoutObjectLock(t *testing.T) {
	ctx := t.Context()
	tx := licences(t)
	apache := tx["Apache-2.0"]
	ms := miniotest.Start(t, miniotest.Options{}) // fails, never skips, without MinIO
	ms.MakeBucket(t, "records", true, false)      // versioned, no Object Lock
	client, err := s3.NewClient(s3.Config{Name: "s3:main", Endpoint: ms.Endpoint(), AccessKey: ms.AccessKey(),
		SecretKey: ms.SecretKey(), Bucket: "records", Versioned: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &lockedBucket{ms: ms, mc: ms.Client(t), client: client}
	en := newPolicyEnv(t, retentionConfig())
	e, err := policy.New(policy.Options{Config: en.cfg, Store: en.st, Index: policy.IndexOf(en.ix), Enforcer: b.enforcer(), Now: en.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	en.e = e
	seed := b.put(t, "legal/seed.txt", apache)
	copyV1 := b.put(t, "inbox/copy.txt", edit(apache, 10, 1))
	ids := en.add(seed, copyV1)

	_, p, err := e.CreateHold(ctx, policy.HoldSpec{Matter: "M-NL", Seeds: ids[:1], Scope: policy.DefaultScope(), Mode: policy.ModeHold}, "alice")
	if err != nil {
		t.Fatalf("create hold: %v", err)
	}
	if len(p.EnforceErrors) != 0 || len(p.Unenforceable) != 2 || p.Enforced != 0 {
		t.Errorf("placement %+v: want both objects unenforceable, no retried errors", p)
	}
	unenforced := func() map[string]policy.Flag {
		return byName(en.flags(policy.FlagFilter{Kind: policy.KindHoldUnenforced, Matter: "M-NL"}))
	}
	audit := func() (n int) {
		t.Helper()
		err := en.st.Audit(ctx, 1, func(a policy.AuditEntry) error {
			if a.Action != policy.AuditRun {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const note = "hold could not be enforced in S3: object lock not enabled on bucket records"
	for _, name := range []string{seed.key, copyV1.key} {
		if f, ok := unenforced()[name]; !ok || f.Evidence.Note != note || !strings.Contains(f.Alert().Summary, note) {
			t.Errorf("%s: hold-unenforced flag %+v, want one noting %q", name, f, note)
		}
	}
	afterPlacement := audit()

	// A near-copy uploaded later: the check succeeds, the copy is held in
	// the store and flagged once, however often its event is redelivered.
	later := b.put(t, "uploads/later.txt", edit(apache, 6, 5))
	lid := en.add(later)
	for i := range 5 {
		if err := e.Indexed(ctx, lid); err != nil {
			t.Fatalf("delivery %d: %v, want the event settled", i+1, err)
		}
	}
	if f, ok := unenforced()[later.key]; !ok || f.Evidence.Note != note {
		t.Errorf("later copy: hold-unenforced flag %+v", f)
	}
	held, err := e.HeldDocuments(ctx, "M-NL")
	if err != nil || !slices.Contains(held, lid[0]) || !slices.Contains(held, ids[1]) {
		t.Errorf("held documents %v, %v: every copy must stay held in the store", held, err)
	}
	afterIngest := audit()
	// A hold-match, a duplicate-upload and a hold-unenforced flag, each
	// audited once.
	if afterIngest != afterPlacement+3 {
		t.Errorf("audit entries %d after placement, %d after five deliveries of one copy: want 3 more", afterPlacement, afterIngest)
		_ = en.st.Audit(ctx, 1, func(a policy.AuditEntry) error {
			t.Logf("%d %s %s %s %s", a.Seq, a.Actor, a.Action, a.Object, a.Reason)
			return nil
		})
	}
	// Two sweeps try again (Object Lock may be enabled meanwhile), and
	// record nothing new.
	for range 2 {
		if _, err := e.Evaluate(ctx, false); err != nil {
			t.Fatalf("evaluate: %v", err)
		}
	}
	if n := audit(); n != afterIngest {
		t.Errorf("audit entries %d after two sweeps, want %d", n, afterIngest)
	}
	if n := len(unenforced()); n != 3 {
		t.Errorf("%d hold-unenforced flags, want 3", n)
	}
	// The store's hold still refuses deletion of a copy due for disposition.
	fs := en.flags(policy.FlagFilter{Kind: policy.KindDispositionDue, Document: ids[1]})
	if len(fs) != 0 {
		t.Errorf("a held copy was flagged for disposition: %+v", fs)
	}
	if !b.exists(t, copyV1.key, copyV1.version) {
		t.Error("held copy deleted")
	}
}
