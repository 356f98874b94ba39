package policy_test

import (
	"testing"

	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// A selector's meta and tags match the metadata the origin delivered,
// never simdex's own fields; a document stored before the two were kept
// apart (no Origin) is matched on its metadata as before.
func TestSelectorMatchesOriginMetadata(t *testing.T) {
	upload := &index.Record{Doc: index.Doc{Key: "s3:main/hr/a.txt", Source: "s3:main",
		Meta:   map[string]string{index.MetaThreadID: "t1", "dept": "it"},
		Origin: map[string]string{"dept": "hr"}}}
	old := &index.Record{Doc: index.Doc{Key: "s3:main/hr/b.txt", Source: "s3:main", Meta: map[string]string{"dept": "hr"}}}
	child := &index.Record{Doc: index.Doc{Key: "s3:main/hr/c.eml!/d.txt", Source: "s3:main", Parent: 1,
		Meta: map[string]string{"dept": "hr"}, Origin: map[string]string{}}}
	for _, tc := range []struct {
		name string
		sel  policy.Selector
		r    *index.Record
		want bool
	}{
		{"origin's metadata", policy.Selector{Meta: map[string]string{"dept": "hr"}}, upload, true},
		{"not simdex's own under the same name", policy.Selector{Meta: map[string]string{"dept": "it"}}, upload, false},
		{"not simdex's thread", policy.Selector{Meta: map[string]string{index.MetaThreadID: "t1"}}, upload, false},
		{"tags are the origin's too", policy.Selector{Tags: map[string]string{"dept": "hr"}}, upload, true},
		{"stored before: its metadata", policy.Selector{Meta: map[string]string{"dept": "hr"}}, old, true},
		{"a child has no origin metadata", policy.Selector{Meta: map[string]string{"dept": "hr"}}, child, false},
	} {
		if got := tc.sel.Match(tc.r); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}
