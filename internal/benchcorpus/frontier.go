package benchcorpus

import "time"

// Frontier follows the ids of rows that concurrent transactions commit
// out of order, so that a poller reads only `id > Low()` and still sees
// every row: Low is the highest id up to which every id has been seen, or
// given up on as a hole (an id a rolled back insert consumed) after
// HoleWait.
type Frontier struct {
	// HoleWait is how long a missing id may stay missing, while higher
	// ones are seen, before it is taken for a hole.
	HoleWait time.Duration

	low       int64
	above     map[int64]struct{} // ids seen above low
	holeSince time.Time          // when low+1 was first found missing
}

// Low returns the id at and below which every row has been seen.
func (f *Frontier) Low() int64 { return f.low }

// Add records id and reports whether it was not seen before.
func (f *Frontier) Add(id int64) bool {
	if id <= f.low {
		return false
	}
	if _, ok := f.above[id]; ok {
		return false
	}
	if f.above == nil {
		f.above = make(map[int64]struct{})
	}
	f.above[id] = struct{}{}
	return true
}

// Advance moves Low over the ids seen, and over a hole missing since
// HoleWait before now.
func (f *Frontier) Advance(now time.Time) {
	for len(f.above) > 0 {
		if _, ok := f.above[f.low+1]; ok {
			delete(f.above, f.low+1)
			f.low++
			f.holeSince = time.Time{}
			continue
		}
		if f.holeSince.IsZero() {
			f.holeSince = now
		}
		if now.Sub(f.holeSince) < f.HoleWait {
			return
		}
		f.low++ // a hole: skip it, and wait again for the next
		f.holeSince = now
	}
}
