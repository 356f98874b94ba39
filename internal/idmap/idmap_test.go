package idmap

import (
	"fmt"
	"slices"
	"testing"
)

// Dense ids are kept in a slice, sparse or negative ones in a map; either
// way Get returns what Set set, and the zero value for ids never set.
func TestMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ids   []int64
		dense bool
	}{
		{"dense", []int64{1, 2, 3, 7, 40}, true},
		{"sparse", []int64{1, 5 << 30}, false},
		{"negative", []int64{-3, 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Map[int64, string]
			m.Init(len(tc.ids), slices.Values(tc.ids))
			if dense := m.sparse == nil; dense != tc.dense {
				t.Fatalf("dense: %v, want %v", dense, tc.dense)
			}
			for _, id := range tc.ids {
				m.Set(id, fmt.Sprint("v", id))
			}
			for _, id := range tc.ids {
				if got, want := m.Get(id), fmt.Sprint("v", id); got != want {
					t.Errorf("Get(%d) = %q, want %q", id, got, want)
				}
			}
			for _, id := range []int64{0, 6, -1, 1 << 40} {
				if got := m.Get(id); got != "" {
					t.Errorf("Get(%d) = %q of an id never set", id, got)
				}
			}
		})
	}
}
