// Package corpusgen writes large synthetic document collections for
// benchmarks: excerpts of real texts, with families of near-copies (edited
// versions), exact copies and unrelated documents in realistic shares, so
// that scan and similar are measured on data shaped like a repository.
package corpusgen

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Options describe a collection.
type Options struct {
	// Sources is a directory tree of UTF-8 text files to draw from.
	Sources string
	// Files is how many files to write.
	Files int
	// MeanSize is the mean file size in bytes.
	MeanSize int
	// NearShare and ExactShare are the shares of files that are edited
	// versions or exact copies of an earlier file.
	NearShare, ExactShare float64
	// Seed makes the collection reproducible.
	Seed uint64
}

// Write writes the collection under dir and returns the bytes written.
func Write(dir string, o Options) (int64, error) {
	var texts []string
	err := filepath.WalkDir(o.Sources, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".txt") {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && len(b) > 200 {
			texts = append(texts, string(b))
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read sources %s: %w", o.Sources, err)
	}
	if len(texts) == 0 {
		return 0, fmt.Errorf("read sources %s: no .txt files over 200 bytes", o.Sources)
	}
	all := strings.Join(texts, "\n\n")
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed))
	var total int64
	written := make([]string, 0, o.Files)
	for i := 0; i < o.Files; i++ {
		var text string
		switch x := r.Float64(); {
		case i > 0 && x < o.ExactShare:
			text = written[r.IntN(len(written))]
		case i > 0 && x < o.ExactShare+o.NearShare:
			text = edit(r, written[r.IntN(len(written))])
		default:
			size := max(200, int(r.ExpFloat64()*float64(o.MeanSize)))
			size = min(size, len(all)/2)
			start := r.IntN(len(all) - size)
			text = all[start : start+size]
		}
		written = append(written, text)
		sub := filepath.Join(dir, fmt.Sprintf("%03d", i%1000))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return total, fmt.Errorf("create %s: %w", sub, err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("doc-%06d.txt", i)), []byte(text), 0o644); err != nil {
			return total, fmt.Errorf("write document %d: %w", i, err)
		}
		total += int64(len(text))
	}
	return total, nil
}

// edit makes a version: a few words inserted, deleted or replaced, and
// sometimes a paragraph appended.
func edit(r *rand.Rand, text string) string {
	words := strings.Fields(text)
	if len(words) < 4 {
		return text + " revised"
	}
	for n := 1 + r.IntN(10); n > 0; n-- {
		p := r.IntN(len(words))
		switch r.IntN(3) {
		case 0:
			words = append(words[:p], append([]string{"amended"}, words[p:]...)...)
		case 1:
			words = append(words[:p], words[p+1:]...)
		default:
			words[p] = "revised"
		}
	}
	out := strings.Join(words, " ")
	if r.IntN(4) == 0 {
		out += "\n\nThis version supersedes all earlier versions."
	}
	return out
}
