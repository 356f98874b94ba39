package api

import (
	"errors"
	"net/http"

	"github.com/simdex/simdex/index"
)

// ThreadResponse is a message's e-mail thread, in date order, with the
// inclusive marks review platforms give: reviewing the inclusive messages
// covers the whole thread.
type ThreadResponse struct {
	// ID is the thread's key (the load files' EmailThreadID).
	ID string `json:"id"`
	// Messages are those the caller may see: a message out of its scope
	// is left out, and not counted, as if it did not exist.
	Messages []ThreadMessage `json:"messages"`
}

// ThreadMessage is one message of a thread.
type ThreadMessage struct {
	Document  Document `json:"document"`
	Inclusive bool     `json:"inclusive"`
	// Reason is why it is inclusive: "Message", "Attachment", "Draft".
	Reason string `json:"reason,omitempty"`
	// ContainedIn is a later message holding all of it, when it is not
	// inclusive (0 when that message is outside the caller's matters).
	ContainedIn index.DocID `json:"contained_in,omitempty"`
}

// thread answers GET /api/v1/documents/{id}/thread[?inclusive=true].
func (a *Server) thread(w http.ResponseWriter, r *http.Request) {
	rec, ok := a.pathRecord(w, r)
	if !ok {
		return
	}
	t, err := a.Index.ThreadOf(r.Context(), rec.ID)
	switch {
	case errors.Is(err, index.ErrNoThread):
		writeError(w, http.StatusNotFound, err)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	onlyInclusive := r.URL.Query().Get("inclusive") == "true"
	visible := map[index.DocID]bool{}
	for _, m := range t.Messages {
		if visible[m.Record.ID], err = a.scope(r).Visible(r.Context(), m.Record); err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
	}
	out := ThreadResponse{ID: t.ID, Messages: []ThreadMessage{}}
	for _, m := range t.Messages {
		if !visible[m.Record.ID] {
			continue
		}
		if onlyInclusive && !m.Inclusive {
			continue
		}
		tm := ThreadMessage{Document: NewDocument(m.Record), Inclusive: m.Inclusive, Reason: m.Reason}
		if visible[m.ContainedIn] {
			tm.ContainedIn = m.ContainedIn
		}
		out.Messages = append(out.Messages, tm)
	}
	writeJSON(w, http.StatusOK, out)
}
