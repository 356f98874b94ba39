package policy

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// AuditEntry is one record of the audit log: who did what, to what, when
// and why. Seq, Prev and Hash are set by AuditLog.Append.
type AuditEntry struct {
	Seq    int64     `json:"seq"`
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	// Object is what was acted on: "hold:M", "flag:42", "doc:7".
	Object string `json:"object"`
	Reason string `json:"reason,omitempty"`
	// Details is JSON; it is hashed byte for byte, so stores must keep it
	// exactly.
	Details json.RawMessage `json:"details,omitempty"`
	// Prev is the hash of the previous entry ("" for the first), Hash
	// this entry's: both hex SHA-256.
	Prev string `json:"prev"`
	Hash string `json:"hash"`
}

// Audit actions.
const (
	AuditHoldCreate  = "hold.create"
	AuditHoldRelease = "hold.release"
	// AuditHoldPlaced records a placement complete: every near-copy
	// recorded held and enforced.
	AuditHoldPlaced  = "hold.placed"
	AuditFlagRaise   = "flag.raise"
	AuditFlagApprove = "flag.approve"
	AuditFlagDismiss = "flag.dismiss"
	// AuditFlagRefuse records an approved disposition refused (held,
	// stale, gone, not deletable at its source): the flag reads refused.
	AuditFlagRefuse = "flag.refuse"
	// AuditFlagDispose is the proof of a disposal: what was deleted
	// (Disposal), under which rule and approval, when and by whom.
	AuditFlagDispose = "flag.dispose"
	AuditDeleteClaim = "delete.claim"
	// AuditDeleteDone is what executions recorded before
	// AuditFlagDispose; Disposals still reads it.
	AuditDeleteDone   = "delete.done"
	AuditDeleteRefuse = "delete.refused"
	AuditEnforceHold  = "enforce.hold"
	AuditRun          = "policy.run"
)

// Checkpoint is a saved position of the audit log: the sequence number
// and hash of its head. Keep it outside the store (printed, signed, in
// another system): Verify against it detects edits, reordering, deletion
// and truncation of everything up to it.
type Checkpoint struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// ChainHash returns the hash of e chained to prev: SHA-256 over a
// canonical encoding in which every field (seq, time in Unix nanoseconds,
// actor, action, object, reason, details, prev) is length-prefixed, so no
// two different entries encode alike.
func ChainHash(prev string, e AuditEntry) string {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	field([]byte("simdex-audit-v1"))
	field(binary.BigEndian.AppendUint64(nil, uint64(e.Seq)))
	field(binary.BigEndian.AppendUint64(nil, uint64(e.Time.UnixNano())))
	field([]byte(e.Actor))
	field([]byte(e.Action))
	field([]byte(e.Object))
	field([]byte(e.Reason))
	field(e.Details)
	field([]byte(prev))
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks the whole audit log: sequence numbers without gap, each
// entry chained to the previous and hashing to its stored hash, and the
// log reaching cp with the same hash there. It returns the checkpoint of
// the head, to save for the next verification. A zero cp checks the
// chain alone. Any failure wraps ErrAuditTampered.
func Verify(ctx context.Context, log AuditLog, cp Checkpoint) (Checkpoint, error) {
	head := Checkpoint{}
	prev := ""
	err := log.Audit(ctx, 1, func(e AuditEntry) error {
		switch {
		case e.Seq != head.Seq+1:
			return fmt.Errorf("%w: entry %d follows %d (deleted or reordered entries)", ErrAuditTampered, e.Seq, head.Seq)
		case e.Prev != prev:
			return fmt.Errorf("%w: entry %d does not chain to entry %d", ErrAuditTampered, e.Seq, head.Seq)
		case ChainHash(prev, e) != e.Hash:
			return fmt.Errorf("%w: entry %d was edited (hash mismatch)", ErrAuditTampered, e.Seq)
		case e.Seq == cp.Seq && e.Hash != cp.Hash:
			return fmt.Errorf("%w: entry %d differs from the checkpoint (log rewritten)", ErrAuditTampered, e.Seq)
		}
		head = Checkpoint{Seq: e.Seq, Hash: e.Hash}
		prev = e.Hash
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrAuditTampered) {
			return head, err
		}
		return head, fmt.Errorf("verify audit log: %w", err)
	}
	if head.Seq < cp.Seq {
		return head, fmt.Errorf("%w: the log ends at entry %d, before the checkpoint at %d (truncated)", ErrAuditTampered, head.Seq, cp.Seq)
	}
	return head, nil
}

// details encodes v as audit details; encoding plain values cannot fail.
func details(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", err.Error()))
	}
	return b
}
