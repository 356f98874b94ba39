package chunk

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// words is a small English vocabulary for generated text.
var words = strings.Fields(`the of and to a in is that for it as was with be by on not he this
are or his from at which but have an they you were her she there all one their we can has
been if more when will would who so no document records retention legal hold copy policy
section licence software distribution permission notice warranty provided without any
express implied including limited merchantability fitness particular purpose author
liable claim damages contract package maintainer debian upstream source binary version`)

// text returns n bytes of deterministic pseudo-English text.
func text(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var b bytes.Buffer
	for b.Len() < n {
		w := words[min(r.IntN(len(words)), r.IntN(len(words)))] // favour common words
		b.WriteString(w)
		if r.IntN(12) == 0 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		p     Params
		field string // substring of the error; "" means valid
	}{
		{"default", DefaultParams(), ""},
		{"small", Params{Min: 16, Avg: 64, Max: 128}, ""},
		{"zero min", Params{Min: 0, Avg: 1024, Max: 8192}, "Min 0"},
		{"avg not power of two", Params{Min: 256, Avg: 1000, Max: 8192}, "Avg 1000"},
		{"avg too small", Params{Min: 8, Avg: 32, Max: 64}, "Avg 32"},
		{"min not below avg", Params{Min: 1024, Avg: 1024, Max: 8192}, "Min 1024 is not less than Avg"},
		{"max not above avg", Params{Min: 256, Avg: 1024, Max: 1024}, "Max 1024"},
		{"max too large", Params{Min: 256, Avg: 1024, Max: MaxLen + 1}, "Max 1073741825"},
		{"zero value", Params{}, "Min 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidParams) {
				t.Fatalf("Validate() = %v, want ErrInvalidParams", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Validate() = %q, want it to mention %q", err, tt.field)
			}
		})
	}
}

// checkChunks verifies that chunks cover data exactly, with correct hashes
// and lengths within bounds.
func checkChunks(t *testing.T, p Params, data []byte, chunks []Chunk) {
	t.Helper()
	off := 0
	for i, c := range chunks {
		if c.Len == 0 || off+int(c.Len) > len(data) {
			t.Fatalf("chunk %d: length %d at offset %d overruns %d bytes", i, c.Len, off, len(data))
		}
		if int(c.Len) > p.Max {
			t.Fatalf("chunk %d: length %d > Max %d", i, c.Len, p.Max)
		}
		if i < len(chunks)-1 && int(c.Len) < p.Min {
			t.Fatalf("chunk %d of %d: length %d < Min %d", i, len(chunks), c.Len, p.Min)
		}
		if h := xxhash.Sum64(data[off : off+int(c.Len)]); c.Hash != h {
			t.Fatalf("chunk %d: hash %#x, want %#x", i, c.Hash, h)
		}
		off += int(c.Len)
	}
	if off != len(data) {
		t.Fatalf("chunks cover %d bytes of %d", off, len(data))
	}
}

func TestAppend(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		name string
		data []byte
		// wantMinChunks and wantMaxChunks bound the number of chunks.
		wantMinChunks, wantMaxChunks int
	}{
		{"empty", nil, 0, 0},
		{"one byte", []byte("x"), 1, 1},
		{"min bytes", text(1, 256), 1, 1},
		{"short", text(1, 1000), 1, 4},
		{"text", text(2, 1<<20), 500, 1500},
		{"random", randomBytes(3, 1<<20), 500, 1500},
		{"one byte repeated", bytes.Repeat([]byte{'a'}, 1<<20), 128, 4096},
		{"zero bytes", make([]byte, 1<<20), 128, 4096},
		{"short pattern repeated", bytes.Repeat([]byte("ab "), 1<<18), 96, 3072},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := Append(p, nil, tt.data)
			checkChunks(t, p, tt.data, chunks)
			if n := len(chunks); n < tt.wantMinChunks || n > tt.wantMaxChunks {
				t.Errorf("%d chunks, want %d..%d", n, tt.wantMinChunks, tt.wantMaxChunks)
			}
			if len(chunks) > 0 && Cut(p, tt.data) != int(chunks[0].Len) {
				t.Errorf("Cut = %d, first chunk %d", Cut(p, tt.data), chunks[0].Len)
			}
		})
	}
}

