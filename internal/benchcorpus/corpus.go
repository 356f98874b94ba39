package benchcorpus

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/simdex/simdex/index"
)

// Generator is the version of the text generator and of the group layout:
// it is bumped whenever any document's bytes or any group change, so that
// cached fixtures built by another version are rebuilt.
const Generator = 1

// Spec describes a collection. The zero value of every field but Docs
// takes its default (see WithDefaults).
type Spec struct {
	// Docs is how many documents the collection holds.
	Docs int `json:"docs"`
	// Seed selects the collection; the default is 1.
	Seed uint64 `json:"seed"`
	// Groups is how many near-copy groups are planted among the documents;
	// the default is one per 50 documents. Each group holds a seed and 1
	// to MaxMembers near-copies, 5.5 documents on average at the default.
	Groups int `json:"groups"`
	// MaxMembers bounds the near-copies of one seed (1 to 15); default 8.
	MaxMembers int `json:"max_members"`
	// KeepText builds the fixture's index with index.Options.KeepText, as
	// the daemon runs it (reviewers' diffs). It does not change the
	// documents.
	KeepText bool `json:"keep_text"`
	// Sources is the corpora directory the text model is trained on;
	// empty is SourcesDir. The unit tests train it on the committed
	// fixtures (internal/corpustest), the benchmarks on the full corpora.
	// Fixtures record the trained text's hash, not the directory.
	Sources string `json:"-"`
}

// WithDefaults returns s with its defaults filled in.
func (s Spec) WithDefaults() Spec {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.MaxMembers == 0 {
		s.MaxMembers = 8
	}
	if s.Groups == 0 {
		s.Groups = s.Docs / 50
	}
	return s
}

// Validate reports an unusable spec.
func (s Spec) Validate() error {
	s = s.WithDefaults()
	switch {
	case s.Docs < 1:
		return fmt.Errorf("benchcorpus spec: docs: %d is below 1", s.Docs)
	case s.Groups < 0:
		return fmt.Errorf("benchcorpus spec: groups: %d is negative", s.Groups)
	case s.MaxMembers < 1 || s.MaxMembers > 15:
		return fmt.Errorf("benchcorpus spec: max_members: %d is not in [1, 15]", s.MaxMembers)
	case s.Groups*(1+s.MaxMembers) > s.Docs:
		return fmt.Errorf("benchcorpus spec: %d groups of up to %d documents do not fit in %d documents", s.Groups, 1+s.MaxMembers, s.Docs)
	}
	return nil
}

// Kind is how a planted member derives from its group's seed.
type Kind uint8

// Kinds of planted members.
const (
	// Edited is the seed with 0.5–3 % of its words inserted, deleted or
	// replaced: a new version (resemblance about 0.7–0.95).
	Edited Kind = iota + 1
	// Excerpt is a contiguous 55–90 % of the seed: it is contained in the
	// seed.
	Excerpt
	// Superset is the seed forwarded inside a longer message: the seed is
	// contained in it.
	Superset
	// Exact is the seed's text with other line breaks and spacing: the same
	// normalised text in other bytes.
	Exact
	// SameBytes is a byte-identical copy of the seed under another key.
	SameBytes
)

