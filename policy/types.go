package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/index"
	"github.com/simdex/simdex/notifier"
)

// Errors callers branch on with errors.Is.
var (
	// ErrNotFound reports an unknown hold, flag or run.
	ErrNotFound = errors.New("not found")
	// ErrEvaluationBusy reports an evaluation asked for while another runs
	// (on this replica or another): its results will be there when it
	// ends.
	ErrEvaluationBusy = errors.New("an evaluation is under way")
	// ErrHoldExists reports a hold whose matter is already taken.
	ErrHoldExists = errors.New("hold already exists")
	// ErrInvalidHold reports a hold that cannot be placed as given.
	ErrInvalidHold = errors.New("invalid hold")
	// ErrInvalidText reports a matter, name, reason, actor or selector
	// that is not valid UTF-8 or holds a NUL: neither can be stored,
	// audited and exported as text.
	ErrInvalidText = errors.New("not valid UTF-8 text or contains NUL")
	// ErrReasonRequired reports a release, approval or dismissal without a
	// reason, or an action without an actor.
	ErrReasonRequired = errors.New("reason and actor required")
	// ErrPlacementPending reports a hold whose placement is not complete:
	// it is stored (its seeds held) and its placement is retried until
	// every near-copy is recorded held and enforced. Until every
	// near-copy is recorded, a deletion it might cover is refused (it
	// wraps ErrLegalHold there) and a removal from the index deferred.
	ErrPlacementPending = errors.New("hold placement not complete")
	// ErrHoldReleased reports a change to a hold already released.
	ErrHoldReleased = errors.New("hold already released")
	// ErrFlagState reports a flag transition its status does not allow
	// (approving a dismissed flag, executing an open one...).
	ErrFlagState = errors.New("flag status does not allow this")
	// ErrNotDeletable reports an Execute on a flag that does not allow
	// deletion (a review rule, report mode, a document inside an archive,
	// a source without an Enforcer).
	ErrNotDeletable = errors.New("flag does not allow deletion")
	// ErrLegalHold reports a deletion refused because the version is held:
	// by a hold in the store, by a hold released less than the grace
	// period ago or before the last evaluation, or by its S3 legal hold.
	ErrLegalHold = errors.New("document is under legal hold")
	// ErrHoldUnknown reports that the hold state of a version could not be
	// read; nothing is deleted.
	ErrHoldUnknown = errors.New("hold state cannot be read")
	// ErrNotEnforceable reports a document an Enforcer cannot act on (not
	// an S3 object, or no client for its source).
	ErrNotEnforceable = errors.New("document cannot be enforced")
	// ErrObjectLockDisabled reports an origin that can never hold a
	// document: its S3 bucket has no Object Lock. It is a configuration
	// error, flagged once for review (KindHoldUnenforced) and not retried
	// as a transient failure.
	ErrObjectLockDisabled = errors.New("object lock not enabled")
	// ErrCannotLock reports a source that cannot lock its documents at
	// all (a watched folder): a hold on one of them is kept in simdex
	// only, flagged once for review (KindHoldUnenforced), never retried.
	ErrCannotLock = errors.New("source cannot lock documents")
	// ErrStale reports a deletion refused because the object at its
	// origin is no longer the version indexed and approved (another
	// size, modification time or SHA-256).
	ErrStale = errors.New("document changed since it was indexed")
	// ErrGone reports a deletion that cannot be carried out because the
	// document is gone: from the index, or from its origin.
	ErrGone = errors.New("document is gone")
	// ErrAuditTampered reports an audit log that does not verify.
	ErrAuditTampered = errors.New("audit log tampered")
)

// FlagKind is what a flag is about; the values are the notifier's alert
// kinds.
type FlagKind string

