package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/simdex/simdex/connectors"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// flakyFS fails to open the paths in bad.
type flakyFS struct {
	fsys iofs.FS
	bad  map[string]bool
}

func (f flakyFS) Open(name string) (iofs.File, error) {
	if f.bad[name] {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: iofs.ErrPermission}
	}
	return f.fsys.Open(name)
}

type fixture struct {
	t     *testing.T
	files fstest.MapFS
	flaky flakyFS
	now   time.Time
	w     *watch
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, files: fstest.MapFS{}, now: t0}
	f.flaky = flakyFS{fsys: f.files, bad: map[string]bool{}}
	src, err := New(Config{Name: "fs:test", FS: f.flaky, Interval: time.Second, Settle: time.Second, Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	f.w = newWatch(src)
	return f
}

// write puts a file modified at the fixture's current time.
func (f *fixture) write(p, body string) {
	f.files[p] = &fstest.MapFile{Data: []byte(body), ModTime: f.now}
}

// scan advances the clock by d and scans, returning "kind key" strings.
func (f *fixture) scan(d time.Duration) ([]string, []connectors.Event) {
	f.now = f.now.Add(d)
	evs := f.w.scan(f.now)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Kind.String()+" "+ev.Key)
	}
	return got, evs
}

func (f *fixture) expect(d time.Duration, want ...string) []connectors.Event {
	f.t.Helper()
	got, evs := f.scan(d)
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		f.t.Fatalf("at +%s: events %q, want %q", f.now.Sub(t0), got, want)
	}
	return evs
}

func TestSettle(t *testing.T) {
	f := newFixture(t)
	f.files["old.txt"] = &fstest.MapFile{Data: []byte("old"), ModTime: t0.Add(-time.Hour)}
	f.write("new.txt", "half")
	f.expect(0, "created old.txt") // old enough at once
	f.expect(500 * time.Millisecond)
	f.write("new.txt", "half written") // still growing at +0.5s
	f.expect(500 * time.Millisecond)
	evs := f.expect(500*time.Millisecond, "created new.txt") // modified 1s ago
	ev := evs[0]
	if ev.Size != 12 || ev.VersionID != fmt.Sprintf("%d-12", t0.Add(500*time.Millisecond).UnixNano()) || ev.ETag != ev.VersionID || ev.Source != "fs:test" {
		t.Errorf("event = %+v", ev)
	}
	f.expect(time.Hour) // nothing changes, nothing is emitted
}

func TestFutureModTimeSettlesByObservation(t *testing.T) {
	f := newFixture(t)
	f.files["skewed.txt"] = &fstest.MapFile{Data: []byte("x"), ModTime: t0.Add(time.Hour)}
	f.expect(0)
	f.expect(999 * time.Millisecond)
	f.expect(time.Millisecond, "created skewed.txt")
}

func TestSkippedNames(t *testing.T) {
	f := newFixture(t)
	old := t0.Add(-time.Hour)
	for _, p := range []string{
		".hidden", ".git/config", "dir/.DS_Store", "a.tmp", "b.TMP", "~$report.docx", "film.part",
		"link.txt",
		"keep.txt", "dir/keep.md", "tmp/keep.txt", "partial.txt",
	} {
		f.files[p] = &fstest.MapFile{Data: []byte("x"), ModTime: old}
	}
	f.files["link.txt"].Mode = iofs.ModeSymlink
	f.expect(0, "created dir/keep.md", "created keep.txt", "created partial.txt", "created tmp/keep.txt")
}

