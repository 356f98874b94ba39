package mailthread

import (
	"slices"
	"time"
)

// Reason tells why a message is inclusive, as Relativity's Inclusive
// Reason does.
type Reason uint8

// Reasons, a bit each.
const (
	// ByMessage: no later message of the thread holds all of its text.
	ByMessage Reason = 1 << iota
	// ByAttachment: no later message holding its text holds all of its
	// attachments too.
	ByAttachment
	// ByDraft: a draft is always inclusive.
	ByDraft
)

// String returns the reason as Relativity writes it: "Message",
// "Attachment", "Message; Attachment", "Draft", or "".
func (r Reason) String() string {
	var parts []string
	if r&ByMessage != 0 {
		parts = append(parts, "Message")
	}
	if r&ByAttachment != 0 {
		parts = append(parts, "Attachment")
	}
	if r&ByDraft != 0 {
		parts = append(parts, "Draft")
	}
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "; "
		}
		s += p
	}
	return s
}

// Message is one message of a thread, as Inclusive needs it.
type Message struct {
	// Date orders the thread; ties keep the order of the slice.
	Date time.Time
	// Draft marks an unsent message: always inclusive.
	Draft bool
	// Attachments identify its attachments (content hashes).
	Attachments []string
}

// Mark is the inclusive mark of one message.
type Mark struct {
	// Inclusive is true when no later message holds all of the message's
	// text and attachments: reviewing the inclusive messages of a thread
	// covers all of it.
	Inclusive bool
	// Reason says why it is inclusive; 0 when it is not.
	Reason Reason
	// By is the index of a later message holding all of it, or -1.
	By int
}

// MaxThread bounds the messages Inclusive compares pairwise; later ones
// are marked inclusive without comparison (nothing is hidden from
// review).
const MaxThread = 2000

// Inclusive marks each of msgs. contains(i, j) reports whether message j
// holds all of message i's text; it is asked only for j later than i in
// date order, at most once per pair, and never with j a draft: a draft
// may never have been sent, so it hides nothing. Identical messages are ordered by
// date then position: only the last copy is inclusive.
func Inclusive(msgs []Message, contains func(i, j int) bool) []Mark {
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return msgs[a].Date.Compare(msgs[b].Date) })
	marks := make([]Mark, len(msgs))
	for k, i := range order {
		marks[i] = mark(msgs, order[k+1:], i, k < MaxThread, contains)
	}
	return marks
}

// mark decides message i against the messages later in order.
func mark(msgs []Message, later []int, i int, compare bool, contains func(i, j int) bool) Mark {
	if msgs[i].Draft {
		return Mark{Inclusive: true, Reason: ByDraft, By: -1}
	}
	if !compare {
		return Mark{Inclusive: true, Reason: ByMessage, By: -1}
	}
	textHeld := false
	for _, j := range later[:min(len(later), MaxThread)] {
		if msgs[j].Draft || !contains(i, j) {
			continue
		}
		textHeld = true
		if holdsAll(msgs[j].Attachments, msgs[i].Attachments) {
			return Mark{By: j}
		}
	}
	if textHeld {
		return Mark{Inclusive: true, Reason: ByAttachment, By: -1}
	}
	r := ByMessage
	if len(msgs[i].Attachments) > 0 && !anyHolds(msgs, later, msgs[i].Attachments) {
		r |= ByAttachment
	}
	return Mark{Inclusive: true, Reason: r, By: -1}
}

// holdsAll reports whether have holds every element of want.
func holdsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// anyHolds reports whether the later messages together hold every
// attachment of want.
func anyHolds(msgs []Message, later []int, want []string) bool {
	for _, w := range want {
		found := slices.ContainsFunc(later, func(j int) bool { return slices.Contains(msgs[j].Attachments, w) })
		if !found {
			return false
		}
	}
	return true
}