// Flag kinds.
const (
	KindDispositionDue  FlagKind = notifier.KindDispositionDue
	KindHoldMatch       FlagKind = notifier.KindHoldMatch
	KindDuplicateUpload FlagKind = notifier.KindDuplicateUpload
	// KindHoldUnenforced flags a document a hold covers whose origin
	// cannot hold it (ErrObjectLockDisabled): it is held in the store
	// only, and a person must lock or preserve it.
	KindHoldUnenforced FlagKind = notifier.KindHoldUnenforced
	// KindHoldSourceChanged flags a held document its source deleted
	// (Rule ChangeDeleted) or overwrote (Rule ChangeSuperseded): simdex
	// keeps its indexed version, but the change may be spoliation.
	KindHoldSourceChanged FlagKind = notifier.KindHoldSourceChanged
)

// The changes at the source a KindHoldSourceChanged flag reports, its Rule:
// one flag per document, change and matter.
const (
	ChangeDeleted    = "deleted-at-source"
	ChangeSuperseded = "superseded"
)

// FlagStatus is where a flag is in its review.
type FlagStatus string

// Flag statuses. A flag goes open → approved → executed, or open|approved
// → dismissed. Executing is transient: an Execute under way has claimed
// the flag. An approved disposition that cannot be carried out (held,
// stale, gone, not deletable at its source) is refused, its reason saying
// why; executing it again retries every check, dismissing it closes it.
const (
	StatusOpen      FlagStatus = "open"
	StatusApproved  FlagStatus = "approved"
	StatusDismissed FlagStatus = "dismissed"
	StatusExecuting FlagStatus = "executing"
	StatusExecuted  FlagStatus = "executed"
	StatusRefused   FlagStatus = "refused"
)

// FlagStatuses lists every flag status, in the order of a review.
var FlagStatuses = []FlagStatus{StatusOpen, StatusApproved, StatusExecuting, StatusExecuted, StatusRefused, StatusDismissed}

// HoldStatus is active, placing or released.
type HoldStatus string

// Hold statuses. Stores keep active and released; a hold is reported
// placing (Engine.Hold, Engine.Holds) while a placement of it is pending:
// it is in force (its seeds and whatever is recorded held), and it is
// still being searched for near-copies or enforced.
const (
	HoldActive   HoldStatus = "active"
	HoldPlacing  HoldStatus = "placing"
	HoldReleased HoldStatus = "released"
)

// Object locates one version of a stored object at its origin: the
// top-level object of a document (an attachment's is its message's).
type Object struct {
	Source    string `json:"source"`
	Bucket    string `json:"bucket,omitempty"`
	Key       string `json:"key"`
	VersionID string `json:"version,omitempty"`
	// IndexKey is the index key of the top-level document.
	IndexKey string `json:"index_key"`
}

// String is source/bucket/key@version (source/key@version outside S3).
func (o Object) String() string {
	if o.Bucket != "" {
		return fmt.Sprintf("%s/%s/%s@%s", o.Source, o.Bucket, o.Key, o.VersionID)
	}
	return fmt.Sprintf("%s/%s@%s", o.Source, o.Key, o.VersionID)
}

// childSeparator joins a parent key and a child's location (as
// ingest.ChildSeparator).
const childSeparator = "!/"

// ObjectOf returns where r's top-level object lives. S3 index keys are
// "s3:<connector>/<bucket>/<key>" with Source "s3:<connector>".
func ObjectOf(r *index.Record) Object {
	top, _, _ := strings.Cut(r.Key, childSeparator)
	o := Object{Source: r.Source, VersionID: r.VersionID, IndexKey: top}
	rest, ok := strings.CutPrefix(top, r.Source+"/")
	if !ok {
		o.Key = top
		return o
	}
	if strings.HasPrefix(r.Source, "s3:") {
		o.Bucket, o.Key, _ = strings.Cut(rest, "/")
		return o
	}
	o.Key = rest
	return o
}

// SeedFilePrefix begins the index key of a seed file uploaded with a
// hold: "hold-seed:MATTER/NAME" (attachments inside it add "!/...").
const SeedFilePrefix = "hold-seed:"

