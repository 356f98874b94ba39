package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// DisposalProof is what an executed deletion proves, kept as the details
// of its AuditFlagDispose entry: what was deleted (the object version,
// its document, the SHA-256 and size the index recorded of its bytes),
// and under which rule and approval.
type DisposalProof struct {
	Flag     int64     `json:"flag"`
	Rule     string    `json:"rule"`
	Approver string    `json:"approver"`
	Approved time.Time `json:"approved_at"`
	Object   Object    `json:"object"`
	Document DocRef    `json:"document"`
	// SHA256 is hex; empty, and Size 0, in entries written before
	// disposals were proven (AuditDeleteDone).
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size"`
}

// Disposal is one executed deletion, read from the audit log: its proof
// and when and by whom it was carried out (the entry's time and actor).
type Disposal struct {
	Seq   int64     `json:"seq"`
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"`
	DisposalProof
}

// DisposalFilter selects disposals; zero fields match everything.
type DisposalFilter struct {
	Rule  string
	Since time.Time
}

// Disposals lists the executed deletions of the engine's audit log (see
// ReadDisposals).
func (e *Engine) Disposals(ctx context.Context, f DisposalFilter) ([]Disposal, error) {
	return ReadDisposals(ctx, e.st, f)
}

// ReadDisposals lists the executed deletions log records, oldest first
// (AuditFlagDispose entries, and the AuditDeleteDone entries of earlier
// releases with what they recorded).
func ReadDisposals(ctx context.Context, log AuditReader, f DisposalFilter) ([]Disposal, error) {
	out := []Disposal{}
	err := log.Audit(ctx, 1, func(a AuditEntry) error {
		if a.Action != AuditFlagDispose && a.Action != AuditDeleteDone || a.Time.Before(f.Since) {
			return nil
		}
		d := Disposal{Seq: a.Seq, Time: a.Time, Actor: a.Actor}
		if err := json.Unmarshal(a.Details, &d.DisposalProof); err != nil {
			return fmt.Errorf("audit entry %d: %w", a.Seq, err)
		}
		if f.Rule == "" || d.Rule == f.Rule {
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list disposals: %w", err)
	}
	return out, nil
}
