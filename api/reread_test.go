package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/simdex/simdex/connectors"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/ingest"
)

// rereadFunc is a TextRereader that answers each document with a function.
type rereadFunc func(*index.Record) ([]byte, error)

func (f rereadFunc) Texts(_ context.Context, recs ...*index.Record) ([][]byte, error) {
	out := make([][]byte, len(recs))
	for i, rec := range recs {
		var err error
		if out[i], err = f(rec); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Where the index keeps no text, the text is read again, and each way
// that can fail has its own status: no origin 404, version gone 410,
// text changed 409, origin unreachable 502.
func TestTextReadAgainAnswersEachFailure(t *testing.T) {
	var answer error
	srv, text := newTestAPIWith(t, 1<<20, false, rereadFunc(func(rec *index.Record) ([]byte, error) {
		if answer != nil {
			return nil, answer
		}
		return []byte(strings.Repeat("The licensee may copy and distribute the work in any medium. ", 30)), nil
	}))
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, http.StatusOK},
		{fmt.Errorf("document 1 from nats:docs: %w", ingest.ErrNoOrigin), http.StatusNotFound},
		{&connectors.Error{Op: "fetch", Kind: connectors.Permanent, Err: connectors.ErrObjectMissing}, http.StatusGone},
		{fmt.Errorf("document 1: %w", ingest.ErrTextChanged), http.StatusConflict},
		{&connectors.Error{Op: "fetch", Kind: connectors.Transient, Err: errors.New("connection refused")}, http.StatusBadGateway},
	} {
		answer = tc.err
		resp, err := http.Get(srv.URL + "/api/v1/documents/1/text")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%v: status %d, want %d: %s", tc.err, resp.StatusCode, tc.code, body)
		}
		if tc.err == nil && (string(body) != text || resp.Header.Get(TextFromHeader) != "origin") {
			t.Errorf("text read again: from %q, %.40q", resp.Header.Get(TextFromHeader), body)
		}
		if tc.err != nil && !strings.Contains(string(body), "index.keep_text is off") {
			t.Errorf("%v: the answer does not say why the text was read again: %s", tc.err, body)
		}
	}
}
