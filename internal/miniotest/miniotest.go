// Package miniotest runs a real MinIO server for tests: the MinIO binary
// built by `make minio` (scripts/install-minio.sh), on random ports of
// 127.0.0.1, with a t.TempDir() data directory and random root
// credentials, optionally publishing bucket events to a NATS (JetStream)
// notification target. It never skips: a missing binary or a server that
// does not start fails the test, telling to run `make minio`.
//
// The server is killed when the test ends (t.Cleanup) and, on Linux, also
// when the test process dies, so no MinIO outlives its test.
package miniotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/notification"
)

// EnvBinary names the environment variable that locates the MinIO binary;
// the default is $HOME/.cache/simdex/bin/minio, where `make minio` puts it.
const EnvBinary = "SIMDEX_MINIO_BIN"

// TargetID is the identifier of the NATS notification target configured by
// Options; it appears in the target's ARN.
const TargetID = "SIMDEX"

// Timeouts for starting and stopping the server.
const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
	pollInterval = 50 * time.Millisecond
)

// Options configure the server.
type Options struct {
	// NATSAddress, if set, enables MinIO's NATS notification target with
	// id TargetID, publishing to NATSSubject. It may be "host:port" or a
	// nats:// URL. With JetStream the stream capturing NATSSubject must
	// exist before MinIO publishes.
	NATSAddress string
	// NATSSubject is the subject every bucket event is published to.
	NATSSubject string
	// JetStream makes MinIO publish through JetStream and wait for the
	// publish acknowledgement.
	JetStream bool
	// SyncEvents (MINIO_API_SYNC_EVENTS=on) makes every S3 call wait until
	// its event is sent (or, with NATSQueueDir, stored), so a test can
	// consume the event right after the call returns.
	SyncEvents bool
	// NATSQueueDir, if set, is the NATS target's queue directory
	// (MINIO_NOTIFY_NATS_QUEUE_DIR): undelivered events are kept there and
	// sent again, oldest first, once NATS takes them. It must be absolute.
	NATSQueueDir string
}

// Server is a running MinIO server.
type Server struct {
	bin               string
	dataDir, certsDir string
	logPath           string
	addr, consoleAddr string
	accessKey, secret string
	env               []string

	mu   sync.Mutex
	stop context.CancelFunc // stops the running process; nil when stopped
	done chan struct{}      // closed when the process has exited
}

// Start starts MinIO with opts and returns once it answers its liveness
// probe. The server is killed when the test ends; its log is printed if
// the test failed. Start calls t.Fatal if the server cannot start.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatalf("miniotest: locate the MinIO binary: %v (set %s or run `make minio`)", err, EnvBinary)
		}
		bin = filepath.Join(home, ".cache", "simdex", "bin", "minio")
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("miniotest: no MinIO binary at %s (%v): run `make minio` to build it, or set %s", bin, err, EnvBinary)
	}
	dir := t.TempDir()
	s := &Server{
		bin:         bin,
		dataDir:     filepath.Join(dir, "data"),
		certsDir:    filepath.Join(dir, "certs"),
		logPath:     filepath.Join(dir, "minio.log"),
		addr:        freeAddr(t),
		consoleAddr: freeAddr(t),
		accessKey:   "simdex-" + randomHex(t, 6),
		secret:      randomHex(t, 20),
	}
	for _, d := range []string{s.dataDir, s.certsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("miniotest: create %s: %v", d, err)
		}
	}
	s.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"MINIO_ROOT_USER=" + s.accessKey,
		"MINIO_ROOT_PASSWORD=" + s.secret,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	}
	if opts.NATSAddress != "" {
		if opts.NATSSubject == "" {
			t.Fatal("miniotest: Options.NATSSubject is required with NATSAddress")
		}
		addr := strings.TrimPrefix(opts.NATSAddress, "nats://")
		s.env = append(s.env,
			"MINIO_NOTIFY_NATS_ENABLE_"+TargetID+"=on",
			"MINIO_NOTIFY_NATS_ADDRESS_"+TargetID+"="+addr,
			"MINIO_NOTIFY_NATS_SUBJECT_"+TargetID+"="+opts.NATSSubject,
		)
		if opts.JetStream {
			s.env = append(s.env, "MINIO_NOTIFY_NATS_JETSTREAM_"+TargetID+"=on")
		}
		if opts.NATSQueueDir != "" {
			s.env = append(s.env, "MINIO_NOTIFY_NATS_QUEUE_DIR_"+TargetID+"="+opts.NATSQueueDir)
		}
	}
	if opts.SyncEvents {
		s.env = append(s.env, "MINIO_API_SYNC_EVENTS=on")
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			s.dumpLog(t)
		}
	})
	s.start(t)
	return s
}

// start launches the process and waits until it is live.
func (s *Server) start(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("miniotest: open log %s: %v", s.logPath, err)
	}
	// Stop cancels ctx: the process gets SIGTERM, and SIGKILL if it has
	// not exited stopTimeout later.
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, s.bin, "server", s.dataDir,
		"--address", s.addr, "--console-address", s.consoleAddr, "--certs-dir", s.certsDir)
	cmd.Env = s.env
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopTimeout
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logf.Close()
		t.Fatalf("miniotest: start %s: %v (run `make minio` to rebuild it)", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}()
	s.mu.Lock()
	s.stop, s.done = cancel, done
	s.mu.Unlock()
	if err := s.waitLive(done); err != nil {
		s.Stop()
		s.dumpLog(t)
		t.Fatalf("miniotest: MinIO at %s did not start: %v (run `make minio` if the binary is broken)", s.addr, err)
	}
}

