// Package idmap maps integer ids to values: in a slice indexed by id when
// the ids are dense enough, as the index's are (assigned in sequence,
// never reused), in a map otherwise. An analysis and its report look up
// millions of pairs' ids among tens of thousands, where hashing each in a
// map was a third of the time.
package idmap

import "iter"

// Map maps ids of type K to values of type V. The zero Map is empty; Init
// sizes it.
type Map[K ~int64, V any] struct {
	dense  []V
	sparse map[K]V
}

// Init sizes m for the ids that ids yields (n of them, roughly: a hint),
// forgetting what m held.
func (m *Map[K, V]) Init(n int, ids iter.Seq[K]) {
	m.dense, m.sparse = nil, nil
	var top K
	for id := range ids {
		if id < 0 {
			m.sparse = make(map[K]V, n)
			return
		}
		top = max(top, id)
	}
	if int64(top) > 4*int64(n)+1<<20 {
		m.sparse = make(map[K]V, n)
		return
	}
	m.dense = make([]V, top+1)
}

// Set sets the value of id, one of the ids m was sized for.
func (m *Map[K, V]) Set(id K, v V) {
	if m.sparse != nil {
		m.sparse[id] = v
		return
	}
	m.dense[id] = v
}

// Get returns the value of id, the zero value if none was set.
func (m *Map[K, V]) Get(id K) V {
	if m.sparse != nil {
		return m.sparse[id]
	}
	if id < 0 || int(id) >= len(m.dense) {
		var zero V
		return zero
	}
	return m.dense[id]
}
