package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/simdex/simdex/extract"
	"github.com/simdex/simdex/index"
)

// Part is a part of an object with its near-copies: the object itself
// (Path nil), or an attachment or archive member inside it at Path.
type Part struct {
	Path    []string
	Matches []index.Match
}

// finder is what SimilarToObject needs of the index.
type finder interface {
	Fingerprint(rawSHA [32]byte, rawSize int64, text []byte) (*index.Fingerprint, error)
	SimilarTo(ctx context.Context, fp *index.Fingerprint, th index.Thresholds, exclude ...index.DocID) ([]index.Match, error)
}

// SimilarToObject extracts an object that is not stored and returns all
// versions of it: the near-copies of it and of each of its children, one
// Part for each that has text. It fails with index.ErrEmpty when none has,
// and with extract.ErrMemory when obj.Memory cannot be charged what
// extracting and fingerprinting it hold.
func SimilarToObject(ctx context.Context, ix finder, ex extractor, obj extract.Object, th index.Thresholds) ([]Part, error) {
	doc, err := ex.Extract(ctx, obj)
	if merr := obj.Memory.Err(); merr != nil {
		return nil, fmt.Errorf("extract %s: %w", obj.Name, merr)
	}
	if doc == nil || (err != nil && len(doc.Children) == 0) {
		return nil, fmt.Errorf("extract %s: %w", obj.Name, err)
	}
	var parts []Part
	var visit func(d *extract.Document, path []string) error
	visit = func(d *extract.Document, path []string) error {
		if d.Err == nil && strings.TrimSpace(d.Text) != "" {
			fp, err := fingerprint(ctx, ix, obj.Memory, d)
			switch {
			case errors.Is(err, index.ErrEmpty):
			case err != nil:
				return fmt.Errorf("fingerprint %s: %w", strings.Join(d.Path, "/"), err)
			default:
				ms, err := ix.SimilarTo(ctx, fp, th)
				if err != nil {
					return err
				}
				parts = append(parts, Part{Path: path, Matches: ms})
			}
		}
		for _, c := range d.Children {
			if err := visit(c, c.Path); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(doc, nil); err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("compare %s: %w: the file has no text to compare", obj.Name, index.ErrEmpty)
	}
	return parts, nil
}

// fingerprint fingerprints d's text, charging mem the normal form and
// chunks it holds meanwhile.
func fingerprint(ctx context.Context, ix finder, mem *extract.Account, d *extract.Document) (*index.Fingerprint, error) {
	n := int64(len(d.Text)) + int64(len(d.Text))/4
	if err := mem.Charge(ctx, n); err != nil {
		return nil, err
	}
	defer mem.Release(n)
	return ix.Fingerprint(d.SHA256, d.Size, textBytes(d.Text))
}