// SeedFileMatter returns the matter a document was uploaded for as a
// hold's seed file, from its index key, or false for any other document.
// A seed file is its matter's evidence, not a record at an origin: it is
// never held by, or flagged for, another matter, never flagged as a
// duplicate upload or as the source of one, and never evaluated for
// retention.
func SeedFileMatter(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, SeedFilePrefix)
	if !ok {
		return "", false
	}
	matter, _, _ := strings.Cut(rest, "/")
	return matter, true
}

// foreignSeed reports whether r is a seed file uploaded for a matter
// other than matter.
func foreignSeed(r *index.Record, matter string) bool {
	m, ok := SeedFileMatter(r.Key)
	return ok && m != matter
}

// isSeedFile reports whether r is a seed file of any matter.
func isSeedFile(r *index.Record) bool {
	_, ok := SeedFileMatter(r.Key)
	return ok
}

// DocRef describes a document in flags and decisions.
type DocRef struct {
	ID      index.DocID `json:"id"`
	Name    string      `json:"name"`
	Source  string      `json:"source"`
	Key     string      `json:"key"`
	Version string      `json:"version,omitempty"`
}

// RefOf describes r.
func RefOf(r *index.Record) DocRef {
	return DocRef{ID: r.ID, Name: r.Name, Source: r.Source, Key: r.Key, Version: r.VersionID}
}

// Evidence says why a document was flagged.
type Evidence struct {
	// Scores compare the flagged document with the source document; nil
	// when the document was selected directly.
	Scores *index.Scores `json:"scores,omitempty"`
	// Role is "seed", "near-copy", "selected" or "duplicate".
	Role string `json:"role"`
	// Due is when the retention period ended (disposition flags).
	Due time.Time `json:"due,omitzero"`
	// Action is review or delete (disposition flags).
	Action string `json:"action,omitempty"`
	// Deletable reports whether an approved flag may be executed.
	Deletable bool `json:"deletable,omitempty"`
	// Note explains anything else worth knowing.
	Note string `json:"note,omitempty"`
}

// Flag is a persisted review item. Its natural key (Kind, Document.ID,
// Rule, Matter) is unique: re-evaluation never duplicates a flag.
type Flag struct {
	ID       int64      `json:"id"`
	Kind     FlagKind   `json:"kind"`
	Document DocRef     `json:"document"`
	Object   Object     `json:"object"`
	Source   *DocRef    `json:"source_document,omitempty"`
	Rule     string     `json:"rule,omitempty"`
	Matter   string     `json:"matter,omitempty"`
	Evidence Evidence   `json:"evidence"`
	Status   FlagStatus `json:"status"`
	Created  time.Time  `json:"created"`
	Updated  time.Time  `json:"updated"`
	Actor    string     `json:"actor,omitempty"`
	Reason   string     `json:"reason,omitempty"`
	// Published is set once the flag was handed to the Publisher.
	Published bool `json:"published"`
}

// AlertID is the notifier alert id of the flag.
func (f Flag) AlertID() string { return fmt.Sprintf("flag-%d", f.ID) }

// Approving says what a reviewer's approval of a flag of kind k means.
func (k FlagKind) Approving() string {
	switch k {
	case KindDispositionDue:
		return "approving agrees to the deletion, which execute then carries out"
	case KindHoldMatch:
		return "approving confirms the document belongs to the matter's hold"
	case KindDuplicateUpload:
		return "approving confirms the upload duplicates content already held"
	case KindHoldUnenforced:
		return "approving acknowledges that the hold is kept in simdex but not by S3 Object Lock"
	case KindHoldSourceChanged:
		return "approving acknowledges that the held document changed at its source; simdex keeps its indexed version"
	default:
		return "approving records the reviewer's agreement"
	}
}

