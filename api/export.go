package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/simdex/simdex/export"
)

// Trailers of an export: the rows written, or why the stream stopped. A
// client that finds neither received a cut stream.
const (
	TrailerExportRows  = "X-Simdex-Export-Rows"
	TrailerExportError = "X-Simdex-Export-Error"
)

// exportContentTypes are the media types of the export formats.
var exportContentTypes = map[export.Format]string{
	export.CSV:   "text/csv; charset=utf-8",
	export.JSONL: "application/x-ndjson",
	export.DAT:   "text/plain; charset=utf-8",
}

// exportDocuments answers GET /api/v1/export?format=csv|jsonl|dat
// [&matter=M]: every document (or a matter's documents) with its
// near-duplicate fields, streamed as a load file for e-discovery
// platforms. The status is sent with the first row, so the outcome comes
// in the trailers.
func (a *Server) exportDocuments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := export.ParseFormat(q.Get("format"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	opts := export.Options{Format: f, Thresholds: &a.Thresholds}
	matter := q.Get("matter")
	if p := principal(r); !p.AllMatters() && (matter == "" || !p.CanSeeMatter(matter)) {
		writeError(w, http.StatusForbidden, errors.New("a token limited to matters exports one of its matters: give matter="))
		return
	}
	if matter != "" {
		if a.Policy == nil {
			writeError(w, http.StatusServiceUnavailable, errNoPolicy)
			return
		}
		ids, err := a.Policy.HeldDocuments(r.Context(), matter)
		if err != nil {
			a.policyError(w, "export matter", err)
			return
		}
		opts.Include = export.OnlyDocs(ids...)
	}
	w.Header().Set("Trailer", TrailerExportRows+", "+TrailerExportError)
	w.Header().Set("Content-Type", exportContentTypes[f])
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="simdex-export.%s"`, f))
	n, err := export.Export(r.Context(), a.Index, w, opts)
	if err != nil {
		a.Logger.Error("export", "format", f, "rows", n, "err", err)
		w.Header().Set(TrailerExportError, err.Error())
		return
	}
	w.Header().Set(TrailerExportRows, strconv.Itoa(n))
}
