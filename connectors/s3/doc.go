// Package s3 connects simdex to one MinIO or S3-compatible bucket through
// minio-go: it decodes bucket events, fetches the exact object version an
// event names, backfills and reconciles the bucket against the index, and
// places S3 Object Lock legal holds for the policy engine.
//
// # Events
//
// Bucket events arrive in one of two ways:
//
//   - "jetstream": MinIO's NATS notification target publishes every event
//     to a JetStream stream; the connectors/jetstream package consumes it
//     durably (at least once, acknowledged after commit, dead letters) and
//     turns each message into events with Decoder, which calls
//     Client.DecodeRecords. This is the mode to use in production.
//   - "listen": MinIO's ListenBucketNotification API (Client.Listen,
//     Client.ListenSource). The server drops events for slow listeners and
//     replays nothing, so this mode is a hint only: reconciliation is the
//     system of record. Some MinIO releases (the one the tests pin among
//     them) never flush the listen stream: events leave the server only
//     when its write buffers (about 6 KB) fill, cut in the middle of HTTP
//     chunks, so the stream is read one byte per Read (listenIdentity)
//     and probes push the last events out. When no event has come for
//     Config.ProbeInterval, Listen writes canary objects under ProbeDir
//     (deleting each at once) until one's event arrives; none within the
//     probe's timeout means the subscription stalled: it is replaced.
//     Config.CatchUp (the daemon: a reconciliation) runs once each
//     subscription holds, the first one and each replacement of one that
//     stalled or failed, since MinIO replays nothing. ListenHealth reports a
//     stall until the new subscription delivers. Canary keys are skipped
//     by every mode, Backfill and Reconcile.
//
// Either way, MinIO's own event delivery is not guaranteed across restarts
// or full queues, so the daemon runs Client.Reconcile periodically and
// Client.Backfill on first start.
//
// Event names: s3:ObjectCreated:Put, :Post, :Copy and
// :CompleteMultipartUpload become connectors.Created events;
// s3:ObjectRemoved:Delete and :DeleteMarkerCreated become connectors.Removed
// events. Every other event is ignored, notably s3:ObjectCreated:PutTagging,
// :DeleteTagging, :PutRetention and :PutLegalHold (metadata changes of an
// existing version, which keep its content, version id and ETag; holds
// placed by simdex itself produce them), s3:ObjectRemoved:NoOP (a delete of
// nothing), s3:ObjectAccessed:*, lifecycle, transition, restore,
// replication and scanner events. Names without the "s3:" prefix, as AWS
// writes them, are accepted too. Records of other buckets, of keys
// outside Config.Prefix, or of listen mode's canaries (under ProbeDir)
// are skipped: MinIO publishes every bucket to the same subject.
//
// A Removed event carries the version id the event names: the deleted
// version for s3:ObjectRemoved:Delete, the new delete marker's own id for
// :DeleteMarkerCreated (the key's versions still exist but are no longer
// current). A Removed event's version id that the index does not know
// therefore means "the key was deleted".
//
// # Identity
//
// Event.IdempotencyKey joins Source, Bucket, Key, VersionID and ETag, and is
// the same for one version whether it came from a JetStream event, a listen
// notification, Backfill or Reconcile: keys are URL-decoded (notification
// targets receive url.QueryEscape'd keys, the listen API raw ones), ETags
// lose their quotes, and the version id of an unversioned object is ""
// (never "null"). Removed events have an empty ETag, so their key differs
// from the Created event of the same version. On an unversioned bucket
// every delete of a key therefore has the same idempotency key: removals
// are idempotent, and the pipeline must not skip a removal merely because
// an earlier one of the same key was committed.
//
// # Fetching
//
// Event.Open fetches exactly the version an event names: by version id on
// versioned buckets; on unversioned buckets by key, refusing the object if
// its ETag is no longer the event's (ErrSuperseded: the newer object has
// its own event). A missing object, version or bucket is a Permanent error
// wrapping connectors.ErrObjectMissing; an object over Config.MaxObjectSize
// is Permanent (ErrTooLarge), checked against the event's size, the
// object's size and the bytes actually read; network trouble, an
// unavailable server and refused credentials are Transient (credentials
// may be fixed without the event changing; ErrAccessDenied tells them
// apart).
package s3
