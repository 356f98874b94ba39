package eval

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/internal/corpustest"
)

func TestParseSsdeep(t *testing.T) {
	out := "/tmp/x.ssdeep:000001.txt matches /tmp/x.ssdeep:000000.txt (61)\n" +
		"/tmp/x.ssdeep:000001.txt matches /tmp/x.ssdeep:000002.txt (100)\n\n" +
		"/tmp/x.ssdeep:000000.txt matches /tmp/x.ssdeep:000001.txt (64)\n"
	got, err := parseSsdeep([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Scored[int]{{Pair{0, 1}, 64}, {Pair{1, 2}, 100}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("parseSsdeep = %v, want %v", got, want)
	}
	for _, bad := range []string{"garbage\n", "a:x.txt matches b:000001.txt (5)\n", "a:000001.txt matches b:000002.txt (101)\n"} {
		if _, err := parseSsdeep([]byte(bad)); err == nil {
			t.Errorf("parseSsdeep(%q) accepted", bad)
		}
	}
}

func TestParseTLSH(t *testing.T) {
	got, err := parseTLSH([]byte("./000003.txt\t./000001.txt\t144\n./000001.txt\t./000002.txt\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (Scored[int]{Pair{1, 3}, 144}) || got[1] != (Scored[int]{Pair{1, 2}, 0}) {
		t.Errorf("parseTLSH = %v", got)
	}
	for _, bad := range []string{"a\tb\n", "./000001.txt\t./000002.txt\tfar\n", "./000001.txt\t./000002.txt\t-3\n", "x.txt\t./000002.txt\t3\n"} {
		if _, err := parseTLSH([]byte(bad)); err == nil {
			t.Errorf("parseTLSH(%q) accepted", bad)
		}
	}
}

// TestPeers runs the real ssdeep and tlsh binaries: it fails when they are
// not installed (scripts/eval.sh installs them).
func TestPeers(t *testing.T) {
	ctx := context.Background()
	if _, err := PeerVersions(ctx); err != nil {
		t.Fatalf("peers: %v (install the Debian packages ssdeep and tlsh-tools)", err)
	}
	mit := corpustest.Read(t, "spdx/text/MIT.txt")
	apache := corpustest.Read(t, "spdx/text/Apache-2.0.txt")
	edited := []byte(strings.Replace(string(mit), "Permission", "Permission is hereby", 1))
	dir := filepath.Join(t.TempDir(), "text")
	files := [][]byte{mit, mit, edited, apache, []byte("tiny")}
	if err := writeFiles(dir, files, []string{".txt", ".txt", ".txt", ".txt", ".txt"}); err != nil {
		t.Fatal(err)
	}
	ss, err := Ssdeep(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[Pair]int{}
	for _, s := range ss {
		scores[s.Pair] = s.Score
	}
	if scores[Pair{0, 1}] != 100 || scores[Pair{0, 2}] < 50 || scores[Pair{0, 3}] != 0 {
		t.Errorf("ssdeep scores %v", scores)
	}
	tl, unhashed, err := TLSH(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if unhashed != 1 {
		t.Errorf("tlsh left %d files unhashed, want 1 (the tiny one)", unhashed)
	}
	dist := map[Pair]int{}
	for _, s := range tl {
		dist[s.Pair] = s.Score
	}
	if len(dist) != 6 || dist[Pair{0, 1}] != 0 || dist[Pair{0, 2}] > 50 || dist[Pair{0, 3}] < 100 {
		t.Errorf("tlsh distances %v", dist)
	}
}

func TestPeersMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := PeerVersions(context.Background()); !errors.Is(err, ErrPeerMissing) {
		t.Errorf("PeerVersions without tools: %v, want ErrPeerMissing", err)
	}
	if _, err := Ssdeep(context.Background(), t.TempDir()); err != nil {
		t.Errorf("Ssdeep of an empty directory: %v", err)
	}
	dir := t.TempDir()
	if err := writeFiles(dir, [][]byte{[]byte("a"), []byte("b")}, []string{"", ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := Ssdeep(context.Background(), dir); !errors.Is(err, ErrPeerMissing) {
		t.Errorf("Ssdeep without the tool: %v, want ErrPeerMissing", err)
	}
}

func FuzzParsePeers(f *testing.F) {
	f.Add([]byte("/s:000001.txt matches /s:000000.txt (61)\n"))
	f.Add([]byte("./000003.txt\t./000001.txt\t144\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		if got, err := parseSsdeep(out); err == nil {
			for _, s := range got {
				if s.A >= s.B || s.Score < 0 || s.Score > 100 {
					t.Fatalf("ssdeep pair %v", s)
				}
			}
		}
		if got, err := parseTLSH(out); err == nil {
			for _, s := range got {
				if s.A >= s.B || s.Score < 0 {
					t.Fatalf("tlsh pair %v", s)
				}
			}
		}
	})
}
