// Package postgres is the API token store of a fleet of simdex replicas:
// tokens (hashed, never their secrets) in the PostgreSQL database the
// replicas share. It satisfies auth.Store as auth/sqlite does; importers
// alias it authpg.
//
// Every write is one statement, so the database alone settles races
// between replicas: the primary key refuses a second token with the same
// id, and a revocation updates only a token not revoked yet, so the first
// one stands whole. Calls that lose their connection (a server restart)
// are tried again where that cannot apply them twice (see PutToken).
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/internal/pgdb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SchemaTable is the goose version table of this store's migrations.
const SchemaTable = "auth_schema"

// ErrDuplicate reports a token whose id is already stored.
var ErrDuplicate = errors.New("token id already stored")

// Store is the PostgreSQL token store. It is safe for concurrent use, and
// by several processes on one database.
type Store struct {
	pool *pgxpool.Pool
}

var _ auth.Store = (*Store)(nil)

// New migrates the token schema in pool's database and returns the store.
// The pool stays the caller's.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	if err := pgdb.Migrate(ctx, pool, migrations, "migrations", SchemaTable); err != nil {
		return nil, fmt.Errorf("open token store: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Close releases nothing: the pool belongs to the caller. It exists so
// that the store closes like its SQLite twin.
func (s *Store) Close() error { return nil }

// PutToken implements auth.Store. An id already stored is ErrDuplicate.
// When the connection is lost during the insert, whether it committed is
// unknown: the insert is tried again, and if that finds the id taken by
// the very same record, the first try had committed and PutToken
// succeeds.
func (s *Store) PutToken(ctx context.Context, t auth.Token) error {
	matters := t.Matters
	if matters == nil {
		matters = []string{}
	}
	uncertain := false
	err := pgdb.Retry(ctx, true, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO auth_token
			(id, hash, role, matters, description, created, created_by, expires, revoked, revoked_by, revoke_reason, name, email)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			t.ID, t.Hash[:], string(t.Role), matters, t.Description, t.Created, t.CreatedBy,
			nullTime(t.Expires), nullTime(t.Revoked), t.RevokedBy, t.RevokeReason, t.Name, t.Email)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			if uncertain && s.holds(ctx, t) {
				return nil
			}
			return ErrDuplicate
		}
		uncertain = uncertain || pgdb.ConnectionLost(err)
		return err
	})
	if err != nil {
		return fmt.Errorf("store token %s: %w", t.ID, err)
	}
	return nil
}

// holds reports whether the store holds exactly t.
func (s *Store) holds(ctx context.Context, t auth.Token) bool {
	got, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM auth_token WHERE id = $1`, t.ID))
	return err == nil && same(got, t)
}

// same reports whether two tokens are one record, to the precision the
// store keeps times with (microseconds).
func same(a, b auth.Token) bool {
	eq := func(x, y time.Time) bool { return x.Truncate(time.Microsecond).Equal(y.Truncate(time.Microsecond)) }
	return a.ID == b.ID && a.Hash == b.Hash && a.Role == b.Role && slices.Equal(a.Matters, b.Matters) &&
		a.Name == b.Name && a.Email == b.Email && a.Description == b.Description && eq(a.Created, b.Created) && a.CreatedBy == b.CreatedBy &&
		eq(a.Expires, b.Expires) && eq(a.Revoked, b.Revoked) && a.RevokedBy == b.RevokedBy && a.RevokeReason == b.RevokeReason
}

const columns = `id, hash, role, matters, description, created, created_by, expires, revoked, revoked_by, revoke_reason, name, email`

// nullTime is NULL for the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func scanToken(r pgx.Row) (auth.Token, error) {
	var (
		t                auth.Token
		hash             []byte
		role             string
		expires, revoked *time.Time
	)
	if err := r.Scan(&t.ID, &hash, &role, &t.Matters, &t.Description, &t.Created, &t.CreatedBy,
		&expires, &revoked, &t.RevokedBy, &t.RevokeReason, &t.Name, &t.Email); err != nil {
		return auth.Token{}, err
	}
	if len(hash) != len(t.Hash) {
		return auth.Token{}, fmt.Errorf("token %s: stored hash has %d bytes", t.ID, len(hash))
	}
	copy(t.Hash[:], hash)
	t.Role = auth.Role(role)
	t.Created = t.Created.UTC()
	if expires != nil {
		t.Expires = expires.UTC()
	}
	if revoked != nil {
		t.Revoked = revoked.UTC()
	}
	return t, nil
}

// Token implements auth.Store. pgx prepares the query once per
// connection, as every API request runs it.
func (s *Store) Token(ctx context.Context, id string) (auth.Token, error) {
	var t auth.Token
	err := pgdb.Retry(ctx, true, func(ctx context.Context) error {
		var err error
		t, err = scanToken(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM auth_token WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Token{}, fmt.Errorf("load token %s: %w", id, auth.ErrTokenNotFound)
	}
	if err != nil {
		return auth.Token{}, fmt.Errorf("load token %s: %w", id, err)
	}
	return t, nil
}

// Tokens implements auth.Store.
func (s *Store) Tokens(ctx context.Context) ([]auth.Token, error) {
	var out []auth.Token
	err := pgdb.Retry(ctx, true, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT `+columns+` FROM auth_token ORDER BY created, id`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (auth.Token, error) { return scanToken(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken implements auth.Store. The update applies only to a token
// not revoked yet, in one statement: of two replicas revoking at once,
// the first to commit stands and the other changes nothing. For the same
// reason it is repeated safely after a lost connection; the repeat then
// recognises the revocation of its first try as its own.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time, actor, reason string) (bool, error) {
	if at.IsZero() {
		return false, fmt.Errorf("revoke token %s: no revocation time", id)
	}
	var revoked, uncertain bool
	err := pgdb.Retry(ctx, true, func(ctx context.Context) error {
		// The SELECT reads the row as it was before the UPDATE.
		var (
			was              *time.Time
			wasBy, wasReason string
		)
		err := s.pool.QueryRow(ctx, `WITH upd AS (
				UPDATE auth_token SET revoked = $2, revoked_by = $3, revoke_reason = $4
				WHERE id = $1 AND revoked IS NULL RETURNING 1)
			SELECT EXISTS (SELECT 1 FROM upd), revoked, revoked_by, revoke_reason FROM auth_token WHERE id = $1`,
			id, at, actor, reason).Scan(&revoked, &was, &wasBy, &wasReason)
		if err == nil && !revoked && uncertain {
			// The try whose connection was lost may have committed: then
			// the revocation found is this call's own.
			revoked = was != nil && was.Equal(at.Truncate(time.Microsecond)) && wasBy == actor && wasReason == reason
		}
		uncertain = uncertain || pgdb.ConnectionLost(err)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("revoke token %s: %w", id, auth.ErrTokenNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return revoked, nil
}
