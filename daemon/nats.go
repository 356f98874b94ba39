package daemon

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/simdex/simdex/internal/datadir"
	"golang.org/x/crypto/bcrypt"
)

// startEmbeddedNATS runs the in-process NATS server of the embedded default:
// JetStream on, storage under the data directory, and every write fsynced
// before it is acknowledged (sync_interval: always), because JetStream's
// default of syncing every two minutes loses acknowledged messages on power
// failure. It listens on loopback only, and accepts only the user
// EmbeddedNATSUser with password: any other process of the machine that
// finds the port is refused.
func startEmbeddedNATS(dataDir, password string, logger *slog.Logger) (*server.Server, error) {
	// nats-server picks the modes of its files; a private directory keeps
	// them to the daemon's user.
	if err := datadir.Make(filepath.Join(dataDir, "nats")); err != nil {
		return nil, fmt.Errorf("start embedded NATS: %w", err)
	}
	// The server keeps only a bcrypt hash of the password, at the least
	// cost: the password is 192 random bits, which no work factor makes
	// harder to guess, while the default cost is paid at every connection
	// (seconds each on a loaded 2-core machine under the race detector,
	// where the daemon's own connections timed out).
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		return nil, fmt.Errorf("start embedded NATS: hash its password: %w", err)
	}
	opts := &server.Options{
		Users:              []*server.User{{Username: EmbeddedNATSUser, Password: string(hash)}},
		ServerName:         "simdex-embedded",
		Host:               "127.0.0.1",
		Port:               server.RANDOM_PORT,
		JetStream:          true,
		StoreDir:           filepath.Join(dataDir, "nats"),
		SyncAlways:         true,
		NoSigs:             true,
		MaxPayload:         8 << 20,
		JetStreamMaxMemory: 256 << 20,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("start embedded NATS: %w", err)
	}
	srv.SetLoggerV2(&natsLogger{logger: logger.With("component", "nats-server")}, false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("start embedded NATS: not ready after 30s")
	}
	return srv, nil
}

// natsLogger routes the server's logs to slog.
type natsLogger struct{ logger *slog.Logger }

// Noticef logs at debug: the server's notices (its banner, its listen
// addresses) say nothing the daemon's own start-up lines do not.
func (l *natsLogger) Noticef(format string, v ...any) { l.logger.Debug(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Warnf(format string, v ...any)   { l.logger.Warn(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Fatalf(format string, v ...any)  { l.logger.Error(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Errorf(format string, v ...any)  { l.logger.Error(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Debugf(format string, v ...any)  { l.logger.Debug(fmt.Sprintf(format, v...)) }
func (l *natsLogger) Tracef(format string, v ...any)  {}
