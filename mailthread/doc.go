// Package mailthread reads e-mail the way a reviewer does: it cleans
// subjects of reply, forward and list tags (Subject), splits a message
// body into its component e-mails — the new text, then each quoted or
// forwarded message with its depth (Parse) — removes signature and list
// footer blocks (StripBoilerplate), derives a thread key from the
// Message-ID, In-Reply-To, References and Subject headers (Key, Resolve),
// and marks the inclusive messages of a thread (Inclusive).
//
// Everything here is pure: no I/O, no logging, no globals that change.
// Every parser works line by line in time linear in its input and, on
// any input, returns at most as many bytes of text as it was given, in at
// most MaxParts parts.
//
// It is the e-mail thread and quote grammar shared by extraction (package
// extract, which builds a message's text) and the index (which keys
// threads and strips boilerplate), so it sits beside both and imports
// neither.
package mailthread
