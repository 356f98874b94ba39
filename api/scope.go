package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/policy"
)

// docScope decides which documents a request's principal may see. A
// principal limited to matters sees the documents those matters hold,
// with their families (the top-level object of a held document and
// everything inside it), and nothing else; any other principal sees every
// document but the seed files of matters it cannot see. A document out
// of scope answers exactly as one that does not exist.
//
// One docScope serves one request: the first question loads the matters'
// held ids (one policy query per matter), cached for the rest of the
// request. A document not held itself is visible when its top-level
// object (found up its Parent links) is held or holds a held document
// (found down its Children), each object walked once per request.
type docScope struct {
	a *Server
	p auth.Principal

	mu     sync.Mutex
	loaded bool
	held   map[index.DocID]bool        // the matters' held documents
	family map[index.DocID]bool        // top-level objects: a held document is in it
	rootOf map[index.DocID]index.DocID // cached walks up Parent
}

type scopeKey struct{}

// withScope gives each request its docScope.
func (a *Server) withScope(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := &docScope{a: a, p: principal(r)}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, s)))
	})
}

// scope returns the request's docScope (a new one for a request that did
// not pass through withScope).
func (a *Server) scope(r *http.Request) *docScope {
	if s, ok := r.Context().Value(scopeKey{}).(*docScope); ok {
		return s
	}
	return &docScope{a: a, p: principal(r)}
}

// limited reports whether the principal is limited to matters.
func limited(p auth.Principal) bool { return len(p.Matters) > 0 }

