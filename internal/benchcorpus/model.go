package benchcorpus

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simdex/simdex/internal/corpustest"
)

// ErrNoSources reports that the corpora the text model is trained on were
// not found.
var ErrNoSources = errors.New("benchcorpus: source corpora not found")

// SourcesDir returns the full corpora directory named by SIMDEX_CORPORA
// (the Makefile's default is ../shared/corpora beside the checkout), or
// an error wrapping ErrNoSources that names the variable when it is unset
// or names no directory.
func SourcesDir() (string, error) {
	d, err := corpustest.FullDir()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoSources, err)
	}
	return d, nil
}

// sourceFiles lists the English texts the model is trained on, relative to
// the corpora directory, in a fixed order: every SPDX licence text and the
// whole English TXT manuals of debian-docs (index.tsv: lang en, format
// txt, granularity whole).
func sourceFiles(dir string) ([]string, error) {
	spdx, err := filepath.Glob(filepath.Join(dir, "spdx", "text", "*.txt"))
	if err != nil {
		return nil, fmt.Errorf("list spdx texts: %w", err)
	}
	var out []string
	for _, p := range spdx {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator))))
	}
	tsv, err := os.ReadFile(filepath.Join(dir, "debian-docs", "index.tsv"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSources, err)
	}
	for _, line := range strings.Split(string(tsv), "\n")[1:] {
		f := strings.Split(line, "\t")
		if len(f) >= 6 && f[3] == "en" && f[4] == "txt" && f[5] == "whole" {
			out = append(out, "debian-docs/"+f[0])
		}
	}
	if len(spdx) == 0 {
		return nil, fmt.Errorf("%w: no spdx/text/*.txt under %s", ErrNoSources, dir)
	}
	slices.Sort(out)
	return out, nil
}

// maxToken drops longer tokens (URLs, rulers) from the vocabulary.
const maxToken = 32

// model is a word-bigram model: for each token, its successors with
// cumulative counts, drawn in proportion to how often they followed it.
type model struct {
	words []string // token id → token
	// succ[off[w]:off[w+1]] are the successors of w, cum their
	// cumulative counts (cum[off[w+1]-1] is w's total).
	off  []uint32
	succ []uint32
	cum  []uint32
	// starts are tokens that begin a sentence, one entry per occurrence,
	// so drawing one uniformly follows their frequency.
	starts []uint32
	// unigram is every token occurrence, for edits that insert a word.
	unigram []uint32
	// hash identifies the training text (SHA-256 of every file's name and
	// bytes, in order).
	hash string
}

// loadModel trains the model on the sources under dir.
func loadModel(dir string) (*model, error) {
	files, err := sourceFiles(dir)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	ids := map[string]uint32{}
	m := &model{}
	pairs := map[uint64]uint32{}
	seen := map[[32]byte]bool{}
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoSources, err)
		}
		sum := sha256.Sum256(b)
		if seen[sum] {
			continue // identical texts (GPL-2.0 and GPL-2.0-only) count once
		}
		seen[sum] = true
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		if !utf8.Valid(b) {
			continue
		}
		prev, sentence := -1, true
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
		sc.Split(bufio.ScanWords)
		for sc.Scan() {
			tok := sc.Text()
			if len(tok) > maxToken {
				prev, sentence = -1, true
				continue
			}
			id, ok := ids[tok]
			if !ok {
				id = uint32(len(m.words))
				ids[tok] = id
				m.words = append(m.words, tok)
			}
			if sentence && isCapital(tok) {
				m.starts = append(m.starts, id)
			}
			m.unigram = append(m.unigram, id)
			if prev >= 0 {
				pairs[uint64(prev)<<32|uint64(id)]++
			}
			prev, sentence = int(id), endsSentence(tok)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, err)
		}
	}
	if len(m.starts) == 0 {
		return nil, fmt.Errorf("%w: no text in %s", ErrNoSources, dir)
	}
	m.hash = hex.EncodeToString(h.Sum(nil))
	keys := make([]uint64, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	m.off = make([]uint32, len(m.words)+1)
	m.succ = make([]uint32, len(keys))
	m.cum = make([]uint32, len(keys))
	var total uint32
	for i, k := range keys {
		w := uint32(k >> 32)
		if i == 0 || uint32(keys[i-1]>>32) != w {
			total = 0
		}
		total += pairs[k]
		m.succ[i], m.cum[i] = uint32(k), total
		m.off[w+1] = uint32(i + 1)
	}
	// Tokens without successors get an empty range.
	for w := 1; w < len(m.off); w++ {
		m.off[w] = max(m.off[w], m.off[w-1])
	}
	return m, nil
}

func isCapital(tok string) bool { return tok[0] >= 'A' && tok[0] <= 'Z' }

func endsSentence(tok string) bool {
	switch tok[len(tok)-1] {
	case '.', '!', '?', ':':
		return true
	}
	return false
}

// next draws the successor of w, or a sentence start when w has none.
func (m *model) next(r *rand.Rand, w uint32) uint32 {
	lo, hi := m.off[w], m.off[w+1]
	if lo == hi {
		return m.starts[r.IntN(len(m.starts))]
	}
	x := r.Uint32N(m.cum[hi-1])
	i, _ := slices.BinarySearchFunc(m.cum[lo:hi], x, func(c, x uint32) int {
		if c <= x {
			return -1
		}
		return 1
	})
	return m.succ[lo+uint32(i)]
}

// word draws a token by its frequency.
func (m *model) word(r *rand.Rand) string { return m.words[m.unigram[r.IntN(len(m.unigram))]] }

// appendText appends about size bytes of text: a random walk through the
// model, broken into lines and paragraphs after sentence ends, finishing
// at a sentence end when one comes soon enough.
func (m *model) appendText(dst []byte, r *rand.Rand, size int) []byte {
	start := len(dst)
	w := m.starts[r.IntN(len(m.starts))]
	col := 0
	for {
		tok := m.words[w]
		dst = append(dst, tok...)
		col += len(tok)
		n := len(dst) - start
		if endsSentence(tok) {
			if n >= size {
				break
			}
			switch x := r.IntN(8); {
			case x == 0:
				dst, col = append(dst, "\n\n"...), 0
			case x < 3 || col > 60:
				dst, col = append(dst, '\n'), 0
			default:
				dst, col = append(dst, ' '), col+1
			}
		} else {
			if n >= size+size/4 {
				dst = append(dst, '.')
				break
			}
			if col > 72 {
				dst, col = append(dst, '\n'), 0
			} else {
				dst, col = append(dst, ' '), col+1
			}
		}
		w = m.next(r, w)
	}
	return append(dst, '\n')
}
