package eval

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
)

// EditKind is a kind of controlled modification.
type EditKind uint8

// The controlled modifications of the seed studies.
const (
	// Insert inserts a word Count times.
	Insert EditKind = iota + 1
	// Remove removes Count words.
	Remove
	// Augment inserts, at a random place, a span of unrelated text of
	// Fraction of the file's length (SI v2).
	Augment
	// Reduce removes a random span of Fraction of the file (SI v2).
	Reduce
	// Prefix keeps the first Section of Sections equal sections.
	Prefix
	// Boilerplate appends shared boilerplate, Fraction of the result's
	// length, to a file.
	Boilerplate
)

var editNames = map[EditKind]string{
	Insert: "insert", Remove: "remove", Augment: "augment",
	Reduce: "reduce", Prefix: "prefix", Boilerplate: "boilerplate",
}

// String names the kind.
func (k EditKind) String() string {
	if s, ok := editNames[k]; ok {
		return s
	}
	return fmt.Sprintf("EditKind(%d)", uint8(k))
}

// Spread says where repeated edits fall.
type Spread uint8

// Spreads of Insert and Remove.
const (
	// Random places each edit independently at random.
	Random Spread = iota
	// Uniform spreads the edits evenly over the text (worse for sampling
	// algorithms, as the seed study found).
	Uniform
)

// String names the spread.
func (s Spread) String() string {
	if s == Uniform {
		return "uniform"
	}
	return "random"
}

// Edit is one controlled modification.
type Edit struct {
	Kind EditKind
	// Count is the number of words inserted or removed.
	Count int
	// Spread places Insert and Remove edits.
	Spread Spread
	// Fraction is the share of the file added or removed (Augment,
	// Reduce) or the boilerplate's share of the result (Boilerplate).
	Fraction float64
	// Section and Sections choose the prefix: the first Section of
	// Sections.
	Section, Sections int
}

// String describes the edit ("insert 5 random", "prefix 3/10").
func (e Edit) String() string {
	switch e.Kind {
	case Insert, Remove:
		return fmt.Sprintf("%s %d %s", e.Kind, e.Count, e.Spread)
	case Augment, Reduce, Boilerplate:
		return fmt.Sprintf("%s %.2f", e.Kind, e.Fraction)
	case Prefix:
		return fmt.Sprintf("prefix %d/%d", e.Section, e.Sections)
	}
	return e.Kind.String()
}

// ErrBadEdit reports an edit that cannot be applied.
var ErrBadEdit = errors.New("bad edit")

// Apply returns text (normalised: words separated by single spaces)
// modified by e. word is the word Insert inserts; filler is the unrelated
// text Augment takes its span from and the boilerplate Boilerplate
// appends. r supplies every random choice, so equal seeds give equal
// results.
func Apply(r *rand.Rand, text []byte, e Edit, word string, filler []byte) ([]byte, error) {
	words := strings.Fields(string(text))
	switch e.Kind {
	case Insert:
		if e.Count < 0 || word == "" {
			return nil, fmt.Errorf("%w: %s with word %q", ErrBadEdit, e, word)
		}
		for _, p := range positions(r, len(words)+1, e.Count, e.Spread, true) {
			words = slices.Insert(words, p, word)
		}
	case Remove:
		if e.Count < 0 || e.Count >= len(words) {
			return nil, fmt.Errorf("%w: %s from %d words", ErrBadEdit, e, len(words))
		}
		ps := positions(r, len(words), e.Count, e.Spread, false)
		for _, p := range ps { // descending: earlier positions stay valid
			words = slices.Delete(words, p, p+1)
		}
	case Augment:
		if !(e.Fraction > 0 && e.Fraction <= 1) {
			return nil, fmt.Errorf("%w: %s: fraction not in (0, 1]", ErrBadEdit, e)
		}
		fw := strings.Fields(string(filler))
		n := int(e.Fraction * float64(len(words)))
		if n > len(fw) {
			return nil, fmt.Errorf("%w: %s needs %d filler words, have %d", ErrBadEdit, e, n, len(fw))
		}
		from := r.IntN(len(fw) - n + 1)
		at := r.IntN(len(words) + 1)
		words = slices.Insert(words, at, fw[from:from+n]...)
	case Reduce:
		if !(e.Fraction > 0 && e.Fraction < 1) {
			return nil, fmt.Errorf("%w: %s: fraction not in (0, 1)", ErrBadEdit, e)
		}
		n := int(e.Fraction * float64(len(words)))
		if n >= len(words) {
			return nil, fmt.Errorf("%w: %s of %d words", ErrBadEdit, e, len(words))
		}
		at := r.IntN(len(words) - n + 1)
		words = slices.Delete(words, at, at+n)
	case Prefix:
		if e.Sections < 1 || e.Section < 1 || e.Section > e.Sections || len(words) < e.Sections {
			return nil, fmt.Errorf("%w: %s of %d words", ErrBadEdit, e, len(words))
		}
		words = words[:len(words)*e.Section/e.Sections]
	case Boilerplate:
		if !(e.Fraction > 0 && e.Fraction < 1) {
			return nil, fmt.Errorf("%w: %s: share not in (0, 1)", ErrBadEdit, e)
		}
		bw := strings.Fields(string(filler))
		// Boilerplate b of the result: b = B/(W+B), so W = B(1-b)/b.
		keep := min(len(words), int(float64(len(bw))*(1-e.Fraction)/e.Fraction))
		if keep < 1 || len(bw) == 0 {
			return nil, fmt.Errorf("%w: %s with %d boilerplate words", ErrBadEdit, e, len(bw))
		}
		words = append(words[:keep:keep], bw...)
	default:
		return nil, fmt.Errorf("%w: unknown kind %d", ErrBadEdit, e.Kind)
	}
	return []byte(strings.Join(words, " ")), nil
}

