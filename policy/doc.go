// Package policy makes retention and legal-hold obligations follow the
// content: a rule or a hold that reaches a document reaches every
// near-copy of it, as the index finds them.
//
// The model:
//
//   - Retention rules (Config.Retention) select documents (Selector) and
//     keep them for a Period counted from an age basis; when the period is
//     over, the document and its near-copies are flagged disposition-due.
//     keep_at_least rules (Config.KeepAtLeast) only retain. Precedence
//     follows Purview and Vault (see Decide): a hold beats every deletion,
//     an explicit rule beats one inherited from a near-copy, the longest
//     retention wins and keep_at_least beats shorter deletions.
//   - Legal holds (matters) name seed documents, by id or Selector; every
//     near-copy of a seed within the hold's Scope is held and flagged
//     hold-match, both when the hold is placed and when a copy is indexed
//     later (Engine.CheckIngested). In mode "hold" the S3 Object Lock legal
//     hold of every version of every held object is turned on through an
//     Enforcer. A placement is durable: stored pending with the hold, it
//     is completed by ResumePlacements (any replica, under the hold's
//     lease) when it was cut short, and until it has recorded every
//     near-copy no removal or deletion it might cover goes ahead.
//   - Deletion is two-phase: a disposition flag must be approved by a
//     reviewer before Engine.Execute deletes exactly that object version,
//     after checking again, at that moment, the holds in the Store and the
//     object's own legal hold. After a release, nothing the hold covered is
//     deleted before a grace period and a fresh evaluation.
//   - Flags are persisted review items; each new one is handed to a
//     Publisher once, through an outbox-style published marker.
//   - Every decision is appended to a hash-chained audit log (Verify).
//
// The Engine keeps no state beyond caches rebuilt from the Store, so
// several replicas may share one Store.
package policy
