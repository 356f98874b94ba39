// Package notifier tells reviewers about flags: a document due for
// disposition, a near-copy found for a matter under legal hold, an upload
// that duplicates existing content.
//
// Alerts go through a persisted outbox so that none is lost across
// restarts: Notify routes an alert to its channels and records one delivery
// per channel in the outbox in one step; a dispatcher claims due
// deliveries, sends them and records the outcome. A failed delivery is
// retried with exponential backoff and, after the configured number of
// attempts, kept as failed (visible, and retried on request) — never
// dropped. Claims are leases in the outbox, so several replicas sharing one
// outbox do not send the same delivery twice in normal operation; delivery
// is at least once (a crash between sending and recording sends again), so
// every message carries the alert id for receivers to deduplicate.
//
// Channels: NATS (a subject per alert kind), webhooks (JSON signed with
// HMAC-SHA256, or Slack's incoming-webhook format) and e-mail (SMTP with
// STARTTLS, one message per alert or a periodic digest). Routes choose
// channels by alert kind, matter and rule.
package notifier
