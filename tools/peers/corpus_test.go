package peers

import (
	"bufio"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/simdex/simdex/index/normalise"
	"github.com/simdex/simdex/internal/corpustest"
)

var (
	corpusOnce sync.Once
	corpusDocs [][]byte
	corpusSize int64
	corpusErr  error
)

// docs returns the benchmark input every contender gets: English documents
// normalised with index/normalise, one slice per document, in a fixed
// order. They are every SPDX licence text, the whole English TXT manuals of
// debian-docs and the licenseclassifier wordings (about 8 MB in all);
// byte-identical documents are kept once.
func docs(tb testing.TB) ([][]byte, int64) {
	tb.Helper()
	dir := corpustest.Dir(tb)
	corpusOnce.Do(func() { corpusDocs, corpusSize, corpusErr = loadCorpus(dir) })
	if corpusErr != nil {
		tb.Fatalf("load corpus (%s=%s): %v", corpustest.Env, dir, corpusErr)
	}
	return corpusDocs, corpusSize
}

func loadCorpus(dir string) ([][]byte, int64, error) {
	var files []string
	spdx, err := filepath.Glob(filepath.Join(dir, "spdx", "text", "*.txt"))
	if err != nil {
		return nil, 0, err
	}
	files = append(files, spdx...)
	manuals, err := englishManuals(dir)
	if err != nil {
		return nil, 0, err
	}
	files = append(files, manuals...)
	var wordings []string
	err = filepath.WalkDir(filepath.Join(dir, "licenseclassifier"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") {
			wordings = append(wordings, p)
		}
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	slices.Sort(wordings)
	files = append(files, wordings...)

	seen := make(map[[32]byte]bool)
	var out [][]byte
	var size int64
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, 0, err
		}
		norm, err := normalise.Append(nil, raw)
		if err != nil || len(norm) == 0 {
			continue // not valid UTF-8, or empty: no fingerprint either
		}
		sum := sha256.Sum256(norm)
		if seen[sum] {
			continue
		}
		seen[sum] = true
		out = append(out, norm)
		size += int64(len(norm))
	}
	return out, size, nil
}

// englishManuals lists the whole-book English TXT files of debian-docs from
// its index.tsv (file, package, work, lang, format, granularity, ...).
func englishManuals(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "debian-docs", "index.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) >= 6 && col[3] == "en" && col[4] == "txt" && col[5] == "whole" {
			out = append(out, filepath.Join(dir, "debian-docs", col[0]))
		}
	}
	return out, sc.Err()
}

// TestCorpus checks that the input is the size the benchmarks claim. Normal
// form 2 (words only, no punctuation) made it 7.5 MB.
func TestCorpus(t *testing.T) {
	corpustest.Suite(t)
	d, size := docs(t)
	if size < 7e6 || size > 16e6 {
		t.Errorf("corpus is %d bytes in %d documents, want 7-16 MB", size, len(d))
	}
	t.Logf("%d documents, %d bytes normalised", len(d), size)
}
