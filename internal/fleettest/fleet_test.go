package fleettest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/simdex/simdex/api"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/notifier"
	"github.com/simdex/simdex/policy"
)

// Environment variables that size and select the fleet test.
const (
	// EnvUploads is the number of uploads (default defaultUploads; the
	// issue's run uses 10000).
	EnvUploads = "SIMDEX_FLEET_UPLOADS"
	// EnvVariants lists the variants to run, comma-separated (default:
	// those enabled in variants), or "all".
	EnvVariants = "SIMDEX_FLEET_VARIANTS"
)

// defaultUploads keeps `make test` within a few minutes on two cores.
const defaultUploads = 2000

// groupSize is the number of objects per near-copy group: a seed and
// its edited copies.
const groupSize = 10

// variant is one shape of fleet the test runs on.
type variant struct {
	name     string
	replicas int
	driver   Driver
	// enabled variants run by default; the others only when named in
	// EnvVariants.
	enabled bool
}

var variants = []variant{
	// One replica on its own SQLite files: the kills hit the only
	// replica and a NATS node.
	{name: "sqlite-1", replicas: 1, driver: SQLite, enabled: true},
	// Three replicas sharing one PostgreSQL database.
	{name: "postgres-3", replicas: 3, driver: Postgres, enabled: true},
}

// TestFleetKillsLoseNothing uploads near-copy groups to MinIO while a
// replica is killed with SIGKILL and a NATS node is killed, both started
// again later, then checks every replica: every object indexed exactly
// once, every hold-match flag raised once, an intact audit chain without
// duplicates, and the same answers from all.
func TestFleetKillsLoseNothing(t *testing.T) {
	uploads := defaultUploads
	if v := os.Getenv(EnvUploads); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < groupSize {
			t.Fatalf("%s=%q: want a number of at least %d", EnvUploads, v, groupSize)
		}
		uploads = n
	}
	for _, v := range variants {
		if v.chosen(os.Getenv(EnvVariants)) {
			t.Run(v.name, func(t *testing.T) { runKills(t, v, uploads) })
		}
	}
}

// chosen reports whether v runs when EnvVariants is list: named in it,
// or enabled when list is empty, or always when it is "all".
func (v variant) chosen(list string) bool {
	switch list {
	case "":
		return v.enabled
	case "all":
		return true
	}
	return slices.Contains(strings.Split(list, ","), v.name)
}

func runKills(t *testing.T, v variant, uploads int) {
	start := time.Now()
	step := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }
	f := Start(t, Options{Replicas: v.replicas, Driver: v.driver, Reconcile: "@every 20s"})
	step("fleet ready")
	corpus := NewCorpus(30, uploads, groupSize)
	mc := f.MinIO.Client(t)

	// Seeds first, then a hold on every seed, spread over a few matters
	// and placed through the last replica.
	upload(t, mc, corpus.Seeds(), nil)
	waitDocuments(t, f, int64(len(corpus.Groups)))
	step("seeds indexed")
	flaggedAtPlacement := placeHolds(t, f.Replicas[len(f.Replicas)-1], corpus)
	step("holds placed")

	// The copies, with the kills in the middle: the replica at a quarter,
	// at two fifths a NATS node that replicas are connected to (MinIO's,
	// the first, excepted: its NATS target takes a single address); the
	// replica comes back while that node is still down.
	victim, node := f.Replicas[0], 1
	if on := slices.DeleteFunc(f.NATS.ClientsNamed(t, "simdex"), func(i int) bool { return i == 0 }); len(on) > 0 {
		node = on[0]
	}
	upload(t, mc, corpus.Copies(), func(done, total int) {
		switch done {
		case total / 4:
			victim.Kill()
			step("replica 0 killed")
		case total * 2 / 5:
			f.NATS.Kill(node)
			step(fmt.Sprintf("NATS node %s killed", f.NATS.Nodes[node].Name))
		case total * 3 / 5:
			victim.Restart(t)
			step("replica 0 restarted")
		case total * 4 / 5:
			f.NATS.Restart(t, node)
			step("NATS node restarted")
		}
	})
	step("uploads done")
	waitDocuments(t, f, int64(corpus.Len()))
	step("every object indexed")
	f.WaitDrained(t, 5*time.Minute)
	step("every event handled")
	// The sweep is the system of record for hold matches: it catches any
	// the ingest check missed in a crash between commit and check.
	var run policy.Run
	if err := f.Replicas[0].Post("/api/v1/policy/evaluate", nil, &run); err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	step(fmt.Sprintf("sweep: %d hold matches added", run.HoldMatches))

	checkIndexedOnce(t, f, corpus)
	step("indexed once")
	checkFlags(t, f, corpus, flaggedAtPlacement)
	step("flags")
	checkAudit(t, f)
	step("audit")
	checkAlerts(t, f)
	step("alerts and dead letters")
	checkSameAnswers(t, f, corpus)
	step("same answers")
	for name, r := range f.NATS.Replicas(t) {
		if r != len(f.NATS.Nodes) {
			t.Errorf("stream %s has %d replicas after the run, want %d", name, r, len(f.NATS.Nodes))
		}
	}
}