func (k Kind) String() string {
	switch k {
	case Edited:
		return "edited"
	case Excerpt:
		return "excerpt"
	case Superset:
		return "superset"
	case Exact:
		return "exact"
	case SameBytes:
		return "same-bytes"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Member is one planted near-copy: the document number and how it derives
// from the seed.
type Member struct {
	Doc  int
	Kind Kind
}

// Group is the ground truth of one planted group: a seed and its
// near-copies, every one of them within the index's default thresholds of
// the seed. Document numbers are in increasing order, the seed first, so
// the seed is always the oldest.
type Group struct {
	Seed    int
	Members []Member
}

// Corpus is a deterministic collection. It is safe for concurrent use.
type Corpus struct {
	spec   Spec
	m      *model
	groups []Group
	// role[i] is 0 for an unplanted document, else (g+1)<<4 | k where k
	// is 0 for the seed of group g and j+1 for its member j.
	role []uint32
	bufs sync.Pool
}

var (
	modelMu sync.Mutex
	models  = map[string]*model{}
)

// sharedModel trains the model of the corpora at dir (SourcesDir when
// empty) once per process.
func sharedModel(dir string) (*model, error) {
	if dir == "" {
		d, err := SourcesDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	modelMu.Lock()
	defer modelMu.Unlock()
	if m, ok := models[dir]; ok {
		return m, nil
	}
	m, err := loadModel(dir)
	if err != nil {
		return nil, err
	}
	models[dir] = m
	return m, nil
}

// New returns the collection of spec, training the text model on the
// corpora at spec.Sources (SourcesDir when empty) the first time.
func New(spec Spec) (*Corpus, error) {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	m, err := sharedModel(spec.Sources)
	if err != nil {
		return nil, err
	}
	c := &Corpus{spec: spec, m: m}
	c.layout()
	return c, nil
}

// Spec returns the collection's spec, defaults filled in.
func (c *Corpus) Spec() Spec { return c.spec }

// Len returns how many documents the collection holds.
func (c *Corpus) Len() int { return c.spec.Docs }

// SourcesHash identifies the text the model was trained on.
func (c *Corpus) SourcesHash() string { return c.m.hash }

// Groups returns the planted groups (shared: do not modify).
func (c *Corpus) Groups() []Group { return c.groups }

// GroupOf returns the group document i belongs to and its kind (0 for the
// seed), or ok false for an unplanted document.
func (c *Corpus) GroupOf(i int) (g int, k Kind, ok bool) {
	if i < 0 || i >= len(c.role) || c.role[i] == 0 {
		return 0, 0, false
	}
	r := c.role[i]
	g, j := int(r>>4)-1, int(r&15)
	if j == 0 {
		return g, 0, true
	}
	return g, c.groups[g].Members[j-1].Kind, true
}

// layout chooses the groups, their members' kinds and their positions.
func (c *Corpus) layout() {
	s := c.spec
	r := rand.New(rand.NewPCG(s.Seed, 0x6c61796f7574))
	sizes := make([]int, s.Groups)
	total := 0
	for g := range sizes {
		sizes[g] = 2 + r.IntN(s.MaxMembers)
		total += sizes[g]
	}
	// Partial Fisher–Yates: the first total entries of perm are distinct
	// random positions.
	perm := make([]int32, s.Docs)
	for i := range perm {
		perm[i] = int32(i)
	}
	for j := 0; j < total; j++ {
		k := j + r.IntN(s.Docs-j)
		perm[j], perm[k] = perm[k], perm[j]
	}
	c.role = make([]uint32, s.Docs)
	c.groups = make([]Group, s.Groups)
	off := 0
	for g, n := range sizes {
		pos := perm[off : off+n]
		off += n
		slices.Sort(pos)
		grp := Group{Seed: int(pos[0]), Members: make([]Member, n-1)}
		c.role[pos[0]] = uint32(g+1) << 4
		for j := range grp.Members {
			grp.Members[j] = Member{Doc: int(pos[j+1]), Kind: drawKind(r)}
			c.role[pos[j+1]] = uint32(g+1)<<4 | uint32(j+1)
		}
		c.groups[g] = grp
	}
}

// drawKind draws a member kind: half edited versions, then excerpts,
// supersets, exact and byte-identical copies.
func drawKind(r *rand.Rand) Kind {
	switch x := r.IntN(20); {
	case x < 10:
		return Edited
	case x < 14:
		return Excerpt
	case x < 17:
		return Superset
	case x < 19:
		return Exact
	default:
		return SameBytes
	}
}

// Sizes of generated text, in bytes: log-normal around a median, clamped.
const (
	medianSize = 3000
	sizeSigma  = 0.6
	minSize    = 400
	maxSize    = 32 << 10
	minSeed    = 1500 // seeds are long enough for their excerpts to be found
)

func drawSize(r *rand.Rand) int {
	x := math.Exp(math.Log(medianSize) + sizeSigma*r.NormFloat64())
	return int(min(max(x, minSize), maxSize))
}

// Text returns the bytes of document i. Numbers from Len() on are fresh
// unplanted documents that are not in the collection's index (new uploads).
func (c *Corpus) Text(i int) []byte { return c.AppendText(nil, i) }

// AppendText appends the bytes of document i to dst (see Text).
func (c *Corpus) AppendText(dst []byte, i int) []byte {
	g, k, ok := c.GroupOf(i)
	switch {
	case !ok:
		r := rand.New(rand.NewPCG(c.spec.Seed, uint64(i)))
		return c.m.appendText(dst, r, drawSize(r))
	case k == 0:
		return c.appendSeed(dst, g)
	}
	r := rand.New(rand.NewPCG(c.spec.Seed^memberStream, uint64(i)))
	return c.derive(dst, c.seedText(g), k, r)
}

// Streams of the random generator, so that documents, members and uploads
// never share random numbers.
const (
	memberStream = 0x6d656d626572
	uploadStream = 0x75706c6f6164
)

func (c *Corpus) appendSeed(dst []byte, g int) []byte {
	r := rand.New(rand.NewPCG(c.spec.Seed, uint64(c.groups[g].Seed)))
	return c.m.appendText(dst, r, max(minSeed, drawSize(r)))
}

func (c *Corpus) seedText(g int) []byte {
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	seed := c.appendSeed((*bp)[:0], g)
	out := bytes.Clone(seed)
	*bp = seed
	c.bufs.Put(bp)
	return out
}

// NearCopy returns a fresh edited version of group g's seed that is not
// in the collection (an upload that must match the group), distinct for
// each salt.
func (c *Corpus) NearCopy(g int, salt uint64) []byte {
	r := rand.New(rand.NewPCG(c.spec.Seed^uploadStream, salt<<32|uint64(g)))
	return c.derive(nil, c.seedText(g), Edited, r)
}

// derive appends to dst a member of kind k made from the seed's text.
func (c *Corpus) derive(dst, seed []byte, k Kind, r *rand.Rand) []byte {
	switch k {
	case SameBytes:
		return append(dst, seed...)
	case Exact:
		// Other line breaks and spacing: the same normalised text.
		for _, b := range seed {
			switch {
			case b == '\n':
				dst = append(dst, '\r', '\n')
			case b == ' ' && r.IntN(8) == 0:
				dst = append(dst, ' ', ' ')
			default:
				dst = append(dst, b)
			}
		}
		return dst
	case Excerpt:
		words := bytes.Fields(seed)
		n := len(words) * (55 + r.IntN(36)) / 100
		lo := r.IntN(len(words) - n + 1)
		return appendJoined(dst, words[lo:lo+n])
	case Superset:
		dst = fmt.Appendf(dst, "From: %s %s\nTo: %s\nSubject: Fwd: %s %s %s\n\n",
			c.m.word(r), c.m.word(r), c.m.word(r), c.m.word(r), c.m.word(r), c.m.word(r))
		dst = c.m.appendText(dst, r, len(seed)*(20+r.IntN(40))/100)
		dst = append(dst, "\n---------- Forwarded message ----------\n"...)
		dst = append(dst, seed...)
		dst = append(dst, "\n--\n"...)
		return c.m.appendText(dst, r, 80+r.IntN(200))
	}
	// Edited: 0.5–3 % of the words (at least one) inserted, deleted or
	// replaced.
	words := bytes.Fields(seed)
	n := max(1, len(words)*(5+r.IntN(26))/1000)
	for range n {
		p := r.IntN(len(words))
		switch r.IntN(3) {
		case 0:
			words = slices.Insert(words, p, []byte(c.m.word(r)))
		case 1:
			if len(words) > 1 {
				words = slices.Delete(words, p, p+1)
			}
		default:
			words[p] = []byte(c.m.word(r))
		}
	}
	return appendJoined(dst, words)
}

// appendJoined appends words separated by spaces, breaking lines after
// about 72 bytes as a text editor would.
func appendJoined(dst []byte, words [][]byte) []byte {
	col := 0
	for i, w := range words {
		if i > 0 {
			if col+len(w) > 72 {
				dst, col = append(dst, '\n'), 0
			} else {
				dst, col = append(dst, ' '), col+1
			}
		}
		dst = append(dst, w...)
		col += len(w)
	}
	return append(dst, '\n')
}

// Source, bucket and key prefix of every document: the index sees them as
// objects of a versioned S3 bucket.
const (
	Source = "s3:bench"
	Bucket = "records"
)

// Name returns the object key of document i ("docs/0001234.txt").
func (c *Corpus) Name(i int) string { return fmt.Sprintf("docs/%07d.txt", i) }

// Key returns the index key of document i.
func (c *Corpus) Key(i int) string { return Source + "/" + Bucket + "/" + c.Name(i) }

// epoch is the modification time of document 0; document i is i seconds
// younger.
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Doc returns the index description of document i.
func (c *Corpus) Doc(i int) index.Doc {
	return index.Doc{
		Key:          c.Key(i),
		VersionID:    "v1",
		Name:         c.Name(i),
		Source:       Source,
		MediaType:    "text/plain",
		ModTime:      epoch.Add(time.Duration(i) * time.Second),
		KeepVersions: true,
	}
}

// Input returns document i ready for index.Add, its text in a new slice.
func (c *Corpus) Input(i int) index.Input {
	text := c.Text(i)
	return index.Input{Doc: c.Doc(i), RawSHA256: sha256.Sum256(text), RawSize: int64(len(text)), Text: text, Parent: -1}
}