// Visible reports whether the principal may see rec.
func (s *docScope) Visible(ctx context.Context, rec *index.Record) (bool, error) {
	if !keyVisible(s.p, rec.Key) {
		return false, nil
	}
	if !limited(s.p) {
		return true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(ctx); err != nil {
		return false, err
	}
	if s.held[rec.ID] {
		return true, nil
	}
	root, err := s.root(ctx, rec)
	if errors.Is(err, index.ErrNotFound) {
		return false, nil // its parent is gone: no matter holds it
	}
	if err != nil {
		return false, err
	}
	return s.holdsHeld(ctx, root)
}

// holdsHeld reports whether top-level object root is held or has a held
// document inside it, walking down its Children once per request.
func (s *docScope) holdsHeld(ctx context.Context, root index.DocID) (bool, error) {
	if v, ok := s.family[root]; ok {
		return v, nil
	}
	found, next := false, []index.DocID{root}
	for len(next) > 0 && !found {
		id := next[0]
		next = next[1:]
		if s.held[id] {
			found = true
			break
		}
		kids, err := s.a.Index.Store().Children(ctx, id)
		if err != nil {
			return false, fmt.Errorf("documents inside %d: %w", id, err)
		}
		for _, k := range kids {
			next = append(next, k.ID)
		}
	}
	s.family[root] = found
	return found, nil
}

// VisibleID reports whether the principal may see document id; one that
// does not exist is not visible.
func (s *docScope) VisibleID(ctx context.Context, id index.DocID) (bool, error) {
	rec, err := s.a.Index.Get(ctx, id)
	if errors.Is(err, index.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("load document %d: %w", id, err)
	}
	return s.Visible(ctx, rec)
}

// Filter keeps the records the principal may see, in order.
func (s *docScope) Filter(ctx context.Context, recs []*index.Record) ([]*index.Record, error) {
	out := make([]*index.Record, 0, len(recs))
	for _, rec := range recs {
		ok, err := s.Visible(ctx, rec)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out, nil
}

// load reads the held documents of the principal's matters once, and the
// top-level object of each. Without a policy engine no matter holds
// anything, so a limited principal sees nothing.
func (s *docScope) load(ctx context.Context) error {
	if s.loaded {
		return nil
	}
	s.held, s.family, s.rootOf = map[index.DocID]bool{}, map[index.DocID]bool{}, map[index.DocID]index.DocID{}
	if s.a.Policy != nil {
		for _, m := range s.p.Matters {
			ids, err := s.a.Policy.HeldDocuments(ctx, m)
			if errors.Is(err, policy.ErrNotFound) {
				continue // no hold for this matter yet
			}
			if err != nil {
				return fmt.Errorf("documents of matter %s: %w", m, err)
			}
			for _, id := range ids {
				s.held[id] = true
			}
		}
	}
	s.loaded = true
	return nil
}

// roots returns the top-level objects of the held documents: one read
// per held document and per level above it.
func (s *docScope) roots(ctx context.Context) (map[index.DocID]bool, error) {
	roots := map[index.DocID]bool{}
	for id := range s.held {
		rec, err := s.a.Index.Get(ctx, id)
		if errors.Is(err, index.ErrNotFound) {
			continue // deleted since it was held
		}
		if err != nil {
			return nil, fmt.Errorf("load held document %d: %w", id, err)
		}
		root, err := s.root(ctx, rec)
		if errors.Is(err, index.ErrNotFound) {
			root = rec.ID
		} else if err != nil {
			return nil, err
		}
		roots[root] = true
	}
	return roots, nil
}

// root returns the top-level object rec is inside (rec itself for one).
func (s *docScope) root(ctx context.Context, rec *index.Record) (index.DocID, error) {
	var chain []index.DocID
	var root index.DocID
	for cur := rec; ; {
		if r, ok := s.rootOf[cur.ID]; ok {
			root = r
			break
		}
		chain = append(chain, cur.ID)
		if cur.Parent == 0 {
			root = cur.ID
			break
		}
		parent, err := s.a.Index.Get(ctx, cur.Parent)
		if err != nil {
			return 0, fmt.Errorf("load parent %d of document %d: %w", cur.Parent, cur.ID, err)
		}
		cur = parent
	}
	for _, id := range chain {
		s.rootOf[id] = root
	}
	return root, nil
}

// Stats counts the documents the principal may see, their distinct
// contents and failed extractions: the store's counts for a principal of
// every matter, else counted over what it sees.
func (s *docScope) Stats(ctx context.Context) (index.Stats, error) {
	if s.p.AllMatters() {
		return s.a.Index.Store().Stats(ctx)
	}
	if limited(s.p) {
		return s.limitedStats(ctx)
	}
	return s.unsealedStats(ctx)
}

// limitedStats counts the families of the matters' held documents.
func (s *docScope) limitedStats(ctx context.Context) (index.Stats, error) {
	s.mu.Lock()
	err := s.load(ctx)
	var roots map[index.DocID]bool
	if err == nil {
		roots, err = s.roots(ctx)
	}
	s.mu.Unlock()
	if err != nil {
		return index.Stats{}, err
	}
	c := statsCounter{contents: map[index.ContentID]bool{}}
	for id := range roots {
		rec, err := s.a.Index.Get(ctx, id)
		if errors.Is(err, index.ErrNotFound) {
			continue
		}
		if err != nil {
			return index.Stats{}, fmt.Errorf("count documents: load %d: %w", id, err)
		}
		if err := s.countTree(ctx, rec, &c); err != nil {
			return index.Stats{}, err
		}
	}
	return c.Stats, nil
}

// statsCounter counts documents and their distinct contents.
type statsCounter struct {
	index.Stats
	contents map[index.ContentID]bool
}

func (c *statsCounter) add(rec *index.Record) {
	c.Documents++
	if rec.Error != "" {
		c.Failed++
	}
	if rec.Content != 0 && !c.contents[rec.Content] {
		c.contents[rec.Content] = true
		c.Contents++
	}
}

// countTree counts rec and every document inside it that is visible.
func (s *docScope) countTree(ctx context.Context, rec *index.Record, c *statsCounter) error {
	if keyVisible(s.p, rec.Key) {
		c.add(rec)
	}
	kids, err := s.a.Index.Store().Children(ctx, rec.ID)
	if err != nil {
		return fmt.Errorf("count documents inside %d: %w", rec.ID, err)
	}
	for _, k := range kids {
		if err := s.countTree(ctx, k, c); err != nil {
			return err
		}
	}
	return nil
}

// maxSeedFiles bounds the seed files looked up to leave them out of the
// counts of a principal without every matter.
const maxSeedFiles = 100000

// unsealedStats is the store's counts less the seed files of matters the
// principal cannot see, and the contents only they have.
func (s *docScope) unsealedStats(ctx context.Context) (index.Stats, error) {
	st, err := s.a.Index.Store().Stats(ctx)
	if err != nil {
		return st, err
	}
	seeds, err := s.a.Index.Store().Find(ctx, policy.SeedFilePrefix, maxSeedFiles)
	if err != nil {
		return st, fmt.Errorf("find seed files: %w", err)
	}
	var hidden []index.ContentID
	for _, rec := range seeds {
		if _, seed := policy.SeedFileMatter(rec.Key); !seed || keyVisible(s.p, rec.Key) {
			continue
		}
		st.Documents--
		if rec.Error != "" {
			st.Failed--
		}
		if rec.Content != 0 {
			hidden = append(hidden, rec.Content)
		}
	}
	if len(hidden) == 0 {
		return st, nil
	}
	all, err := s.a.Index.Store().ByContent(ctx, hidden...)
	if err != nil {
		return st, fmt.Errorf("contents of seed files: %w", err)
	}
	shown := map[index.ContentID]bool{}
	for _, rec := range all {
		if keyVisible(s.p, rec.Key) {
			shown[rec.Content] = true
		}
	}
	counted := map[index.ContentID]bool{}
	for _, c := range hidden {
		if !shown[c] && !counted[c] {
			counted[c] = true
			st.Contents--
		}
	}
	return st, nil
}