// Alert builds the notifier alert of the flag.
func (f Flag) Alert() notifier.Alert {
	ev, _ := json.Marshal(struct {
		Evidence
		Source *DocRef `json:"source_document,omitempty"`
		Object Object  `json:"object"`
	}{f.Evidence, f.Source, f.Object})
	var summary string
	switch f.Kind {
	case KindHoldMatch:
		summary = fmt.Sprintf("%s found for matter %s", f.Document.Name, f.Matter)
	case KindDispositionDue:
		summary = fmt.Sprintf("%s is due for disposition under rule %s", f.Document.Name, f.Rule)
	case KindDuplicateUpload:
		summary = fmt.Sprintf("new upload %s duplicates existing content", f.Document.Name)
	case KindHoldUnenforced:
		summary = fmt.Sprintf("%s, held for matter %s: %s", f.Document.Name, f.Matter, f.Evidence.Note)
	case KindHoldSourceChanged:
		summary = fmt.Sprintf("%s, held for matter %s, was %s at its source: %s", f.Document.Name, f.Matter, f.Rule, f.Evidence.Note)
	default:
		summary = string(f.Kind) + " " + f.Document.Name
	}
	if f.Source != nil && f.Source.ID != f.Document.ID {
		summary += fmt.Sprintf(" (copy of %s)", f.Source.Name)
	}
	return notifier.Alert{
		ID: f.AlertID(), Kind: string(f.Kind), Matter: f.Matter, Rule: f.Rule,
		Document: int64(f.Document.ID), Name: f.Document.Name, Source: f.Document.Source,
		Summary: summary, Evidence: ev, Created: f.Created,
	}
}

// FlagFilter selects flags; zero fields match everything. Results are
// ordered by id; After is the last id of the previous page.
type FlagFilter struct {
	Kind     FlagKind
	Status   FlagStatus
	Matter   string
	Rule     string
	Document index.DocID
	After    int64
	Limit    int // default 100
	// Matters, when not nil, keeps only flags of one of these matters, ""
	// standing for flags of no matter (organisation-wide): what a
	// principal may see, its matters for one limited to matters.
	Matters []string
}

// HoldSpec is what placing a hold needs.
type HoldSpec struct {
	Matter    string
	Name      string
	Reason    string
	Owner     string
	Seeds     []index.DocID
	SeedKeys  []string
	Selectors []Selector
	Scope     index.Scope
	Mode      string // report or hold (default hold)
}

// Digest identifies what s asks for: the SHA-256 of its JSON, its seeds
// and seed keys sorted and its mode defaulted, so that a create repeated
// with the same body is recognised.
func (s HoldSpec) Digest() string {
	s.Seeds, s.SeedKeys = slices.Clone(s.Seeds), slices.Clone(s.SeedKeys)
	slices.Sort(s.Seeds)
	slices.Sort(s.SeedKeys)
	if s.Mode == "" {
		s.Mode = ModeHold
	}
	b, _ := json.Marshal(s) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (h HoldConfig) spec() HoldSpec {
	s := HoldSpec{Matter: h.Matter, Name: h.Name, Reason: h.Reason, Owner: h.Owner,
		SeedKeys: h.SeedKeys, Selectors: h.Selectors, Scope: h.Scope, Mode: h.Mode}
	for _, id := range h.Seeds {
		s.Seeds = append(s.Seeds, index.DocID(id))
	}
	return s
}

// checkText returns ErrInvalidText naming field when v is not text that
// every store can keep: valid UTF-8 without NUL.
func checkText(field, v string) error {
	if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("%s: %w", field, ErrInvalidText)
	}
	return nil
}

// texts checks fields, given as name and value in turn, with checkText.
func texts(fields ...string) error {
	var errs []error
	for i := 0; i+1 < len(fields); i += 2 {
		errs = append(errs, checkText(fields[i], fields[i+1]))
	}
	return errors.Join(errs...)
}