// upload puts objs from 8 uploaders, calling between(done, total) (when
// not nil) in order after each object is handed out.
func upload(t *testing.T, mc *minio.Client, objs []Object, between func(done, total int)) {
	t.Helper()
	var wg sync.WaitGroup
	jobs := make(chan Object)
	for range 8 {
		wg.Go(func() {
			for o := range jobs {
				put(t, mc, o)
			}
		})
	}
	for i, o := range objs {
		if between != nil {
			between(i, len(objs))
		}
		jobs <- o
	}
	close(jobs)
	wg.Wait()
}

// put uploads o, retrying while MinIO reports errors (its NATS target
// briefly without a stream leader, say), unless the failed attempt stored
// the object after all: a second version would be a second document.
func put(t *testing.T, mc *minio.Client, o Object) {
	sum := md5.Sum([]byte(o.Body))
	etag := hex.EncodeToString(sum[:])
	err := poll(time.Minute, nil, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := mc.PutObject(ctx, Bucket, o.Key, strings.NewReader(o.Body), int64(len(o.Body)),
			minio.PutObjectOptions{ContentType: "text/plain"})
		if err != nil {
			if info, serr := mc.StatObject(ctx, Bucket, o.Key, minio.StatObjectOptions{}); serr == nil && info.ETag == etag {
				return nil
			}
		}
		return err
	})
	if err != nil {
		t.Errorf("put %s: %v", o.Key, err)
	}
}

