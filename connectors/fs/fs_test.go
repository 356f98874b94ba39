package fs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/connectortest"
	"github.com/simdex/simdex/connectors/fs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// harness runs the conformance suite on a fresh t.TempDir() per subtest.
type harness struct{}

func (harness) New(t *testing.T) connectortest.Origin { return &origin{dir: t.TempDir()} }

type origin struct{ dir string }

func (o *origin) Source(t *testing.T) connectors.Source {
	src, err := fs.New(fs.Config{Dir: o.dir, Interval: 20 * time.Millisecond, Settle: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("fs.New: %v", err)
	}
	return src
}

func (o *origin) Put(t *testing.T, key string, body []byte, _ map[string]string) {
	p := filepath.Join(o.dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (o *origin) Delete(t *testing.T, key string) {
	if err := os.Remove(filepath.Join(o.dir, filepath.FromSlash(key))); err != nil {
		t.Fatal(err)
	}
}

// Garbage makes a dangling symlink and a named pipe: each is skipped and
// nothing blocks. (A name that is not UTF-8 is no garbage: it is emitted,
// see TestInvalidUTF8NamesEmitted.)
func (o *origin) Garbage(t *testing.T) {
	if err := os.Symlink(filepath.Join(o.dir, "nowhere"), filepath.Join(o.dir, "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(o.dir, "pipe.txt")); err != nil {
		t.Fatal(err)
	}
}

func (o *origin) Redelivers() bool              { return true }
func (o *origin) Replays() bool                 { return true }
func (o *origin) RedeliveryWait() time.Duration { return 500 * time.Millisecond }

func TestConformance(t *testing.T) {
	connectortest.Run(t, harness{})
}

func TestNewValidatesConfig(t *testing.T) {
	cases := []struct {
		name  string
		cfg   fs.Config
		field string
	}{
		{"no dir", fs.Config{}, "Dir"},
		{"negative interval", fs.Config{Dir: "x", Interval: -time.Second}, "Interval"},
		{"negative settle", fs.Config{Dir: "x", Settle: -time.Second}, "Settle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fs.New(tc.cfg)
			if !errors.Is(err, fs.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field+":") {
				t.Fatalf("New = %v, want ErrInvalidConfig naming %s", err, tc.field)
			}
		})
	}
}

func TestRunTwiceConcurrently(t *testing.T) {
	src, err := fs.New(fs.Config{Dir: t.TempDir(), Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, make(chan connectors.Event)) }()
	time.Sleep(50 * time.Millisecond)
	if err := src.Run(ctx, make(chan connectors.Event)); !errors.Is(err, fs.ErrRunning) {
		t.Errorf("second Run = %v, want ErrRunning", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

// Reopen gives a file again only at the version an event delivered: a
// file changed or removed since is missing, a version not written by the
// source is refused.
func TestReopenOnlyTheVersionDelivered(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "memo.txt")
	if err := os.WriteFile(p, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := fs.New(fs.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	version := fmt.Sprintf("%d-%d", st.ModTime().UnixNano(), st.Size())
	ctx := context.Background()
	rc, ctype, err := src.Reopen(ctx, "memo.txt", version)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "first" || ctype != "" {
		t.Errorf("Reopen = %q, %q", b, ctype)
	}
	if _, _, err := src.Reopen(ctx, "memo.txt", "yesterday"); !errors.Is(err, connectors.ErrInvalid) {
		t.Errorf("bad version: err = %v, want connectors.ErrInvalid", err)
	}
	if err := os.WriteFile(p, []byte("second!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Reopen(ctx, "memo.txt", version); !errors.Is(err, connectors.ErrObjectMissing) {
		t.Errorf("changed file: err = %v, want connectors.ErrObjectMissing", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Reopen(ctx, "memo.txt", version); !errors.Is(err, connectors.ErrObjectMissing) {
		t.Errorf("removed file: err = %v, want connectors.ErrObjectMissing", err)
	}
}
