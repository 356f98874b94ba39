package index_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/internal/corpustest"
)

// TestQuotedAtAnyDepth checks that a text quoted in a reply at depths 1,
// 2 and 3, in the styles mail programs use, has the fingerprint of the
// text itself: quote markers are not words.
func TestQuotedAtAnyDepth(t *testing.T) {
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	text := corpus(t, "debian-docs/raw/debian-policy/usr/share/doc/debian-policy/policy.txt")[20000:26000]
	want, err := ix.Fingerprint([32]byte{}, 0, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"> ", ">> ", "> > ", ">>> ", "> > > "} {
		quoted := prefix + strings.ReplaceAll(text, "\n", "\n"+prefix)
		fp, err := ix.Fingerprint([32]byte{}, 0, []byte(quoted))
		if err != nil {
			t.Fatal(err)
		}
		if fp.TextSHA256 != want.TextSHA256 || fp.SimHash != want.SimHash || len(fp.Samples) != len(want.Samples) {
			t.Errorf("quoted with %q: another fingerprint than the text's", prefix)
		}
	}
}

// TestPolicyAcrossFormats indexes the Debian policy manual's TXT and PDF
// editions and one of its HTML chapters, extracted by the extractor, and
// checks that the chapter is found inside both books (containment at
// least 0.9) and that the two books are near-copies.
func TestPolicyAcrossFormats(t *testing.T) {
	full := corpustest.Suite(t)
	ctx := context.Background()
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "index.db"))
	x, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	dir := "debian-docs/raw/debian-policy/usr/share/doc/debian-policy/"
	files := []string{"policy.txt", "policy.pdf", "policy.html/ch-controlfields.html"}
	ids := map[string]index.DocID{}
	for _, f := range files {
		raw := corpustest.ReadFrom(t, full, dir+f)
		d, err := x.Extract(ctx, extract.Object{Name: filepath.Base(f), Reader: bytes.NewReader(raw)})
		if err != nil || d.Err != nil {
			t.Fatalf("extract %s: %v %v", f, err, d.Err)
		}
		in := input(f, d.Text)
		in.RawSHA256 = sha256.Sum256(raw)
		res, err := ix.Add(ctx, []index.Input{in})
		if err != nil || res[0].Err != nil {
			t.Fatalf("add %s: %v %v", f, err, res[0].Err)
		}
		ids[f] = res[0].ID
	}
	scores := func(of, in string) index.Scores {
		t.Helper()
		ms, err := ix.Similar(ctx, ids[of], index.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Record.ID == ids[in] {
				return m.Scores
			}
		}
		t.Fatalf("%s: %s not reported", of, in)
		return index.Scores{}
	}
	for _, book := range files[:2] {
		s := scores(files[2], book)
		t.Logf("%s in %s: containment %.3f", files[2], book, s.ContainmentAB)
		if s.ContainmentAB < 0.9 {
			t.Errorf("%s in %s: containment %.3f < 0.9", files[2], book, s.ContainmentAB)
		}
	}
	s := scores(files[0], files[1])
	t.Logf("TXT ~ PDF: resemblance %.3f, containment %.3f / %.3f", s.Resemblance, s.ContainmentAB, s.ContainmentBA)
	if max(s.Resemblance, s.ContainmentAB, s.ContainmentBA) < 0.8 {
		t.Errorf("TXT ~ PDF: resemblance %.3f, containment %.3f / %.3f, all below 0.8", s.Resemblance, s.ContainmentAB, s.ContainmentBA)
	}
}
