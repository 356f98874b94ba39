package connectortest_test

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/connectors/connectortest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// memory is a minimal at-least-once origin, a log of changes with
// per-record settlement, used to check the suite itself.
type memory struct {
	mu      sync.Mutex
	log     []record
	state   []int // per record: 0 ready, 1 in flight, 2 settled
	dead    int
	changed chan struct{}
}

type record struct {
	kind    connectors.Kind
	key     string
	body    []byte
	meta    map[string]string
	garbage bool
}

func newMemory() *memory { return &memory{changed: make(chan struct{}, 1)} }

func (m *memory) append(r record) {
	m.mu.Lock()
	m.log = append(m.log, r)
	m.state = append(m.state, 0)
	m.mu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

func (m *memory) Put(_ *testing.T, key string, body []byte, meta map[string]string) {
	m.append(record{kind: connectors.Created, key: key, body: bytes.Clone(body), meta: meta})
}

func (m *memory) Delete(_ *testing.T, key string) {
	m.append(record{kind: connectors.Removed, key: key})
}
func (m *memory) Garbage(*testing.T) { m.append(record{garbage: true}) }

func (m *memory) DeadLetters(*testing.T) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dead
}

func (m *memory) Redelivers() bool              { return true }
func (m *memory) KeepsMetadata() bool           { return true }
func (m *memory) RedeliveryWait() time.Duration { return 200 * time.Millisecond }

func (m *memory) Source(*testing.T) connectors.Source { return &memorySource{m: m} }

type memorySource struct{ m *memory }

// Run hands out ready records; unsettled ones become ready again when it
// returns.
func (s *memorySource) Run(ctx context.Context, out chan<- connectors.Event) error {
	m := s.m
	var mine []int
	defer func() {
		m.mu.Lock()
		for _, i := range mine {
			if m.state[i] == 1 {
				m.state[i] = 0
			}
		}
		m.mu.Unlock()
	}()
	for {
		m.mu.Lock()
		next := -1
		var r record
		for i, st := range m.state {
			if st == 0 {
				next = i
				break
			}
		}
		if next >= 0 {
			m.state[next] = 1
			mine = append(mine, next)
			r = m.log[next]
		}
		m.mu.Unlock()
		if next < 0 {
			select {
			case <-m.changed:
				continue
			case <-time.After(20 * time.Millisecond):
				continue
			case <-ctx.Done():
				return nil
			}
		}
		if r.garbage {
			m.settle(next, &connectors.Error{Op: "decode", Kind: connectors.Invalid})
			continue
		}
		ev := connectors.Event{
			Source: "memory", Kind: r.kind, Key: r.key, VersionID: strconv.Itoa(next), Size: -1,
			Time: time.Now(), Metadata: r.meta, ContentType: r.meta[connectortest.ContentTypeKey],
			Done: func(_ context.Context, err error) { m.settle(next, err) },
		}
		if r.kind == connectors.Created {
			body := r.body
			ev.Size = int64(len(body))
			ev.Open = func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		select {
		case out <- ev:
		case <-ctx.Done():
			return nil
		}
	}
}

func (m *memory) settle(i int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil:
		m.state[i] = 2
	case connectors.IsTransient(err):
		m.state[i] = 0
	default:
		m.state[i] = 2
		m.dead++
	}
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

type memoryHarness struct{}

func (memoryHarness) New(*testing.T) connectortest.Origin { return newMemory() }

func TestSuiteOnMemoryOrigin(t *testing.T) {
	connectortest.Run(t, memoryHarness{})
}
