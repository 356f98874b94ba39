// Package auth authenticates and authorises callers of the simdex HTTP API:
// API tokens stored hashed, optional mutual TLS, four ordered roles, and
// access limited to named legal matters.
//
// # Tokens
//
// A token is shown once, when it is created, as
//
//	sdx_<id>_<secret>
//
// where id is 16 hex digits naming the token and secret is 32 random bytes
// in unpadded base64url. The store keeps the SHA-256 of the secret (with
// the id, domain-separated), never the secret: a 256-bit random secret
// needs no slow password hash, and the comparison is constant-time. Tokens
// carry the person they are for (a name, required, and an optional e-mail
// address), a role, the matters they are limited to, who created them and
// when, an optional expiry and a revocation. Creating and revoking a token
// are recorded through the Auditor. A principal acts under its person's
// name with the token id beside it (Principal.Actor). Every request reads
// its token from the Store: nothing caches a token, so a revocation is
// refused on the next request.
//
// # Roles and permissions
//
//	permission            viewer  reviewer  legal-admin  admin
//	documents.read          x        x          x          x
//	similar.read            x        x          x          x
//	families.read           x        x          x          x
//	flags.read                       x          x          x
//	flags.review                     x          x          x
//	matters.read                     x          x          x
//	rules.read                       x          x          x
//	holds.manage                                x          x
//	rules.dryrun                                x          x
//	audit.read                                  x          x
//	exports.create                              x          x
//	deletions.execute                           x          x
//	tokens.manage                                          x
//	connectors.backfill                                    x
//	deliveries.requeue                                     x
//	operations.read                                        x
//
// # Matters
//
// A principal limited to named matters sees only those
// (Principal.CanSeeMatter). A legal-admin or admin with no matter named
// sees every matter; a viewer or reviewer with none named would see none,
// so Manager.Create refuses such a token (ErrMatterRequired; certificates
// mapped without matters, and tokens stored before, are still read). A
// matter name follows CheckMatter, the rule policy checks holds with.
//
// # HTTP
//
// Middleware answers 401 with a JSON {"error": …} body unless the request
// carries a valid bearer token (or a verified client certificate mapped by
// a CertMap), and puts the Principal in the request context; Require
// answers 403 unless the principal holds a permission. Public paths
// (health, readiness, metrics, the UI's static files) are the caller's
// choice: it leaves them outside Middleware.
package auth