// TestRepetitive checks that degenerate text never explodes into chunks
// shorter than Min.
func TestRepetitive(t *testing.T) {
	p := DefaultParams()
	for _, b := range []byte{0, ' ', 'a', 'e', 0xff} {
		data := bytes.Repeat([]byte{b}, 1<<20)
		chunks := Append(p, nil, data)
		for i, c := range chunks[:len(chunks)-1] {
			if int(c.Len) < p.Min {
				t.Fatalf("byte %#x: chunk %d has %d bytes, below Min", b, i, c.Len)
			}
		}
		if len(chunks) > len(data)/p.Min+1 {
			t.Errorf("byte %#x: %d chunks, more than len/Min+1", b, len(chunks))
		}
	}
}

// TestChunkSizes checks the average chunk length on text stays near Avg.
func TestChunkSizes(t *testing.T) {
	tests := []struct {
		name string
		p    Params
	}{
		{"default", DefaultParams()},
		{"fine", Params{Min: 64, Avg: 128, Max: 1024}},
		{"coarse", Params{Min: 1024, Avg: 4096, Max: 32768}},
	}
	data := text(4, 8<<20)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := Append(tt.p, nil, data)
			mean := float64(len(data)) / float64(len(chunks))
			t.Logf("mean chunk %.0f bytes for Avg %d", mean, tt.p.Avg)
			if mean < 0.9*float64(tt.p.Avg) || mean > 1.6*float64(tt.p.Avg) {
				t.Errorf("mean chunk %.0f bytes, want within [0.9, 1.6]·Avg", mean)
			}
		})
	}
}

// TestResync checks that boundaries are content-defined: an insertion or
// deletion changes only the chunks around it.
func TestResync(t *testing.T) {
	p := DefaultParams()
	orig := text(5, 256<<10)
	mid := len(orig) / 2
	tests := []struct {
		name   string
		edited []byte
	}{
		{"insert 1 byte at front", append([]byte("x"), orig...)},
		{"insert 100 bytes at front", append(text(6, 100), orig...)},
		{"insert 5000 bytes at front", append(text(7, 5000), orig...)},
		{"delete 10 bytes at front", orig[10:]},
		{"insert in the middle", append(append(append([]byte{}, orig[:mid]...), "INSERTED "...), orig[mid:]...)},
		{"delete in the middle", append(append([]byte{}, orig[:mid]...), orig[mid+50:]...)},
	}
	a := Append(p, nil, orig)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Append(p, nil, tt.edited)
			set := make(map[Chunk]bool, len(a))
			for _, c := range a {
				set[c] = true
			}
			shared := 0
			for _, c := range b {
				if set[c] {
					shared += int(c.Len)
				}
			}
			// An edit disturbs the chunk it lands in and, rarely, the next
			// one or two.
			if lost := len(orig) - shared; lost > 4*p.Max {
				t.Errorf("%d of %d bytes no longer in shared chunks, want at most %d", lost, len(orig), 4*p.Max)
			}
		})
	}
}

// cutReference is Cut written as plainly as the algorithm is described.
func cutReference(p Params, data []byte) int {
	if len(data) <= p.Min {
		return len(data)
	}
	small, large := masks(p.Avg)
	var h uint64
	for i := p.Min; i < min(len(data), p.Max); i++ {
		h = h<<1 + gear[data[i]]
		mask := large
		if i < p.Avg {
			mask = small
		}
		if h&mask == 0 {
			return i + 1
		}
	}
	return min(len(data), p.Max)
}

