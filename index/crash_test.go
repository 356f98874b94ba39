package index_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/index/sqlite"
	"github.com/simdex/simdex/internal/corpustest"
)

const crashEnv = "SIMDEX_TEST_CRASH_WRITER"

// crashBulkEnv makes the crash test's writer a bulk load (simdex scan's
// options): postings and band shares deferred.
const crashBulkEnv = "SIMDEX_TEST_CRASH_BULK"

// TestMain turns the test binary into the crash test's writer when asked.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		crashWriter(path)
		return
	}
	if path := os.Getenv(buildEnv); path != "" {
		n, _ := strconv.Atoi(os.Getenv("SIMDEX_TEST_BUILD_N"))
		if err := buildBenchIndex(path, n); err != nil {
			fmt.Fprintln(os.Stderr, "build benchmark index:", err)
			os.Exit(1)
		}
		return
	}
	goleak.VerifyTestMain(m)
}

// crashWriter adds families of documents from several goroutines forever,
// printing the key of each one the index acknowledged, until killed.
func crashWriter(path string) {
	ctx := context.Background()
	opts := index.DefaultOptions()
	opts.KeepText = true // texts share pieces: their blocks must survive too
	bulk := os.Getenv(crashBulkEnv) != ""
	sopts := sqlite.Options{Scheme: opts.Scheme(), Durability: sqlite.Full}
	var st index.Store
	var err error
	if bulk {
		st, err = sqlite.OpenLoader(ctx, path, sopts)
	} else {
		st, err = sqlite.Open(ctx, path, sopts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	ix, err := index.New(ctx, st, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	text, err := os.ReadFile(corpustest.Path("spdx/text/Apache-2.0.txt"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key := fmt.Sprintf("g%d-%d", g, i)
				parent := input(key, fmt.Sprintf("%s\n%s", text, key))
				child := input(key+"!/attachment", fmt.Sprintf("attachment of %s\n%s", key, text[:2000]))
				child.Parent = 0
				if _, err := ix.Add(ctx, []index.Input{parent, child}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintln(out, key)
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// killWriter runs crashWriter on the index at path (a bulk load if bulk)
// in a process of its own, kills it with SIGKILL once it has acknowledged
// n documents, and returns the keys it acknowledged.
func killWriter(t *testing.T, path string, bulk bool, n int) map[string]bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	if bulk {
		cmd.Env = append(cmd.Env, crashBulkEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		acked[sc.Text()] = true
		if len(acked) == n {
			cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	// Drain what was printed before the kill landed: also acknowledged.
	for sc.Scan() {
		acked[sc.Text()] = true
	}
	cmd.Wait()
	return acked
}

// ackedStored fails t unless the acknowledged document key is stored,
// once, with its text, and returns its record.
func ackedStored(t *testing.T, st *sqlite.Store, key string) []*index.Record {
	t.Helper()
	ctx := context.Background()
	rs, err := st.Lookup(ctx, key)
	if err != nil || len(rs) != 1 || rs[0].Content == 0 {
		t.Fatalf("acknowledged %s lost: %v %v", key, rs, err)
	}
	if got, err := st.Text(ctx, rs[0].Content); err != nil || !strings.HasSuffix(string(got), "\n"+key) {
		t.Fatalf("text of acknowledged %s lost: %v", key, err)
	}
	return rs
}

func TestKillDuringWritesLosesNothingAcknowledged(t *testing.T) {
	// Rounds 0 to 2 write as the daemon does; round 3 is a bulk load,
	// whose deferred postings the next open must post.
	for round := 0; round < 4; round++ {
		bulk := round == 3
		t.Run(strconv.Itoa(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			acked := killWriter(t, path, bulk, 100+50*round)
			if len(acked) < 100 {
				t.Fatalf("writer acknowledged only %d documents before dying", len(acked))
			}
			ctx := context.Background()
			opts := index.DefaultOptions()
			st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme()})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.Check(ctx); err != nil {
				t.Fatalf("after kill -9: %v", err)
			}
			for key := range acked {
				rs := ackedStored(t, st, key)
				kids, err := st.Lookup(ctx, key+"!/attachment")
				if err != nil || len(kids) != 1 || kids[0].Parent != rs[0].ID {
					t.Fatalf("attachment of acknowledged %s lost: %v %v", key, kids, err)
				}
			}
			// Every stored family is whole: no parent without its child.
			var parents, children int
			st.Documents(ctx, func(r *index.Record) error {
				if r.Parent == 0 {
					parents++
				} else {
					children++
				}
				return nil
			})
			if parents != children {
				t.Fatalf("%d parents but %d children: a half-written family", parents, children)
			}
			// Nothing is left unposted: a bulk load's deferred postings
			// were posted at open (Check skips contents still pending).
			db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var pending int
			if err := db.QueryRow("SELECT count(*) FROM pending_postings").Scan(&pending); err != nil || pending != 0 {
				t.Fatalf("%d contents left without postings after the next open (%v)", pending, err)
			}
		})
	}
}

// A bulk load killed in the middle is carried on by the next bulk load
// (simdex scan run again): it stores the rest, settles the killed load's
// postings with its own, and leaves an index where nothing acknowledged is
// lost, nothing is left unposted, and the documents of both loads find
// each other.
func TestKilledBulkLoadCarriedOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	acked := killWriter(t, path, true, 150)

	ctx := context.Background()
	opts := index.DefaultOptions()
	opts.KeepText = true
	text := corpustest.Read(t, "spdx/text/Apache-2.0.txt")
	bulk, err := sqlite.OpenLoader(ctx, path, sqlite.Options{Scheme: opts.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.New(ctx, bulk, opts)
	if err != nil {
		t.Fatal(err)
	}
	var later []index.Result
	for i := range 20 {
		key := fmt.Sprintf("later-%d", i)
		parent := input(key, fmt.Sprintf("%s\n%s", text, key))
		child := input(key+"!/attachment", fmt.Sprintf("attachment of %s\n%s", key, text[:2000]))
		child.Parent = 0
		res, err := ix.Add(ctx, []index.Input{parent, child})
		if err != nil {
			t.Fatal(err)
		}
		later = append(later, res[0])
	}
	if err := bulk.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := bulk.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := sqlite.Open(ctx, path, sqlite.Options{Scheme: opts.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		t.Fatalf("after the carried-on load: %v", err)
	}
	for key := range acked {
		ackedStored(t, st, key)
	}
	var pending int
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("SELECT count(*) FROM pending_postings").Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("%d contents left without postings (%v)", pending, err)
	}
	ix, err = index.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	matches, err := ix.Similar(ctx, later[0].ID, index.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	killedLoads := 0
	for _, m := range matches {
		if acked[m.Record.Key] {
			killedLoads++
		}
	}
	if killedLoads == 0 {
		t.Fatalf("a document of the carried-on load finds none of the killed load's near-copies (%d matches)", len(matches))
	}
}