// Names that are not valid UTF-8, of files or of the folders holding
// them, are listed, opened and emitted as they are, and ingest records
// them with their error. They used to be logged and skipped, never
// reaching the index.
func TestInvalidUTF8NamesEmitted(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "caf\xe9"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bad\xffname.txt", "caf\xe9/menu.txt"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Add(time.Hour) // every file is settled
	src, err := New(Config{Dir: dir, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	w := newWatch(src)
	evs := w.scan(now)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Kind.String()+" "+ev.Key)
		rc, err := ev.Open(context.Background())
		if err != nil {
			t.Fatalf("open %q: %v", ev.Key, err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(body) != ev.Key {
			t.Errorf("%q holds %q, %v", ev.Key, body, err)
		}
	}
	if want := []string{"created bad\xffname.txt", "created caf\xe9/menu.txt"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if err := os.Remove(filepath.Join(dir, "bad\xffname.txt")); err != nil {
		t.Fatal(err)
	}
	if evs := w.scan(now); len(evs) != 1 || evs[0].Kind != connectors.Removed || evs[0].Key != "bad\xffname.txt" {
		t.Errorf("after removal: %v, want removed bad\\xffname.txt", evs)
	}
	if _, err := dirFS(dir).Open("../escape"); !errors.Is(err, iofs.ErrInvalid) {
		t.Errorf("open ../escape: %v, want ErrInvalid", err)
	}
}

func TestRemoved(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a")
	f.write("b.txt", "b")
	created := f.expect(time.Second, "created a.txt", "created b.txt")
	delete(f.files, "a.txt")
	evs := f.expect(time.Second, "removed a.txt")
	if evs[0].VersionID != created[0].VersionID || evs[0].ETag != "" || evs[0].Open != nil {
		t.Errorf("removed = %+v", evs[0])
	}
	if evs[0].IdempotencyKey() == created[0].IdempotencyKey() {
		t.Error("removed shares the created event's idempotency key")
	}
	f.expect(time.Second)
	// A file seen but never emitted disappears silently.
	f.write("flash.txt", "x")
	f.expect(100 * time.Millisecond)
	delete(f.files, "flash.txt")
	f.expect(time.Second)
}

func TestTransientRetriedWithBackoffPermanentNot(t *testing.T) {
	f := newFixture(t)
	f.write("t.txt", "t")
	f.write("p.txt", "p")
	evs := f.expect(time.Second, "created p.txt", "created t.txt")
	ctx := context.Background()
	evs[0].Done(ctx, &connectors.Error{Kind: connectors.Permanent, Err: errors.New("too big")})
	evs[1].Done(ctx, &connectors.Error{Kind: connectors.Transient, Err: errors.New("busy")})
	f.expect(500 * time.Millisecond)
	again := f.expect(500*time.Millisecond, "created t.txt") // after Interval
	if again[0].IdempotencyKey() != evs[1].IdempotencyKey() {
		t.Error("retry changed the idempotency key")
	}
	again[0].Done(ctx, &connectors.Error{Kind: connectors.Transient, Err: errors.New("busy")})
	f.expect(time.Second) // second failure waits 2 intervals
	again = f.expect(time.Second, "created t.txt")
	again[0].Done(ctx, nil)
	f.expect(time.Hour)
	// A changed file is tried again even after a permanent failure.
	f.write("p.txt", "p, smaller now")
	f.expect(time.Second, "created p.txt")
}

func TestRemovedRetriedOnTransientFailure(t *testing.T) {
	f := newFixture(t)
	f.write("r.txt", "r")
	f.expect(time.Second, "created r.txt")[0].Done(context.Background(), nil)
	delete(f.files, "r.txt")
	evs := f.expect(time.Second, "removed r.txt")
	evs[0].Done(context.Background(), &connectors.Error{Kind: connectors.Transient, Err: errors.New("index busy")})
	f.expect(500 * time.Millisecond)
	evs = f.expect(500*time.Millisecond, "removed r.txt")
	f.expect(time.Hour) // pending: not emitted twice
	evs[0].Done(context.Background(), nil)
	f.expect(time.Hour)
}

func TestUnreadableFolders(t *testing.T) {
	f := newFixture(t)
	f.write("top.txt", "t")
	f.write("sub/deep.txt", "d")
	f.expect(time.Second, "created sub/deep.txt", "created top.txt")
	f.flaky.bad["sub"] = true
	f.expect(time.Second) // sub/deep.txt is not reported removed
	f.flaky.bad["."] = true
	f.expect(time.Second) // nor is anything else
	delete(f.flaky.bad, ".")
	delete(f.flaky.bad, "sub")
	f.expect(time.Second)
	delete(f.files, "sub/deep.txt")
	f.expect(time.Second, "removed sub/deep.txt")
}

func TestOpenChecksVersion(t *testing.T) {
	f := newFixture(t)
	f.write("doc.txt", "v1")
	ev := f.expect(time.Second, "created doc.txt")[0]
	rc, err := ev.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	_ = rc.Close()
	if string(b) != "v1" {
		t.Fatalf("body = %q", b)
	}
	f.write("doc.txt", "version 2")
	_, err = ev.Open(context.Background())
	if !errors.Is(err, connectors.ErrObjectMissing) || !errors.Is(err, connectors.ErrPermanent) || !strings.Contains(err.Error(), "changed since the event") {
		t.Errorf("Open after change: %v", err)
	}
	delete(f.files, "doc.txt")
	_, err = ev.Open(context.Background())
	if !errors.Is(err, connectors.ErrObjectMissing) || !errors.Is(err, connectors.ErrPermanent) {
		t.Errorf("Open after delete: %v", err)
	}
	f.write("locked.txt", "x")
	ev = f.expect(time.Second, "removed doc.txt", "created locked.txt")[1]
	f.flaky.bad["locked.txt"] = true
	if _, err = ev.Open(context.Background()); !errors.Is(err, connectors.ErrPermanent) || !errors.Is(err, iofs.ErrPermission) {
		t.Errorf("Open of unreadable file: %v", err)
	}
}

func TestRetryDelayCapped(t *testing.T) {
	f := newFixture(t)
	if got := f.w.retryDelay(30); got != maxRetryDelay {
		t.Errorf("retryDelay(30) = %s", got)
	}
	if got := f.w.retryDelay(3); got != 4*time.Second {
		t.Errorf("retryDelay(3) = %s", got)
	}
}

// Whatever name it is given, dirFS either refuses it or resolves it to a
// path inside its folder: accepting invalid UTF-8 opens no way out.
func FuzzDirFSPath(f *testing.F) {
	for _, s := range []string{".", "a", "a/b", "caf\xe9/x", "../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "\xff/..", "..\xff", ""} {
		f.Add(s)
	}
	const root = "/srv/inbox"
	f.Fuzz(func(t *testing.T, name string) {
		p, err := dirFS(root).path("open", name)
		if err != nil {
			if !errors.Is(err, iofs.ErrInvalid) {
				t.Fatalf("%q refused with %v, want ErrInvalid", name, err)
			}
			return
		}
		if p != root && !strings.HasPrefix(p, root+"/") {
			t.Fatalf("%q resolved to %q, outside %s", name, p, root)
		}
	})
}
