package ingest

import (
	"context"

	"github.com/simdex/simdex/connectors"
)

// Handle processes one event, as a worker of Run does.
func (p *Pipeline) Handle(ctx context.Context, ev connectors.Event) { p.handle(ctx, ev) }

// SetUnknownWeight sets the share of the in-flight budget an object of
// unknown size takes.
func SetUnknownWeight(p *Pipeline, n int64) { p.unknown = n }

// Metadata is metadata, the index.Doc.Meta ingest makes of what
// extraction found.
var Metadata = metadata
