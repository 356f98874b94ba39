package fleettest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Corpus sizes: a vocabulary large enough that two groups share no
// 20-byte shingle by chance, texts of a page, and few edits per copy so
// that every copy is a near-copy of its group's seed (resemblance about
// 0.9) and of nothing else.
const (
	vocabulary = 4000
	seedWords  = 200
	editsPer   = 3
)

// Object is one upload of a Corpus.
type Object struct {
	Key   string // the object key in the bucket
	Body  string
	Group int // its near-copy group
	Copy  int // 0 for the group's seed, which the others are edited from
}

// Corpus is a seeded set of near-copy groups: in each, a seed text and
// copies of it with a few words replaced.
type Corpus struct {
	Groups [][]Object
}

// NewCorpus returns uploads objects (rounded up to whole groups) in groups
// of groupSize, the same for the same seed.
func NewCorpus(seed uint64, uploads, groupSize int) Corpus {
	rng := rand.New(rand.NewPCG(seed, 30))
	vocab := make([]string, vocabulary)
	for i := range vocab {
		vocab[i] = word(rng)
	}
	groups := (uploads + groupSize - 1) / groupSize
	c := Corpus{Groups: make([][]Object, groups)}
	for g := range groups {
		words := make([]string, seedWords)
		for i := range words {
			words[i] = vocab[rng.IntN(len(vocab))]
		}
		for k := range groupSize {
			text := words
			if k > 0 {
				text = append([]string(nil), words...)
				for range editsPer {
					text[rng.IntN(len(text))] = vocab[rng.IntN(len(vocab))]
				}
			}
			c.Groups[g] = append(c.Groups[g], Object{
				Key:   fmt.Sprintf("groups/%05d/copy-%02d.txt", g, k),
				Body:  fmt.Sprintf("Record %d.\n%s\n", g, strings.Join(text, " ")),
				Group: g, Copy: k,
			})
		}
	}
	return c
}

// Seeds returns each group's seed.
func (c Corpus) Seeds() []Object {
	out := make([]Object, len(c.Groups))
	for g, objs := range c.Groups {
		out[g] = objs[0]
	}
	return out
}

// Copies returns every object but the seeds, interleaving the groups so
// that each group's copies arrive spread over the whole upload.
func (c Corpus) Copies() []Object {
	var out []Object
	for k := 1; len(c.Groups) > 0 && k < len(c.Groups[0]); k++ {
		for _, objs := range c.Groups {
			out = append(out, objs[k])
		}
	}
	return out
}

// Len returns the number of objects.
func (c Corpus) Len() int {
	n := 0
	for _, objs := range c.Groups {
		n += len(objs)
	}
	return n
}

// word returns a random lowercase word of 4 to 10 letters.
func word(rng *rand.Rand) string {
	b := make([]byte, 4+rng.IntN(7))
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}
