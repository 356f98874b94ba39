package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// The store drivers of store.driver.
const (
	// DriverSQLite keeps every store in a file under data_dir: one replica.
	DriverSQLite = "sqlite"
	// DriverPostgres keeps every store in one PostgreSQL database that
	// every replica shares.
	DriverPostgres = "postgres"
)

// StoreConfig chooses where the index, policy, token and outbox stores
// keep their state.
type StoreConfig struct {
	// Driver is sqlite (the default) or postgres.
	Driver   string         `mapstructure:"driver"`
	Postgres PostgresConfig `mapstructure:"postgres"`
}

// PostgresConfig locates the fleet's PostgreSQL database. Its connection
// string carries a password, so it is never in the configuration file:
// exactly one of DSNFile and DSNEnv says where it is.
type PostgresConfig struct {
	// DSNFile is a file holding the connection string (a mounted Secret).
	DSNFile string `mapstructure:"dsn_file"`
	// DSNEnv is an environment variable holding it.
	DSNEnv string `mapstructure:"dsn_env"`
	// MaxConns bounds each replica's connections (default 20).
	MaxConns int32 `mapstructure:"max_conns"`
}

// Source names where the connection string comes from, for messages:
// "store.postgres.dsn_file /run/secrets/dsn".
func (p PostgresConfig) Source() string {
	if p.DSNFile != "" {
		return "store.postgres.dsn_file " + p.DSNFile
	}
	return "store.postgres.dsn_env " + p.DSNEnv
}

// PostgresDSN reads the connection string from the file store.postgres
// names (surrounding white space trimmed) or from its variable. Its error,
// wrapping ErrConfig, is one line naming the key and never the DSN.
func (c *Config) PostgresDSN(getenv func(string) string, readFile func(string) ([]byte, error)) (string, error) {
	pg := c.Store.Postgres
	if c.Store.Driver != DriverPostgres {
		return "", fmt.Errorf("%w: store.driver: %q is not postgres", ErrConfig, c.Store.Driver)
	}
	if pg.DSNEnv != "" {
		if v := strings.TrimSpace(getenv(pg.DSNEnv)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("%w: store.postgres.dsn_env: variable %s is empty or unset", ErrConfig, pg.DSNEnv)
	}
	b, err := readFile(pg.DSNFile)
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: store.postgres.dsn_file: %s does not exist", ErrConfig, pg.DSNFile)
	case errors.As(err, &pathErr):
		return "", fmt.Errorf("%w: store.postgres.dsn_file: read %s: %w", ErrConfig, pg.DSNFile, pathErr.Err)
	case err != nil:
		return "", fmt.Errorf("%w: store.postgres.dsn_file: read %s: %w", ErrConfig, pg.DSNFile, err)
	}
	dsn := strings.TrimSpace(string(b))
	if dsn == "" {
		return "", fmt.Errorf("%w: store.postgres.dsn_file: %s is empty", ErrConfig, pg.DSNFile)
	}
	return dsn, nil
}

// validateStore checks the store driver against the declared fleet: more
// than one replica needs stores and streams they share.
func (c *Config) validateStore(getenv func(string) string) []error {
	var errs problems
	pg, n := c.Store.Postgres, c.Replicas
	switch c.Store.Driver {
	case DriverSQLite:
		errs.badIf(pg.DSNFile != "" || pg.DSNEnv != "", "store.driver",
			"sqlite, but store.postgres names a DSN: set store.driver: postgres, or remove store.postgres.dsn_file and dsn_env")
	case DriverPostgres:
		errs.badIf(pg.DSNFile == "" && pg.DSNEnv == "", "store.postgres",
			"the postgres driver needs dsn_file (a file holding the DSN) or dsn_env (a variable holding it)")
		errs.badIf(pg.DSNFile != "" && pg.DSNEnv != "", "store.postgres", "give one of dsn_file and dsn_env, not both")
	default:
		errs.badIf(true, "store.driver", "%q is not sqlite or postgres", c.Store.Driver)
	}
	errs.badIf(pg.MaxConns < 1, "store.postgres.max_conns", "%d is below 1", pg.MaxConns)
	errs.badIf(n < 1, "replicas", "%d is below 1", n)
	errs.badIf(n > 1 && c.Store.Driver != DriverPostgres, "replicas",
		"%d replicas with store.driver %s: each would keep its own index, holds and flags; set store.driver: postgres", n, c.Store.Driver)
	errs.badIf(n > 1 && c.NATS.URL == "", "replicas",
		"%d replicas with the embedded NATS (nats.url empty): each would have its own streams; set nats.url to a shared NATS cluster", n)
	envDSN := EnvPrefix + "_STORE_POSTGRES_DSN"
	errs.badIf(getenv(envDSN) != "" && pg.DSNEnv != envDSN, envDSN,
		"not read: a DSN is read only from the variable store.postgres.dsn_env names (set it to %s)", envDSN)
	return errs
}
