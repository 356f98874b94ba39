package sketch

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func words(r *rand.Rand, n int) []string {
	vocab := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their")
	out := make([]string, n)
	for i := range out {
		out[i] = vocab[r.IntN(len(vocab))] + fmt.Sprint(r.IntN(50))
	}
	return out
}

func sk(t testing.TB, text string) Sketch {
	t.Helper()
	var s Sketch
	Compute(DefaultParams(), []byte(text), &s)
	return s
}

func TestIdenticalTextsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := strings.Join(words(r, 2000), " ")
	a, b := sk(t, text), sk(t, text)
	if got := Resemblance(a.MinHash, b.MinHash); got != 1 {
		t.Errorf("resemblance = %v, want 1", got)
	}
	if got := Containment(a.Samples, b.Samples); got != 1 {
		t.Errorf("containment = %v, want 1", got)
	}
	if a.SimHash != b.SimHash {
		t.Error("simhash differs")
	}
}

func TestNearCopiesScoreHighDistinctLow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	w := words(r, 3000)
	orig := strings.Join(w, " ")
	edited := append([]string(nil), w...)
	for i := 0; i < 10; i++ {
		edited[r.IntN(len(edited))] = "inserted"
	}
	other := strings.Join(words(r, 3000), " ")
	a, b, c := sk(t, orig), sk(t, strings.Join(edited, " ")), sk(t, other)
	if got := Resemblance(a.MinHash, b.MinHash); got < 0.8 {
		t.Errorf("near copy resemblance = %v, want >= 0.8", got)
	}
	if got := Resemblance(a.MinHash, c.MinHash); got > 0.1 {
		t.Errorf("distinct resemblance = %v, want <= 0.1", got)
	}
	if d := Hamming(a.SimHash, b.SimHash); d > 10 {
		t.Errorf("near copy hamming = %d", d)
	}
	if d := Hamming(a.SimHash, c.SimHash); d < 15 {
		t.Errorf("distinct hamming = %d", d)
	}
}

func TestContainmentOfExcerpt(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	w := words(r, 4000)
	whole := sk(t, strings.Join(w, " "))
	part := sk(t, strings.Join(w[1000:2000], " "))
	if got := Containment(part.Samples, whole.Samples); got < 0.95 {
		t.Errorf("excerpt in whole = %v, want >= 0.95", got)
	}
	if got := Containment(whole.Samples, part.Samples); got > 0.35 || got < 0.15 {
		t.Errorf("whole in excerpt = %v, want about 0.25", got)
	}
}

func TestShortAndEmptyTexts(t *testing.T) {
	e := sk(t, "")
	if len(e.MinHash) != 0 || len(e.Samples) != 0 || e.SimHash != 0 {
		t.Errorf("empty text sketch = %+v", e)
	}
	s := sk(t, "hi")
	if len(s.MinHash) != DefaultParams().MinHashK {
		t.Fatalf("short text has %d slots", len(s.MinHash))
	}
	if Resemblance(s.MinHash, sk(t, "hi").MinHash) != 1 {
		t.Error("short texts differ")
	}
	if Resemblance(s.MinHash, sk(t, "ho").MinHash) > 0.2 {
		t.Error("different short texts resemble")
	}
	if Resemblance(nil, nil) != 0 || Containment(nil, []uint32{1}) != 0 || SampleResemblance(nil, nil) != 0 {
		t.Error("empty estimators should be 0")
	}
}

func TestBandsMatchOnlyEqualRows(t *testing.T) {
	p := DefaultParams()
	mh := make([]uint32, p.MinHashK)
	a := Bands(p, mh, nil)
	if len(a) != p.Bands {
		t.Fatalf("got %d bands", len(a))
	}
	mh2 := append([]uint32(nil), mh...)
	mh2[0] = 7
	b := Bands(p, mh2, nil)
	if a[0] == b[0] || a[1] != b[1] {
		t.Error("band keys do not follow rows")
	}
	if a[0] == a[1] {
		t.Error("equal rows of different bands collide")
	}
}

func TestNear(t *testing.T) {
	got := Near([]uint64{0, 1, 3, 0xff}, 0, 2, nil)
	if fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("Near = %v", got)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Params{Window: 1, SampleN: 0, MinHashK: 10, Bands: 3, SimHashWords: 0}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidParams) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"window", "sample_n", "bands", "simhash_words"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestComputeReusesBuffers(t *testing.T) {
	var s Sketch
	Compute(DefaultParams(), bytes.Repeat([]byte("abc def "), 1000), &s)
	first := s.SimHash
	Compute(DefaultParams(), []byte("something else entirely here"), &s)
	Compute(DefaultParams(), bytes.Repeat([]byte("abc def "), 1000), &s)
	if s.SimHash != first {
		t.Error("result depends on previous use")
	}
}

func BenchmarkCompute(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	text := []byte(strings.Join(words(r, 200000), " "))
	b.SetBytes(int64(len(text)))
	var s Sketch
	for b.Loop() {
		Compute(DefaultParams(), text, &s)
	}
}

func FuzzCompute(f *testing.F) {
	f.Add([]byte("hello world"), uint8(20))
	f.Fuzz(func(t *testing.T, text []byte, w uint8) {
		p := DefaultParams()
		p.Window = int(w%60) + 4
		var s Sketch
		Compute(p, text, &s)
		if len(text) > 0 && len(s.MinHash) != p.MinHashK {
			t.Fatal("wrong slot count")
		}
		if !slicesSorted(s.Samples) {
			t.Fatal("samples not sorted")
		}
	})
}

func slicesSorted(a []uint32) bool {
	for i := 1; i < len(a); i++ {
		if a[i-1] >= a[i] {
			return false
		}
	}
	return true
}