// positions returns count edit positions in [0, n), descending. Insertion
// positions may repeat (inserting twice at a place); removal positions
// are distinct.
func positions(r *rand.Rand, n, count int, s Spread, repeat bool) []int {
	var ps []int
	if s == Uniform {
		for j := range count {
			ps = append(ps, int((float64(j)+0.5)*float64(n)/float64(count)))
		}
	} else if repeat {
		for range count {
			ps = append(ps, r.IntN(n))
		}
	} else {
		ps = r.Perm(n)[:count]
	}
	slices.Sort(ps)
	slices.Reverse(ps)
	return ps
}

// GenOptions configure Generate.
type GenOptions struct {
	// Seed makes the corpus reproducible.
	Seed uint64
	// Counts are the numbers of words inserted or removed (default 1…50).
	Counts []int
	// Word is the inserted word (default "a", as in the seed study).
	Word string
	// Fractions are the spans added or removed (default 0.05, 0.1, 0.2 …
	// 0.8; SI v2 used random spans up to 80 %).
	Fractions []float64
	// Sections is n of the "first k of n sections" containment variants
	// (default 10).
	Sections int
	// Boilerplate is appended to originals for the boilerplate variants;
	// none are made when it is empty.
	Boilerplate []byte
	// BoilerplateShares are the boilerplate's shares of the result
	// (default 0.1, 0.2 … 0.5).
	BoilerplateShares []float64
	// Kinds restricts the kinds generated (default all).
	Kinds []EditKind
}

func (o *GenOptions) defaults() {
	if o.Counts == nil {
		for i := 1; i <= 50; i++ {
			o.Counts = append(o.Counts, i)
		}
	}
	if o.Word == "" {
		o.Word = "a"
	}
	if o.Fractions == nil {
		o.Fractions = []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}
	}
	if o.Sections == 0 {
		o.Sections = 10
	}
	if o.BoilerplateShares == nil {
		o.BoilerplateShares = []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	}
	if o.Kinds == nil {
		o.Kinds = []EditKind{Insert, Remove, Augment, Reduce, Prefix, Boilerplate}
	}
}

// Variant is one generated near-copy of an original.
type Variant struct {
	// Original is the index of the original it was made from.
	Original int
	// Edit is the modification applied.
	Edit Edit
	// Text is the modified normalised text.
	Text []byte
}

// Generate calls fn with every variant of every original (normalised
// texts), in a fixed order. Each variant's randomness is seeded by
// (Seed, original, edit) alone, so a variant does not change when others
// are added. Augment takes its span from the next original, circularly.
// Edits that do not fit an original (removing more words than it has) are
// left out.
func Generate(originals [][]byte, o GenOptions, fn func(Variant) error) error {
	o.defaults()
	var edits []Edit
	for _, k := range o.Kinds {
		switch k {
		case Insert, Remove:
			for _, s := range []Spread{Random, Uniform} {
				for _, c := range o.Counts {
					edits = append(edits, Edit{Kind: k, Count: c, Spread: s})
				}
			}
		case Augment, Reduce:
			for _, f := range o.Fractions {
				edits = append(edits, Edit{Kind: k, Fraction: f})
			}
		case Prefix:
			for s := 1; s < o.Sections; s++ {
				edits = append(edits, Edit{Kind: k, Section: s, Sections: o.Sections})
			}
		case Boilerplate:
			if len(o.Boilerplate) == 0 {
				continue
			}
			for _, f := range o.BoilerplateShares {
				edits = append(edits, Edit{Kind: k, Fraction: f})
			}
		default:
			return fmt.Errorf("generate: %w: unknown kind %d", ErrBadEdit, k)
		}
	}
	for i, text := range originals {
		for _, e := range edits {
			filler := o.Boilerplate
			if e.Kind == Augment {
				filler = originals[(i+1)%len(originals)]
				if len(originals) == 1 {
					filler = text
				}
			}
			out, err := Apply(editRand(o.Seed, i, e), text, e, o.Word, filler)
			if errors.Is(err, ErrBadEdit) {
				continue
			}
			if err != nil {
				return fmt.Errorf("generate variant %s of original %d: %w", e, i, err)
			}
			if err := fn(Variant{Original: i, Edit: e, Text: out}); err != nil {
				return err
			}
		}
	}
	return nil
}

// editRand returns the random source of one variant.
func editRand(seed uint64, original int, e Edit) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %s", original, e)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
