package index_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/simdex/simdex/extract/mailthread"
	"github.com/simdex/simdex/index"
)

// TestMailBoilerplate indexes mail-usrp (its first SIMDEX_MAIL_N messages,
// 1000 by default) and checks that boilerplate makes no unrelated
// messages alike: no identical set joins messages of different subjects
// (a question posted twice is one, under one subject), and at most 1 % of the reported pairs are unrelated by the
// evaluation's truth (word 5-gram resemblance and both containments
// under 0.3).
func TestMailBoilerplate(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("SIMDEX_MAIL_N")); err == nil {
		n = v
	}
	files, err := filepath.Glob(filepath.Join(mailUSRP, "*.eml"))
	if err != nil || len(files) < n {
		t.Fatalf("mail-usrp: %d files, %v", len(files), err)
	}
	var names []string
	for _, f := range files[:n] {
		names = append(names, filepath.Base(f))
	}
	ix, _ := openIndex(t, filepath.Join(t.TempDir(), "idx.db"))
	ids, inputs := ingestMailTexts(t, ix, names...)
	byID := make(map[index.DocID]string, len(ids))
	for name, id := range ids {
		byID[id] = name
	}
	an, err := ix.Analyse(context.Background(), ix.Options().Thresholds)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range an.Identical {
		threads := map[string]bool{}
		var members []string
		for _, d := range set {
			if name := byID[d]; name != "" {
				threads[subjectWords(inputs[name].Doc.Meta["subject"])] = true
				members = append(members, name)
			}
		}
		if len(threads) > 1 {
			t.Errorf("identical set of %d messages with %d subjects: %v: %.200q", len(set), len(threads), members, inputs[members[0]].Text)
		}
	}
	false_, pairs := 0, 0
	for _, p := range an.Pairs {
		a, b := an.ByContent[p.A], an.ByContent[p.B]
		if len(a) == 0 || len(b) == 0 || byID[a[0]] == "" || byID[b[0]] == "" {
			continue // attachments
		}
		pairs++
		ta, tb := string(inputs[byID[a[0]]].Text), string(inputs[byID[b[0]]].Text)
		if wordContainment(ta, tb) < 0.3 && wordContainment(tb, ta) < 0.3 {
			false_++
			if false_ <= 5 {
				t.Logf("unrelated pair %s %s: %+v", byID[a[0]], byID[b[0]], p.Scores)
			}
		}
	}
	t.Logf("%d messages: %d identical sets, %d message pairs reported, %d unrelated", n, len(an.Identical), pairs, false_)
	if false_*100 > pairs {
		t.Errorf("%d of %d reported pairs are unrelated messages", false_, pairs)
	}
}

// subjectWords is a subject without its tags, as its words.
func subjectWords(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(mailthread.Subject(s)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}
