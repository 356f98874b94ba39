// Package sqlite is the embedded API token store: tokens (hashed, never
// their secrets) in a SQLite database in WAL mode, next to the index.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simdex/simdex/auth"
	"github.com/simdex/simdex/internal/sqlitedb"
)

// migrations[i] upgrades the schema from version i; the schema version is
// PRAGMA user_version.
var migrations = []string{
	`CREATE TABLE token (
		id            TEXT PRIMARY KEY,
		hash          BLOB NOT NULL,
		role          TEXT NOT NULL,
		matters       TEXT NOT NULL,
		description   TEXT NOT NULL DEFAULT '',
		created       INTEGER NOT NULL,
		created_by    TEXT NOT NULL,
		expires       INTEGER NOT NULL DEFAULT 0,
		revoked       INTEGER NOT NULL DEFAULT 0,
		revoked_by    TEXT NOT NULL DEFAULT '',
		revoke_reason TEXT NOT NULL DEFAULT ''
	);`,
	// 1: the person a token is for. Tokens created before keep '' (see
	// auth.Token.DisplayName).
	`ALTER TABLE token ADD COLUMN name TEXT NOT NULL DEFAULT '';
	ALTER TABLE token ADD COLUMN email TEXT NOT NULL DEFAULT '';`,
}

// ErrSchemaVersion reports a store written by a newer simdex.
var ErrSchemaVersion = sqlitedb.ErrSchemaVersion

// ErrForeign reports a file that is not a token store; it is left as it
// was.
var ErrForeign = sqlitedb.ErrForeign

// Store is the SQLite token store. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// byID reads a token: prepared once, as every API request runs it
	// (parsed at each call, it was a tenth of an "all versions" request's
	// CPU at 1,000,000 documents).
	byID *sql.Stmt
}

var _ auth.Store = (*Store)(nil)

// Open opens or creates the token store at path and migrates its schema.
func Open(ctx context.Context, path string) (*Store, error) {
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Tokens, migrations)
	if err != nil {
		return nil, fmt.Errorf("open token store %s: %w", path, err)
	}
	// Every API request reads a token. As many idle connections as open
	// ones: with the default two, concurrent requests closed and reopened
	// connections (parsing the schema again), half of each lookup's CPU.
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	byID, err := db.PrepareContext(ctx, `SELECT `+columns+` FROM token WHERE id = ?`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open token store %s: %w", path, err)
	}
	return &Store{db: db, byID: byID}, nil
}

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.byID.Close(), s.db.Close()) }

// PutToken implements auth.Store.
func (s *Store) PutToken(ctx context.Context, t auth.Token) error {
	matters := t.Matters
	if matters == nil {
		matters = []string{}
	}
	mj, err := json.Marshal(matters)
	if err != nil {
		return fmt.Errorf("store token %s: encode matters: %w", t.ID, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO token(id, hash, role, matters, description, created, created_by, expires, revoked, revoked_by, revoke_reason, name, email)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Hash[:], string(t.Role), string(mj), t.Description, sqlitedb.Millis(t.Created), t.CreatedBy,
		sqlitedb.Millis(t.Expires), sqlitedb.Millis(t.Revoked), t.RevokedBy, t.RevokeReason, t.Name, t.Email)
	if err != nil {
		return fmt.Errorf("store token %s: %w", t.ID, err)
	}
	return nil
}

const columns = `id, hash, role, matters, description, created, created_by, expires, revoked, revoked_by, revoke_reason, name, email`

type scanner interface{ Scan(...any) error }

func scanToken(r scanner) (auth.Token, error) {
	var (
		t                         auth.Token
		hash                      []byte
		role, matters             string
		created, expires, revoked int64
	)
	if err := r.Scan(&t.ID, &hash, &role, &matters, &t.Description, &created, &t.CreatedBy, &expires, &revoked, &t.RevokedBy, &t.RevokeReason, &t.Name, &t.Email); err != nil {
		return auth.Token{}, err
	}
	if len(hash) != len(t.Hash) {
		return auth.Token{}, fmt.Errorf("token %s: stored hash has %d bytes", t.ID, len(hash))
	}
	copy(t.Hash[:], hash)
	if err := json.NewDecoder(strings.NewReader(matters)).Decode(&t.Matters); err != nil {
		return auth.Token{}, fmt.Errorf("token %s: decode matters: %w", t.ID, err)
	}
	t.Role = auth.Role(role)
	t.Created, t.Expires, t.Revoked = sqlitedb.FromMillis(created), sqlitedb.FromMillis(expires), sqlitedb.FromMillis(revoked)
	return t, nil
}

// Token implements auth.Store.
func (s *Store) Token(ctx context.Context, id string) (auth.Token, error) {
	t, err := scanToken(s.byID.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Token{}, fmt.Errorf("load token %s: %w", id, auth.ErrTokenNotFound)
	}
	if err != nil {
		return auth.Token{}, fmt.Errorf("load token %s: %w", id, err)
	}
	return t, nil
}

// Tokens implements auth.Store.
func (s *Store) Tokens(ctx context.Context) ([]auth.Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+columns+` FROM token ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []auth.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken implements auth.Store.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time, actor, reason string) (bool, error) {
	if at.IsZero() {
		return false, fmt.Errorf("revoke token %s: no revocation time", id)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE token SET revoked = ?, revoked_by = ?, revoke_reason = ? WHERE id = ? AND revoked = 0`,
		sqlitedb.Millis(at), actor, reason, id)
	if err != nil {
		return false, fmt.Errorf("revoke token %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return n == 1, err
	}
	// Nothing updated: the token was revoked already (the first
	// revocation stands), or there is no such token.
	if _, err := s.Token(ctx, id); err != nil {
		return false, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return false, nil
}