// checkMatter checks a hold's matter name by the one rule for matter
// names, auth.CheckMatter, which tokens are limited to matters by too:
// text that is not text is ErrInvalidText, a blank name ErrInvalidHold.
func checkMatter(m string) error {
	err := auth.CheckMatter(m)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, auth.ErrInvalidText):
		return fmt.Errorf(".matter: %w", ErrInvalidText)
	}
	return fmt.Errorf(".matter: %w: %w", ErrInvalidHold, err)
}

// validate names each bad field after a leading dot (".scope: ...").
func (s HoldSpec) validate() error {
	var errs []error
	errs = append(errs, checkMatter(s.Matter), texts(".name", s.Name, ".reason", s.Reason, ".owner", s.Owner, ".mode", s.Mode))
	for i, k := range s.SeedKeys {
		errs = append(errs, checkText(fmt.Sprintf(".seed_keys[%d]", i), k))
	}
	if len(s.Seeds) == 0 && len(s.SeedKeys) == 0 && len(s.Selectors) == 0 {
		errs = append(errs, fmt.Errorf(".seeds: %w: no seed documents, keys or selectors", ErrInvalidHold))
	}
	for i, sel := range s.Selectors {
		if err := sel.Validate(); err != nil {
			errs = append(errs, fmt.Errorf(".selectors[%d]: %w: %w", i, ErrBadSelector, err))
		}
		if err := sel.checkText(); err != nil {
			errs = append(errs, fmt.Errorf(".selectors[%d]%w", i, err))
		}
		if sel.empty() {
			errs = append(errs, fmt.Errorf(".selectors[%d]: %w: empty selector would hold every document", i, ErrBadSelector))
		}
	}
	if err := validScope(s.Scope); err != nil {
		errs = append(errs, fmt.Errorf(".scope: %w: %w", ErrBadThreshold, err))
	}
	switch s.Mode {
	case "", ModeReport, ModeHold:
	default:
		errs = append(errs, fmt.Errorf(".mode: %w: %q is not report or hold", ErrInvalidHold, s.Mode))
	}
	return errors.Join(errs...)
}

// Hold is a legal hold (a matter) as stored.
type Hold struct {
	Matter    string        `json:"matter"`
	Name      string        `json:"name"`
	Reason    string        `json:"reason"`
	Owner     string        `json:"owner"`
	Seeds     []index.DocID `json:"seeds"`
	Selectors []Selector    `json:"selectors,omitempty"`
	Scope     index.Scope   `json:"scope"`
	Mode      string        `json:"mode"`
	Status    HoldStatus    `json:"status"`
	Created   time.Time     `json:"created"`
	CreatedBy string        `json:"created_by"`
	// Released, ReleasedBy and ReleaseReason are set once released.
	Released      time.Time `json:"released,omitzero"`
	ReleasedBy    string    `json:"released_by,omitempty"`
	ReleaseReason string    `json:"release_reason,omitempty"`
	// Held counts the documents held (seeds included).
	Held int `json:"held"`
	// Request is the digest of the HoldSpec the hold was created from
	// (HoldSpec.Digest): a create repeated with the same spec answers the
	// hold, another spec ErrHoldExists. Empty for holds created before.
	Request string `json:"request,omitempty"`
	// Placement is the placement still pending, while Status is placing
	// (filled by the Engine, not stored in the hold).
	Placement *PendingPlacement `json:"placement,omitempty"`
}

// PendingPlacement is a hold's placement not complete yet: recorded with
// the hold, in the same transaction, and removed once every near-copy of
// every seed is recorded held and, in mode hold, its S3 legal hold is on.
type PendingPlacement struct {
	Matter string `json:"matter"`
	// Recorded is set once every near-copy found is recorded held: from
	// then on the held records protect what the hold covers, and only
	// enforcement remains. Until then every removal from the index is
	// deferred and every deletion refused (ErrPlacementPending).
	Recorded bool `json:"recorded"`
	// Attempts counts the failed attempts, LastError is the last one's
	// error, and Next is when the next attempt is due (zero: at once).
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error,omitempty"`
	Next      time.Time `json:"next_attempt,omitzero"`
}

