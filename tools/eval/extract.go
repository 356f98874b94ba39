package eval

import (
	"bytes"
	"context"
	"fmt"

	"github.com/simdex/simdex/extract"
)

// Extracted adapts package extract to Extractor. A file's text is its
// document's text followed by its children's (the chapters of an EPUB, the
// members of an archive), depth first; a child that fails is left out, a
// top document that fails is an error.
func Extracted(x *extract.Extractor) Extractor {
	return ExtractFunc(func(ctx context.Context, name string, raw []byte) ([]byte, error) {
		d, err := x.Extract(ctx, extract.Object{Name: name, Reader: bytes.NewReader(raw)})
		if err != nil {
			return nil, fmt.Errorf("extract %s: %w", name, err)
		}
		var b bytes.Buffer
		var walk func(d *extract.Document)
		walk = func(d *extract.Document) {
			if d.Err == nil {
				b.WriteString(d.Text)
				b.WriteByte('\n')
			}
			for _, c := range d.Children {
				walk(c)
			}
		}
		walk(d)
		return b.Bytes(), nil
	})
}

// DefaultExtractor returns package extract with its default limits.
func DefaultExtractor() (Extractor, error) {
	x, err := extract.New(extract.Options{Limits: extract.DefaultLimits()})
	if err != nil {
		return nil, err
	}
	return Extracted(x), nil
}