// waitLive polls the liveness probe, then the readiness probe, until both
// answer 200. Live alone is not enough: under load MinIO answers it before
// its object layer is up, and the first bucket call then fails with
// "Server not initialized yet".
func (s *Server) waitLive(exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for _, probe := range []string{"live", "ready"} {
		if err := s.waitProbe(exited, probe, deadline); err != nil {
			return err
		}
	}
	return nil
}

// waitProbe polls /minio/health/<probe> until it answers 200.
func (s *Server) waitProbe(exited <-chan struct{}, probe string, deadline time.Time) error {
	client := &http.Client{Timeout: time.Second}
	url := "http://" + s.addr + "/minio/health/" + probe
	for {
		resp, err := client.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			// The readiness probe answers 200 even before the object
			// layer is up; it says so in this header.
			if resp.StatusCode == http.StatusOK && resp.Header.Get("X-Minio-Server-Status") != "unavailable" {
				return nil
			}
			err = fmt.Errorf("%s answered %s", url, resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not %s after %s: %w", probe, readyTimeout, err)
		}
		select {
		case <-exited:
			return errors.New("the process exited")
		case <-time.After(pollInterval):
		}
	}
}

// Stop terminates the server (SIGTERM, then SIGKILL after a grace period)
// and waits until it has exited. It is safe to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop = nil
	s.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

// Restart stops the server and starts it again on the same addresses,
// data directory and credentials, as an operator restart would.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.start(t)
}

// Endpoint returns the S3 API address, "127.0.0.1:port".
func (s *Server) Endpoint() string { return s.addr }

// AccessKey returns the root user.
func (s *Server) AccessKey() string { return s.accessKey }

// SecretKey returns the root password.
func (s *Server) SecretKey() string { return s.secret }

// ARN returns the ARN of the NATS notification target,
// "arn:minio:sqs::SIMDEX:nats".
func (s *Server) ARN() string { return "arn:minio:sqs::" + TargetID + ":nats" }

// Client returns a root client for the server that retries little, so
// that tests notice a stopped server quickly.
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := minio.New(s.addr, &minio.Options{
		Creds:      credentials.NewStaticV4(s.accessKey, s.secret, ""),
		MaxRetries: 2,
	})
	if err != nil {
		t.Fatalf("miniotest: client for %s: %v", s.addr, err)
	}
	return c
}

// MakeBucket creates the bucket, with versioning and object locking as
// asked (object locking implies versioning).
func (s *Server) MakeBucket(t testing.TB, name string, versioned, objectLock bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s.Client(t)
	for {
		err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{ObjectLocking: objectLock})
		if err == nil {
			break
		}
		// A server restarted by the test may still be initialising.
		if strings.Contains(err.Error(), "not initialized") && ctx.Err() == nil {
			time.Sleep(pollInterval)
			continue
		}
		t.Fatalf("miniotest: make bucket %s: %v", name, err)
	}
	if versioned && !objectLock {
		if err := c.EnableVersioning(ctx, name); err != nil {
			t.Fatalf("miniotest: enable versioning on %s: %v", name, err)
		}
	}
}

// EnableNotifications sends every s3:ObjectCreated:* and s3:ObjectRemoved:*
// event of bucket to the NATS target.
func (s *Server) EnableNotifications(t testing.TB, bucket string) {
	t.Helper()
	arn, err := notification.NewArnFromString(s.ARN())
	if err != nil {
		t.Fatalf("miniotest: parse ARN %s: %v", s.ARN(), err)
	}
	q := notification.NewConfig(arn)
	q.AddEvents(notification.ObjectCreatedAll, notification.ObjectRemovedAll)
	var cfg notification.Configuration
	cfg.AddQueue(q)
	// MinIO registers its notification targets shortly after it is live:
	// until then the ARN is unknown.
	c := s.Client(t)
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.SetBucketNotification(ctx, bucket, cfg)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("miniotest: set notification of %s to %s: %v (is the NATS target configured?)", bucket, s.ARN(), err)
		}
		time.Sleep(pollInterval)
	}
}

// LogPath returns the file MinIO's output goes to.
func (s *Server) LogPath() string { return s.logPath }

// dumpLog prints the end of MinIO's log into the test output.
func (s *Server) dumpLog(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		t.Logf("miniotest: read MinIO log: %v", err)
		return
	}
	const maxLog = 16 << 10
	if len(b) > maxLog {
		b = b[len(b)-maxLog:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	t.Logf("miniotest: MinIO log (%s):\n%s", s.logPath, b)
}

// freeAddr returns a currently free 127.0.0.1 address.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("miniotest: find a free port: %v", err)
	}
	defer func() { _ = l.Close() }()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// randomHex returns 2n random hex digits.
func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("miniotest: random credentials: %v", err)
	}
	return hex.EncodeToString(b)
}