// HeldDoc records that a matter holds a document.
type HeldDoc struct {
	Matter   string
	Document DocRef
	Object   Object
	// Content is the document's text id; seeds' contents feed the ingest
	// check.
	Content index.ContentID
	Seed    bool
	Placed  time.Time
}

// Run records one evaluation.
type Run struct {
	ID      int64     `json:"id"`
	DryRun  bool      `json:"dry_run"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Documents evaluated, Due for disposition (the decisions of outcome
	// flag), Held (due but held or kept: the decisions of outcome held or
	// kept), Flagged (the flag decisions with no flag raised before: the
	// flags a real run added, or a dry run would add), HoldMatches (new
	// hold-match flags from the hold sweep), Errors.
	Documents   int    `json:"documents"`
	Due         int    `json:"due"`
	Held        int    `json:"held"`
	Flagged     int    `json:"flagged"`
	HoldMatches int    `json:"hold_matches"`
	Errors      int    `json:"errors"`
	Error       string `json:"error,omitempty"`
	// Decisions are what was (or, in a dry run, would be) decided about
	// each document due or brought in as a near-copy; they are not stored.
	Decisions []Decision `json:"decisions,omitempty"`
}

// Decision is the outcome for one document of one evaluation.
type Decision struct {
	Document DocRef   `json:"document"`
	Source   *DocRef  `json:"source_document,omitempty"`
	Rule     string   `json:"rule,omitempty"`
	Outcome  Outcome  `json:"outcome"`
	Reason   string   `json:"reason"`
	Evidence Evidence `json:"evidence"`
	// Flag is the id of the disposition flag an earlier run raised for
	// this document and rule (outcome flag only); 0 when the run raises
	// it (or, dry, would).
	Flag int64 `json:"flag,omitempty"`
}

// Outcome of a decision.
type Outcome string

// Outcomes.
const (
	// OutcomeFlag: flagged for disposition (review or delete).
	OutcomeFlag Outcome = "flag"
	// OutcomeHeld: due, but a hold beats the deletion.
	OutcomeHeld Outcome = "held"
	// OutcomeKept: a longer retention or a keep_at_least rule wins.
	OutcomeKept Outcome = "kept"
)

// FlagView is the flat JSON shape of a flag for `simdex flags list
// --json` and the API: id, kind, document (id), name, source, rule,
// matter, status and evidence at the top level.
type FlagView struct {
	ID             int64      `json:"id"`
	Kind           FlagKind   `json:"kind"`
	Document       int64      `json:"document"`
	Name           string     `json:"name"`
	Source         string     `json:"source"`
	Key            string     `json:"key"`
	Version        string     `json:"version,omitempty"`
	Rule           string     `json:"rule"`
	Matter         string     `json:"matter"`
	Status         FlagStatus `json:"status"`
	Evidence       Evidence   `json:"evidence"`
	SourceDocument *DocRef    `json:"source_document,omitempty"`
	Object         Object     `json:"object"`
	Created        time.Time  `json:"created"`
	Updated        time.Time  `json:"updated"`
	Actor          string     `json:"actor,omitempty"`
	Reason         string     `json:"reason,omitempty"`
}

// View returns the flat shape of f.
func (f Flag) View() FlagView {
	return FlagView{ID: f.ID, Kind: f.Kind, Document: int64(f.Document.ID), Name: f.Document.Name, Source: f.Document.Source,
		Key: f.Document.Key, Version: f.Document.Version, Rule: f.Rule, Matter: f.Matter, Status: f.Status,
		Evidence: f.Evidence, SourceDocument: f.Source, Object: f.Object, Created: f.Created, Updated: f.Updated,
		Actor: f.Actor, Reason: f.Reason}
}
