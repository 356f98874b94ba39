package index

import (
	"context"
	"fmt"
	"sync"
)

// Follower is a Store that other processes write to as well, such as a
// database that several replicas share. The Index keeps a SimHash table
// and the templates in memory; before each search it asks the Follower
// what the others committed since it last asked, in one cheap call, so
// that a document another replica indexed is found at once.
type Follower interface {
	// Follow returns the contents committed since position since, with
	// their SimHashes, the version of the templates (it changes whenever
	// one is added), and the position to ask from next. since 0 asks for
	// the current position and templates version only. A content may be
	// reported more than once, and may have been removed since. It is safe
	// for concurrent use.
	Follow(ctx context.Context, since uint64) (Changes, error)
}

// Changes is what a Follower reports.
type Changes struct {
	// Next is the position to follow from next time.
	Next uint64
	// Contents are the contents committed since the position asked for.
	Contents []ContentSimHash
	// Templates is the version of the stored templates.
	Templates int64
}

// ContentSimHash is a stored content and its SimHash.
type ContentSimHash struct {
	ID      ContentID
	SimHash uint64
}

// follow is where the Index stands in a Follower's changes.
type follow struct {
	mu        sync.Mutex
	next      uint64
	templates int64
}

// startFollowing records the Follower's current position, before the
// Index loads the SimHash table and templates: what is committed after
// it is caught up with by the first search.
func (ix *Index) startFollowing(ctx context.Context) error {
	f, ok := ix.store.(Follower)
	if !ok {
		return nil
	}
	ch, err := f.Follow(ctx, 0)
	if err != nil {
		return fmt.Errorf("follow the store: %w", err)
	}
	ix.follow.next, ix.follow.templates = ch.Next, ch.Templates
	return nil
}

// catchUp brings the SimHash table and the templates up to what other
// writers of the store committed, when the store is a Follower.
func (ix *Index) catchUp(ctx context.Context) error {
	f, ok := ix.store.(Follower)
	if !ok {
		return nil
	}
	ix.follow.mu.Lock()
	defer ix.follow.mu.Unlock()
	ch, err := f.Follow(ctx, ix.follow.next)
	if err != nil {
		return fmt.Errorf("catch up with other writers: %w", err)
	}
	for _, c := range ch.Contents {
		ix.sims.add(c.ID, c.SimHash)
	}
	if ch.Templates != ix.follow.templates {
		if err := ix.loadTemplates(ctx); err != nil {
			return fmt.Errorf("catch up with other writers: %w", err)
		}
	}
	ix.follow.next, ix.follow.templates = ch.Next, ch.Templates
	return nil
}