func TestCutMatchesReference(t *testing.T) {
	params := []Params{DefaultParams(), {Min: 16, Avg: 64, Max: 100}, {Min: 1, Avg: 64, Max: 4096}}
	inputs := map[string][]byte{
		"text":   text(11, 1<<20),
		"random": randomBytes(12, 1<<20),
		"zeros":  make([]byte, 1<<16),
	}
	for name, data := range inputs {
		for _, p := range params {
			t.Run(fmt.Sprintf("%s/%d-%d-%d", name, p.Min, p.Avg, p.Max), func(t *testing.T) {
				for off := 0; off < len(data); {
					got, want := Cut(p, data[off:]), cutReference(p, data[off:])
					if got != want {
						t.Fatalf("at offset %d: Cut = %d, reference %d", off, got, want)
					}
					off += got
				}
			})
		}
	}
}

// TestCutGolden pins the boundaries of a fixed input: they change only with
// the gear table, the masks or the parameters, which changes stored
// fingerprints: the scheme (index.Options.Scheme) does not cover them, so
// such a change needs a new scheme string (index/docs/format.md).
func TestCutGolden(t *testing.T) {
	chunks := Append(DefaultParams(), nil, randomBytes(42, 16<<10))
	var got []uint32
	for _, c := range chunks {
		got = append(got, c.Len)
	}
	want := []uint32{1094, 1531, 1130, 1155, 1231, 1251, 1513, 863, 313, 303, 1086, 1109, 1344, 1113, 279, 1059, 10}
	if !equal(got, want) {
		t.Errorf("chunk lengths %v, want %v", got, want)
	}
	if h := chunks[0].Hash; h != 0x7ec02c2a11f62f26 {
		t.Errorf("first chunk hash %#x", h)
	}
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gearFromSeed is how gear.go was generated: splitmix64 from the seed
// 0x73696d6465782d67 ("simdex-g").
func gearFromSeed() [256]uint64 {
	var g [256]uint64
	x := uint64(0x73696d6465782d67)
	for i := range g {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		g[i] = z ^ z>>31
	}
	return g
}

func TestGearTable(t *testing.T) {
	if gearFromSeed() != gear {
		t.Error("gear table does not match its seed")
	}
}

func TestCutAllocs(t *testing.T) {
	data := text(8, 64<<10)
	p := DefaultParams()
	if n := testing.AllocsPerRun(10, func() { Cut(p, data) }); n != 0 {
		t.Errorf("Cut: %v allocations", n)
	}
	dst := make([]Chunk, 0, 1024)
	if n := testing.AllocsPerRun(10, func() { dst = Append(p, dst[:0], data) }); n != 0 {
		t.Errorf("Append: %v allocations", n)
	}
}

func FuzzAppend(f *testing.F) {
	f.Add([]byte("hello world"), uint8(0))
	f.Add(text(9, 5000), uint8(1))
	f.Add(bytes.Repeat([]byte{0}, 3000), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		p := []Params{DefaultParams(), {Min: 16, Avg: 64, Max: 100}, {Min: 63, Avg: 64, Max: 65}}[int(which)%3]
		chunks := Append(p, nil, data)
		checkChunks(t, p, data, chunks)
		if got, want := Cut(p, data), cutReference(p, data); got != want {
			t.Fatalf("Cut = %d, reference %d", got, want)
		}
		// Cut looks only at the bytes of the chunk it returns.
		if len(chunks) > 0 {
			c := int(chunks[0].Len)
			if got := Cut(p, data[:c]); got != c {
				t.Fatalf("Cut(data[:%d]) = %d", c, got)
			}
		}
	})
}

func BenchmarkCut(b *testing.B) {
	data := text(10, 8<<20)
	p := DefaultParams()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for d := data; len(d) > 0; {
			d = d[Cut(p, d):]
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	data := text(10, 8<<20)
	p := DefaultParams()
	dst := make([]Chunk, 0, len(data)/p.Min)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		dst = Append(p, dst[:0], data)
	}
}
