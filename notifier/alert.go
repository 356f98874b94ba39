package notifier

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Alert kinds, as the policy engine names its flags.
const (
	KindDispositionDue  = "disposition-due"
	KindHoldMatch       = "hold-match"
	KindDuplicateUpload = "duplicate-upload"
	// KindHoldUnenforced: a held document whose origin cannot hold it
	// (an S3 bucket without Object Lock).
	KindHoldUnenforced = "hold-unenforced"
	// KindHoldSourceChanged: a held document deleted or overwritten at
	// its source (possible spoliation); simdex kept its indexed copy.
	KindHoldSourceChanged = "hold-source-changed"
)

// Alert is what a reviewer is told about one flag.
type Alert struct {
	// ID identifies the alert permanently (the flag id); notifying the same
	// id twice delivers it once per channel.
	ID string `json:"id"`
	// Kind is the flag kind (KindHoldMatch...).
	Kind string `json:"kind"`
	// Matter is the legal matter of a hold match; Rule the retention rule
	// of a disposition flag; either may be empty.
	Matter string `json:"matter,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Document is the flagged document's id, Name its key or path as its
	// owner knows it, Source where it came from.
	Document int64  `json:"document"`
	Name     string `json:"name"`
	Source   string `json:"source,omitempty"`
	// Summary is one line for humans.
	Summary string `json:"summary"`
	// Link points at the document in the review UI, when configured.
	Link string `json:"link,omitempty"`
	// Evidence carries the scores and the source document, as JSON.
	Evidence json.RawMessage `json:"evidence,omitempty"`
	// Created is when the flag was raised.
	Created time.Time `json:"created"`
}

// validate reports an alert that cannot be routed or delivered.
func (a *Alert) validate() error {
	switch {
	case a.ID == "":
		return fmt.Errorf("%w: alert without id", ErrInvalidAlert)
	case !utf8.ValidString(a.ID) || strings.ContainsRune(a.ID, 0):
		// Not every outbox can key on it (PostgreSQL's text refuses it).
		return fmt.Errorf("%w: alert id %q is not UTF-8 text without NUL", ErrInvalidAlert, a.ID)
	case a.Kind == "" || strings.ContainsAny(a.Kind, " .*>"):
		return fmt.Errorf("%w: alert %s: kind %q is empty or not a NATS subject token", ErrInvalidAlert, a.ID, a.Kind)
	case len(a.Evidence) > 0 && !json.Valid(a.Evidence):
		return fmt.Errorf("%w: alert %s: evidence is not JSON", ErrInvalidAlert, a.ID)
	}
	return nil
}

// text renders the alert for people (e-mail, Slack).
func (a *Alert) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s\n", a.Kind, a.Summary)
	fmt.Fprintf(&b, "Document: %s (id %d", a.Name, a.Document)
	if a.Source != "" {
		fmt.Fprintf(&b, ", %s", a.Source)
	}
	b.WriteString(")\n")
	if a.Matter != "" {
		fmt.Fprintf(&b, "Matter: %s\n", a.Matter)
	}
	if a.Rule != "" {
		fmt.Fprintf(&b, "Rule: %s\n", a.Rule)
	}
	if a.Link != "" {
		fmt.Fprintf(&b, "Review: %s\n", a.Link)
	}
	fmt.Fprintf(&b, "Raised: %s\n", a.Created.UTC().Format(time.RFC3339))
	return b.String()
}
