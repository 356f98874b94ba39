package eval

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestWordShingles(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"spaces only", "   ", 0},
		{"fewer words than a shingle", "one two three", 1},
		{"exactly five", "a b c d e", 1},
		{"six words", "a b c d e f", 2},
		{"repeated shingles count once", "a b c d e a b c d e a b c d e", 5},
		{"each kanji and kana is a word", "日本語の文書です", 4},
		{"mixed scripts", "debian の パッケージ", 3},
		{"latin words around kanji", "use dpkg-buildpackage 命令 to build", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(WordShingles([]byte(tc.text), ShingleWords)); got != tc.want {
				t.Errorf("WordShingles(%q) has %d shingles, want %d", tc.text, got, tc.want)
			}
		})
	}
	a := WordShingles([]byte("a b c d e f"), ShingleWords)
	b := WordShingles([]byte("  a b  c d e\nf "), ShingleWords)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("white space changes shingles: %v vs %v", a, b)
	}
	// A line broken in another place (HTML against PDF) does not change
	// the shingles of a Japanese text.
	ja1 := WordShingles([]byte("パッケージを作成する前に確認してください"), ShingleWords)
	ja2 := WordShingles([]byte("パッケージを作成\nする前に 確認して\nください"), ShingleWords)
	if fmt.Sprint(ja1) != fmt.Sprint(ja2) || len(ja1) != 16 {
		t.Errorf("line breaks change Japanese shingles: %d vs %d", len(ja1), len(ja2))
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name     string
		a, b     string
		res      float64
		cab, cba float64
		exact    bool
	}{
		// A has shingles {abcde, bcdef}; B has {abcde, bcdex}: one shared
		// of three.
		{"one of three shared", "a b c d e f", "a b c d e x", 1.0 / 3, 0.5, 0.5, false},
		{"identical", "a b c d e f", "a b c d e f", 1, 1, 1, true},
		{"disjoint", "a b c d e f", "u v w x y z", 0, 0, 0, false},
		// A's two shingles are both in B, which has four.
		{"prefix contained", "a b c d e f", "a b c d e f g h", 0.5, 1, 0.5, false},
		{"empty", "", "a b c d e", 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Compare([]byte(tc.a), []byte(tc.b))
			if !near(s.Resemblance, tc.res) || !near(s.ContainmentAB, tc.cab) || !near(s.ContainmentBA, tc.cba) || s.Exact != tc.exact {
				t.Errorf("Compare = %+v, want res %v cab %v cba %v exact %v", s, tc.res, tc.cab, tc.cba, tc.exact)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		s    Similarity
		want Class
	}{
		{Similarity{Resemblance: 1, ContainmentAB: 1, ContainmentBA: 1, Exact: true}, Exact},
		{Similarity{Resemblance: 0.85, ContainmentAB: 0.9, ContainmentBA: 0.93}, Near | Contained},
		{Similarity{Resemblance: 0.8, ContainmentAB: 0.89, ContainmentBA: 0.89}, Near},
		{Similarity{Resemblance: 0.1, ContainmentAB: 0.95, ContainmentBA: 0.1}, Contained},
		{Similarity{Resemblance: 0.5, ContainmentAB: 0.6, ContainmentBA: 0.7}, 0},
		{Similarity{Resemblance: 0.29, ContainmentAB: 0.29, ContainmentBA: 0.3}, 0},
		{Similarity{Resemblance: 0.29, ContainmentAB: 0.29, ContainmentBA: 0.29}, Unrelated},
	} {
		if got := Classify(tc.s); got != tc.want {
			t.Errorf("Classify(%+v) = %b, want %b", tc.s, got, tc.want)
		}
	}
}

// randomText returns n words drawn from a vocabulary of size vocab.
func randomText(r *rand.Rand, n, vocab int) []byte {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", r.IntN(vocab))
	}
	return []byte(strings.Join(words, " "))
}

// TestTruthMatchesCompare checks the all-pairs table against pairwise
// brute force on a corpus with copies, near-copies and excerpts.
func TestTruthMatchesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var texts [][]byte
	for range 12 {
		texts = append(texts, randomText(r, 50+r.IntN(200), 30))
	}
	texts = append(texts, texts[0], texts[3][:len(texts[3])/2], []byte("a b"), []byte("a b"))
	edited, err := Apply(r, texts[5], Edit{Kind: Insert, Count: 3}, "zz", nil)
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, edited)
	sets := make([][]uint64, len(texts))
	hashes := make([][32]byte, len(texts))
	for i, x := range texts {
		sets[i] = WordShingles(x, ShingleWords)
		hashes[i] = sha256.Sum256(x)
	}
	tr, err := NewTruth(sets, hashes)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != len(texts) {
		t.Fatalf("Len = %d, want %d", tr.Len(), len(texts))
	}
	for i := range texts {
		for j := range texts {
			if i == j {
				continue
			}
			want := Compare(texts[i], texts[j])
			got := tr.Get(i, j)
			if !near(got.Resemblance, want.Resemblance) || !near(got.ContainmentAB, want.ContainmentAB) ||
				!near(got.ContainmentBA, want.ContainmentBA) || got.Exact != want.Exact {
				t.Fatalf("pair (%d, %d): truth %+v, brute force %+v", i, j, got, want)
			}
		}
	}
}

func TestNewTruthErrors(t *testing.T) {
	if _, err := NewTruth(make([][]uint64, 2), make([][32]byte, 3)); err == nil {
		t.Error("mismatched lengths accepted")
	}
	if _, err := NewTruth(make([][]uint64, MaxTruthDocs+1), make([][32]byte, MaxTruthDocs+1)); !errors.Is(err, ErrTooManyDocs) {
		t.Errorf("too many documents: err = %v, want ErrTooManyDocs", err)
	}
}

func BenchmarkNewTruth(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var sets [][]uint64
	var hashes [][32]byte
	for range 500 {
		x := randomText(r, 2000, 3000)
		sets = append(sets, WordShingles(x, ShingleWords))
		hashes = append(hashes, sha256.Sum256(x))
	}
	b.ResetTimer()
	for range b.N {
		if _, err := NewTruth(sets, hashes); err != nil {
			b.Fatal(err)
		}
	}
}
