package eval

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func words(b []byte) []string { return strings.Fields(string(b)) }

// isSubsequence reports whether a is b with some elements removed.
func isSubsequence(a, b []string) bool {
	i := 0
	for _, w := range b {
		if i < len(a) && a[i] == w {
			i++
		}
	}
	return i == len(a)
}

func count(ws []string, w string) int {
	n := 0
	for _, x := range ws {
		if x == w {
			n++
		}
	}
	return n
}

func TestApplyInsertRemove(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	orig := randomText(r, 400, 50)
	ow := words(orig)
	for _, sp := range []Spread{Random, Uniform} {
		for _, i := range []int{0, 1, 7, 50} {
			ins, err := Apply(r, orig, Edit{Kind: Insert, Count: i, Spread: sp}, "qq", nil)
			if err != nil {
				t.Fatal(err)
			}
			iw := words(ins)
			if len(iw) != len(ow)+i || count(iw, "qq") != i || !isSubsequence(ow, iw) {
				t.Errorf("insert %d %s: %d words (%d inserted), original kept: %v", i, sp, len(iw), count(iw, "qq"), isSubsequence(ow, iw))
			}
			rem, err := Apply(r, orig, Edit{Kind: Remove, Count: i, Spread: sp}, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			rw := words(rem)
			if len(rw) != len(ow)-i || !isSubsequence(rw, ow) {
				t.Errorf("remove %d %s: %d words, subsequence: %v", i, sp, len(rw), isSubsequence(rw, ow))
			}
		}
	}
}

// TestApplyUniform checks that evenly spread insertions are evenly spaced.
func TestApplyUniform(t *testing.T) {
	orig := []byte(strings.Repeat("x ", 100))
	out, err := Apply(rand.New(rand.NewPCG(1, 1)), orig, Edit{Kind: Insert, Count: 10, Spread: Uniform}, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pos []int
	for i, w := range words(out) {
		if w == "a" {
			pos = append(pos, i)
		}
	}
	for k := 1; k < len(pos); k++ {
		if gap := pos[k] - pos[k-1]; gap != 11 {
			t.Fatalf("insertions at %v: gap %d, want 11 (10 original words between)", pos, gap)
		}
	}
}

func TestApplySpansPrefixBoilerplate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	orig := randomText(r, 1000, 100)
	ow := words(orig)
	filler := []byte(strings.Repeat("f ", 2000))
	aug, err := Apply(r, orig, Edit{Kind: Augment, Fraction: 0.4}, "", filler)
	if err != nil {
		t.Fatal(err)
	}
	aw := words(aug)
	if len(aw) != len(ow)+400 || count(aw, "f") != 400 || !isSubsequence(ow, aw) {
		t.Errorf("augment 0.4: %d words, %d filler", len(aw), count(aw, "f"))
	}
	// The filler span is contiguous.
	first := slices.Index(aw, "f")
	if first < 0 || count(aw[first:first+400], "f") != 400 {
		t.Errorf("augment 0.4: filler not one span")
	}
	red, err := Apply(r, orig, Edit{Kind: Reduce, Fraction: 0.25}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rw := words(red)
	if len(rw) != 750 || !isSubsequence(rw, ow) {
		t.Fatalf("reduce 0.25: %d words", len(rw))
	}
	// The removed words are one contiguous span: the result is a prefix of
	// the original followed by a suffix.
	k := 0
	for k < len(rw) && rw[k] == ow[k] {
		k++
	}
	if !slices.Equal(rw[k:], ow[k+250:]) {
		t.Errorf("reduce 0.25: removed words are not one span")
	}
	pre, err := Apply(r, orig, Edit{Kind: Prefix, Section: 3, Sections: 10}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(words(pre), ow[:300]) {
		t.Errorf("prefix 3/10: got %d words, want the first 300", len(words(pre)))
	}
	bp := []byte(strings.Repeat("b ", 100))
	bo, err := Apply(r, orig, Edit{Kind: Boilerplate, Fraction: 0.2}, "", bp)
	if err != nil {
		t.Fatal(err)
	}
	bw := words(bo)
	if !bytes.HasSuffix(bo, bytes.TrimSpace(bp)) || len(bw) != 500 || !slices.Equal(bw[:400], ow[:400]) {
		t.Errorf("boilerplate 0.2: %d words, want 400 original + 100 boilerplate", len(bw))
	}
}

func TestApplyBadEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	orig := []byte("a b c d e f g h i j")
	for _, tc := range []struct {
		name   string
		e      Edit
		word   string
		filler []byte
	}{
		{"insert without word", Edit{Kind: Insert, Count: 1}, "", nil},
		{"negative insert", Edit{Kind: Insert, Count: -1}, "a", nil},
		{"remove all", Edit{Kind: Remove, Count: 10}, "", nil},
		{"negative remove", Edit{Kind: Remove, Count: -2}, "", nil},
		{"augment from short filler", Edit{Kind: Augment, Fraction: 0.5}, "", []byte("x")},
		{"augment by nothing", Edit{Kind: Augment, Fraction: 0}, "", []byte("x y z")},
		{"reduce all", Edit{Kind: Reduce, Fraction: 1}, "", nil},
		{"prefix beyond", Edit{Kind: Prefix, Section: 11, Sections: 10}, "", nil},
		{"prefix of zero sections", Edit{Kind: Prefix, Section: 0, Sections: 0}, "", nil},
		{"boilerplate share 1", Edit{Kind: Boilerplate, Fraction: 1}, "", []byte("x")},
		{"empty boilerplate", Edit{Kind: Boilerplate, Fraction: 0.5}, "", nil},
		{"unknown kind", Edit{Kind: 99}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Apply(r, orig, tc.e, tc.word, tc.filler); !errors.Is(err, ErrBadEdit) {
				t.Errorf("Apply(%s) err = %v, want ErrBadEdit", tc.e, err)
			}
		})
	}
}

func TestGenerateDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	origs := [][]byte{randomText(r, 300, 40), randomText(r, 500, 40), randomText(r, 30, 40)}
	o := GenOptions{Seed: 42, Counts: []int{1, 5, 40}, Boilerplate: []byte("footer text here")}
	collect := func(o GenOptions) map[string][]byte {
		out := map[string][]byte{}
		err := Generate(origs, o, func(v Variant) error {
			out[v.Edit.String()+"/"+string(rune('0'+v.Original))] = v.Text
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := collect(o), collect(o)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("runs made %d and %d variants", len(a), len(b))
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			t.Fatalf("variant %s differs between runs", k)
		}
	}
	// Removing 40 words from a 30-word original does not fit: left out.
	if _, ok := a["remove 40 random/2"]; ok {
		t.Error("impossible edit generated")
	}
	// A variant does not depend on which other variants are generated.
	only := o
	only.Kinds = []EditKind{Remove}
	for k, v := range collect(only) {
		if !bytes.Equal(v, a[k]) {
			t.Fatalf("variant %s changes when other kinds are left out", k)
		}
	}
	o.Seed = 43
	if c := collect(o); bytes.Equal(c["insert 5 random/0"], a["insert 5 random/0"]) {
		t.Error("another seed gives the same variant")
	}
}

func FuzzApply(f *testing.F) {
	f.Add([]byte("a b c d e f g"), uint8(1), 3, uint8(0), 0.3, 2, 5, []byte("x y z"))
	f.Add([]byte(""), uint8(3), 0, uint8(1), 0.9, 0, 0, []byte(""))
	f.Fuzz(func(t *testing.T, text []byte, kind uint8, n int, spread uint8, frac float64, sec, secs int, filler []byte) {
		if n > 1000 {
			return // bounded work, not a property
		}
		e := Edit{Kind: EditKind(kind), Count: n, Spread: Spread(spread % 2), Fraction: frac, Section: sec, Sections: secs}
		out, err := Apply(rand.New(rand.NewPCG(1, 2)), text, e, "w", filler)
		if err != nil {
			if !errors.Is(err, ErrBadEdit) {
				t.Fatalf("Apply(%s): unexpected error %v", e, err)
			}
			return
		}
		if e.Kind == Insert && len(words(out)) != len(words(text))+n {
			t.Fatalf("insert %d: %d words from %d", n, len(words(out)), len(words(text)))
		}
	})
}
