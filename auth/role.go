package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Role is what a principal may do. Roles are ordered: each has every
// permission of the roles below it.
type Role string

// Roles, from least to most privileged.
const (
	RoleViewer     Role = "viewer"
	RoleReviewer   Role = "reviewer"
	RoleLegalAdmin Role = "legal-admin"
	RoleAdmin      Role = "admin"
)

// Roles lists every role from least to most privileged.
var Roles = []Role{RoleViewer, RoleReviewer, RoleLegalAdmin, RoleAdmin}

// ParseRole returns the role named s, spelled exactly as in Roles
// ("Reviewer" is not a role), or an error wrapping ErrUnknownRole.
func ParseRole(s string) (Role, error) {
	r := Role(strings.TrimSpace(s))
	if !r.Valid() {
		return "", fmt.Errorf("%w %q (want viewer, reviewer, legal-admin or admin)", ErrUnknownRole, s)
	}
	return r, nil
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// rank orders roles; unknown roles rank below every known one.
func (r Role) rank() int { return slices.Index(Roles, r) }

// AtLeast reports whether r is a known role at least as privileged as o.
func (r Role) AtLeast(o Role) bool { return r.Valid() && o.Valid() && r.rank() >= o.rank() }

// Permission is one action of the API.
type Permission string

// Permissions, with the least role holding each (see the package
// documentation for the table).
const (
	// viewer
	PermDocumentsRead Permission = "documents.read" // documents, all versions of a file
	PermSimilarRead   Permission = "similar.read"   // near-copies of a document or an upload
	PermFamiliesRead  Permission = "families.read"  // near-copy families
	// reviewer
	PermFlagsRead   Permission = "flags.read"   // the review queue
	PermFlagsReview Permission = "flags.review" // approve, dismiss (bulk too)
	PermMattersRead Permission = "matters.read" // matters and their holds
	PermRulesRead   Permission = "rules.read"   // retention rules
	// legal-admin
	PermHoldsManage Permission = "holds.manage" // create and release holds and matters
	PermRulesDryRun Permission = "rules.dryrun" // dry-run retention rules
	PermAuditRead   Permission = "audit.read"   // read and verify the audit log
	PermExport      Permission = "exports.create"
	// PermDeletionsExecute carries out an approved deletion.
	PermDeletionsExecute Permission = "deletions.execute"
	// admin
	PermTokensManage       Permission = "tokens.manage"       // create, list, revoke tokens
	PermConnectorsBackfill Permission = "connectors.backfill" // start a backfill
	PermDeliveriesRequeue  Permission = "deliveries.requeue"  // retry failed notifications
	PermOperationsRead     Permission = "operations.read"     // dead letters, the notifier's outbox
)

// grants is the least role holding each permission.
var grants = map[Permission]Role{
	PermDocumentsRead:      RoleViewer,
	PermSimilarRead:        RoleViewer,
	PermFamiliesRead:       RoleViewer,
	PermFlagsRead:          RoleReviewer,
	PermFlagsReview:        RoleReviewer,
	PermMattersRead:        RoleReviewer,
	PermRulesRead:          RoleReviewer,
	PermHoldsManage:        RoleLegalAdmin,
	PermRulesDryRun:        RoleLegalAdmin,
	PermAuditRead:          RoleLegalAdmin,
	PermExport:             RoleLegalAdmin,
	PermDeletionsExecute:   RoleLegalAdmin,
	PermTokensManage:       RoleAdmin,
	PermConnectorsBackfill: RoleAdmin,
	PermDeliveriesRequeue:  RoleAdmin,
	PermOperationsRead:     RoleAdmin,
}

// Permissions lists every permission, from the viewer's to the admin's.
var Permissions = []Permission{
	PermDocumentsRead, PermSimilarRead, PermFamiliesRead,
	PermFlagsRead, PermFlagsReview, PermMattersRead, PermRulesRead,
	PermHoldsManage, PermRulesDryRun, PermAuditRead, PermExport, PermDeletionsExecute,
	PermTokensManage, PermConnectorsBackfill, PermDeliveriesRequeue, PermOperationsRead,
}

// MinRole returns the least role holding p, and false for an unknown
// permission.
func MinRole(p Permission) (Role, bool) {
	r, ok := grants[p]
	return r, ok
}

// Allowed reports whether role holds permission p. Unknown roles and
// permissions are never allowed.
func Allowed(role Role, p Permission) bool {
	least, ok := grants[p]
	return ok && role.AtLeast(least)
}