// waitDocuments waits until every replica's index holds at least n
// documents.
func waitDocuments(t *testing.T, f *Fleet, n int64) {
	t.Helper()
	for _, r := range f.Replicas {
		err := poll(10*time.Minute, nil, func() error {
			var st index.Stats
			if err := r.Get("/api/v1/stats", &st); err != nil {
				return err
			}
			if st.Documents < n {
				return fmt.Errorf("replica %d holds %d documents of %d", r.Index, st.Documents, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// docKey is the index key of an object of the fleet's bucket.
func docKey(objectKey string) string {
	return "s3:" + Connector + "/" + Bucket + "/" + objectKey
}

// matterOf is the matter that holds group g's seed.
func matterOf(g int) string { return fmt.Sprintf("M-%02d", g%10) }

// placeHolds places one hold per matter on the seeds of its groups and
// returns how many documents the placements flagged.
func placeHolds(t *testing.T, r *Replica, c Corpus) int {
	t.Helper()
	seeds := map[string][]string{}
	for _, o := range c.Seeds() {
		seeds[matterOf(o.Group)] = append(seeds[matterOf(o.Group)], docKey(o.Key))
	}
	flagged := 0
	for matter, keys := range seeds {
		var out api.HoldResponse
		req := api.HoldRequest{Matter: matter, Reason: "fleet test", SeedKeys: keys, Mode: "report"}
		if err := r.Post("/api/v1/holds", req, &out); err != nil {
			t.Fatalf("place hold %s: %v", matter, err)
		}
		if out.Placement.Seeds != len(keys) {
			t.Fatalf("hold %s: %d seeds placed, want %d", matter, out.Placement.Seeds, len(keys))
		}
		flagged += out.Placement.Flagged
	}
	return flagged
}

// checkIndexedOnce checks that every replica counts exactly the uploads
// and finds exactly one version of every key.
func checkIndexedOnce(t *testing.T, f *Fleet, c Corpus) {
	t.Helper()
	for _, r := range f.Replicas {
		var st index.Stats
		if err := r.Get("/api/v1/stats", &st); err != nil {
			t.Fatal(err)
		}
		if st.Documents != int64(c.Len()) || st.Failed != 0 {
			t.Errorf("replica %d: %d documents (%d failed), want exactly %d", r.Index, st.Documents, st.Failed, c.Len())
		}
		var mu sync.Mutex
		var wrong []string
		objs := slices.Concat(c.Groups...)
		parallel(len(objs), func(i int) {
			var out struct {
				Documents []api.Document `json:"documents"`
			}
			key := docKey(objs[i].Key)
			err := r.Get("/api/v1/documents?key="+url.QueryEscape(key), &out)
			if err == nil && len(out.Documents) == 1 {
				return
			}
			mu.Lock()
			wrong = append(wrong, fmt.Sprintf("%s: %d versions (%v)", key, len(out.Documents), err))
			mu.Unlock()
		})
		if len(wrong) > 0 {
			t.Errorf("replica %d: %d keys not indexed exactly once, e.g. %s", r.Index, len(wrong), wrong[0])
		}
	}
}

// allFlags lists every flag r shows, oldest first.
func allFlags(t *testing.T, r *Replica) []policy.FlagView {
	t.Helper()
	var all []policy.FlagView
	for after := int64(0); ; {
		var page struct {
			Flags []policy.FlagView `json:"flags"`
		}
		if err := r.Get(fmt.Sprintf("/api/v1/flags?after=%d&limit=10000", after), &page); err != nil {
			t.Fatalf("list flags: %v", err)
		}
		if len(page.Flags) == 0 {
			return all
		}
		all = append(all, page.Flags...)
		after = page.Flags[len(page.Flags)-1].ID
	}
}

// checkFlags checks that every copy has exactly one hold-match flag, in
// its group's matter; that the only other flags are those the placements
// raised on seeds; and that no flag is raised twice.
func checkFlags(t *testing.T, f *Fleet, c Corpus, flaggedAtPlacement int) {
	t.Helper()
	group := map[string]Object{}
	for _, o := range slices.Concat(c.Groups...) {
		group[docKey(o.Key)] = o
	}
	for _, r := range f.Replicas {
		seen := map[string]int{}
		copies, seeds := 0, 0
		for _, fl := range allFlags(t, r) {
			id := fmt.Sprintf("%s %s %s %s", fl.Kind, fl.Key, fl.Matter, fl.Rule)
			if seen[id]++; seen[id] == 2 {
				t.Errorf("replica %d: flag raised twice: %s", r.Index, id)
			}
			o, ok := group[fl.Key]
			switch {
			case fl.Kind != policy.KindHoldMatch || !ok:
				t.Errorf("replica %d: unexpected flag %s", r.Index, id)
			case fl.Matter != matterOf(o.Group):
				t.Errorf("replica %d: %s flagged for %s, want %s", r.Index, fl.Key, fl.Matter, matterOf(o.Group))
			case o.Copy == 0:
				seeds++
			default:
				copies++
			}
		}
		if want := c.Len() - len(c.Groups); copies != want {
			t.Errorf("replica %d: %d copies flagged, want %d", r.Index, copies, want)
		}
		if seeds != flaggedAtPlacement {
			t.Errorf("replica %d: %d seeds flagged, the placements flagged %d", r.Index, seeds, flaggedAtPlacement)
		}
	}
}

// allAudit lists r's whole audit log.
func allAudit(t *testing.T, r *Replica) []policy.AuditEntry {
	t.Helper()
	var all []policy.AuditEntry
	for after := int64(0); ; {
		var page struct {
			Entries []policy.AuditEntry `json:"entries"`
		}
		if err := r.Get(fmt.Sprintf("/api/v1/audit?after=%d&limit=10000", after), &page); err != nil {
			t.Fatalf("read audit log: %v", err)
		}
		if len(page.Entries) == 0 {
			return all
		}
		all = append(all, page.Entries...)
		after = page.Entries[len(page.Entries)-1].Seq
	}
}

// checkAudit checks every replica's audit log: its chain verifies, its
// sequence has no gap or repeat, and no hold or flag is recorded twice.
func checkAudit(t *testing.T, f *Fleet) {
	t.Helper()
	for _, r := range f.Replicas {
		var v api.AuditVerifyResponse
		if err := r.Post("/api/v1/audit/verify", nil, &v); err != nil || !v.Intact {
			t.Errorf("replica %d: audit verify: %v %+v", r.Index, err, v)
		}
		entries := allAudit(t, r)
		once := map[string]bool{}
		for i, e := range entries {
			if e.Seq != int64(i+1) {
				t.Errorf("replica %d: audit entry %d has sequence %d", r.Index, i+1, e.Seq)
				break
			}
			if e.Action != policy.AuditFlagRaise && e.Action != policy.AuditHoldCreate {
				continue
			}
			id := e.Action + " " + e.Object + " " + string(e.Details)
			if once[id] {
				t.Errorf("replica %d: audit entry twice: %s", r.Index, id)
			}
			once[id] = true
		}
	}
}

// checkAlerts checks that every flag's alert was delivered exactly once
// on every channel, and that no event was dead-lettered.
func checkAlerts(t *testing.T, f *Fleet) {
	t.Helper()
	for _, r := range f.Replicas {
		flags := len(allFlags(t, r))
		var out struct {
			Deliveries []notifier.Delivery `json:"deliveries"`
		}
		err := poll(2*time.Minute, nil, func() error {
			if err := r.Get(fmt.Sprintf("/api/v1/deliveries?limit=%d", 2*flags+100), &out); err != nil {
				return err
			}
			delivered := 0
			for _, d := range out.Deliveries {
				if d.Status == notifier.StatusDelivered {
					delivered++
				}
			}
			if delivered < flags {
				return fmt.Errorf("replica %d: %d of %d deliveries delivered", r.Index, delivered, len(out.Deliveries))
			}
			return nil
		})
		if err != nil {
			t.Errorf("alerts: %v", err)
		}
		once := map[string]bool{}
		for _, d := range out.Deliveries {
			id := d.Channel + " " + d.AlertID
			if once[id] || d.Status != notifier.StatusDelivered {
				t.Errorf("replica %d: delivery %d of %s: status %s, seen before: %v", r.Index, d.ID, id, d.Status, once[id])
			}
			once[id] = true
		}
		if len(out.Deliveries) != flags {
			t.Errorf("replica %d: %d deliveries for %d flags on the one channel", r.Index, len(out.Deliveries), flags)
		}
		var dl struct {
			DeadLetters []api.DeadLetter `json:"deadletters"`
		}
		if err := r.Get("/api/v1/deadletters?limit=10", &dl); err != nil || len(dl.DeadLetters) > 0 {
			t.Errorf("replica %d: dead letters: %v %+v", r.Index, err, dl.DeadLetters)
		}
	}
}

// checkSameAnswers asks every replica the same questions and compares:
// stats, the flags, the audit log's head, and "all versions" of up to 50
// seeds, which must be exactly the seed's group.
func checkSameAnswers(t *testing.T, f *Fleet, c Corpus) {
	t.Helper()
	answers := make([]string, len(f.Replicas))
	for i, r := range f.Replicas {
		var b strings.Builder
		var st index.Stats
		if err := r.Get("/api/v1/stats", &st); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "stats %+v\n", st)
		for _, fl := range allFlags(t, r) {
			fmt.Fprintf(&b, "flag %d %s %s %s\n", fl.ID, fl.Kind, fl.Key, fl.Matter)
		}
		audit := allAudit(t, r)
		fmt.Fprintf(&b, "audit %d %s\n", len(audit), audit[len(audit)-1].Hash)
		for _, o := range c.Seeds()[:min(50, len(c.Groups))] {
			fmt.Fprintf(&b, "similar %s: %s\n", o.Key, similarKeys(t, r, o, c))
		}
		answers[i] = b.String()
	}
	for i := 1; i < len(answers); i++ {
		if answers[i] != answers[0] {
			t.Errorf("replica %d answers otherwise than replica 0:\n%s\nreplica 0:\n%s", i, answers[i], answers[0])
		}
	}
}

// similarKeys returns the keys "all versions" of seed o finds on r,
// sorted, checking they are exactly the other members of its group.
func similarKeys(t *testing.T, r *Replica, o Object, c Corpus) string {
	t.Helper()
	var docs struct {
		Documents []api.Document `json:"documents"`
	}
	if err := r.Get("/api/v1/documents?key="+url.QueryEscape(docKey(o.Key)), &docs); err != nil || len(docs.Documents) != 1 {
		t.Fatalf("replica %d: document %s: %v (%d versions)", r.Index, o.Key, err, len(docs.Documents))
	}
	var sim struct {
		Matches []api.Match `json:"matches"`
	}
	if err := r.Get(fmt.Sprintf("/api/v1/documents/%d/similar", docs.Documents[0].ID), &sim); err != nil {
		t.Fatalf("replica %d: similar of %s: %v", r.Index, o.Key, err)
	}
	var got, want []string
	for _, m := range sim.Matches {
		got = append(got, m.Key)
	}
	for _, m := range c.Groups[o.Group][1:] {
		want = append(want, docKey(m.Key))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("replica %d: all versions of %s = %v, want its group %v", r.Index, o.Key, got, want)
	}
	return strings.Join(got, " ")
}

// parallel calls do(i) for every i below n from 8 goroutines.
func parallel(n int, do func(i int)) {
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				do(i)
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}
