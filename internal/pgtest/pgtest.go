// Package pgtest runs real PostgreSQL servers for tests: Debian's
// postgresql package (`make postgres`), one server per test binary or per
// test, initialised with initdb in a temporary directory and listening on a
// free port of 127.0.0.1 and on a Unix socket in that directory. It never
// skips: a missing installation or a server that does not start fails the
// test, telling to run `make postgres`.
//
// initdb and postgres refuse to run as root, and CI runs as root: then the
// server runs as the postgres system user, in a directory that user owns.
//
// A test package that calls DSN runs the shared server from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Each DSN call creates a fresh database on it, dropped when the test ends.
// Start runs a server of the test's own, for tests that stop or restart it.
package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvBinDir names the environment variable that locates PostgreSQL's
// programs (initdb, postgres); the default is the newest
// /usr/lib/postgresql/*/bin, where Debian puts them.
const EnvBinDir = "SIMDEX_POSTGRES_BIN"

const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 15 * time.Second
)

// Server is a running PostgreSQL server with a superuser "postgres" whose
// random password its DSNs carry: TCP connections authenticate with
// SCRAM, as a production server's do, so a wrong password is refused.
type Server struct {
	binDir, dir, dataDir, logPath string
	password                      string
	port                          int
	cred                          *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start initialises and starts a server of the test's own, stopped and
// removed when the test ends. It calls t.Fatal if it cannot.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			s.dumpLog(t)
		}
		s.Remove()
	})
	return s
}

var shared struct {
	once   sync.Once
	server *Server
	err    error
	main   atomic.Bool
	dbs    atomic.Int64
}

// Main runs the package's tests and then stops the shared server, if DSN
// started one. Call it from TestMain and pass its result to os.Exit.
func Main(m *testing.M) int {
	shared.main.Store(true)
	code := m.Run()
	if shared.server != nil {
		shared.server.Remove()
	}
	return code
}

// DSN creates a fresh database on the test binary's shared server (started
// at the first call) and returns a connection string for it. The database
// is dropped when the test ends. The package's TestMain must call Main.
func DSN(t testing.TB) string {
	t.Helper()
	if !shared.main.Load() {
		t.Fatal("pgtest: DSN needs TestMain to call pgtest.Main (it stops the shared server)")
	}
	shared.once.Do(func() { shared.server, shared.err = start() })
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.server.NewDatabase(t)
}

// NewDatabase creates a fresh database on s and returns its connection
// string; it is dropped when the test ends.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), shared.dbs.Add(1))
	if err := s.exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := s.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil && !s.stopped() {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.DatabaseDSN(name)
}

// DatabaseDSN returns the connection string of database name on s.
func (s *Server) DatabaseDSN(name string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", s.password, s.port, name)
}

// Port returns the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// exec runs one statement in the postgres database.
func (s *Server) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DatabaseDSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func start() (*Server, error) {
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "simdex-pg-")
	if err != nil {
		return nil, fmt.Errorf("create server directory: %w", err)
	}
	s := &Server{binDir: binDir, dir: dir, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "postgres.log")}
	if err := s.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.listen(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// findBinDir locates initdb and postgres.
func findBinDir() (string, error) {
	if d := os.Getenv(EnvBinDir); d != "" {
		return d, checkBinDir(d)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) == 0 {
		return "", errors.New("no PostgreSQL in /usr/lib/postgresql/*/bin: run `make postgres` to install it, or set " + EnvBinDir)
	}
	return dirs[0], checkBinDir(dirs[0])
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func checkBinDir(d string) error {
	for _, p := range []string{"initdb", "postgres"} {
		if fi, err := os.Stat(filepath.Join(d, p)); err != nil || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("no %s in %s: run `make postgres` to install PostgreSQL, or set %s", p, d, EnvBinDir)
		}
	}
	return nil
}

// init runs initdb, as the postgres user when this process is root.
func (s *Server) init() error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, PostgreSQL needs the postgres system user: %w (run `make postgres`)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return fmt.Errorf("give %s to the postgres user: %w", s.dir, err)
		}
	}
	s.password = rand.Text()
	pwfile := filepath.Join(s.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", pwfile, err)
	}
	defer os.Remove(pwfile)
	cmd := exec.Command(filepath.Join(s.binDir, "initdb"), "-D", s.dataDir, "-U", "postgres", "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", s.dataDir, err, out)
	}
	// In the configuration file rather than on the command line, so that a
	// benchmark may raise it with ALTER SYSTEM and Restart.
	conf, err := os.OpenFile(filepath.Join(s.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("configure %s: %w", s.dataDir, err)
	}
	defer conf.Close()
	if _, err := conf.WriteString("shared_buffers = 64MB\n"); err != nil {
		return fmt.Errorf("configure %s: %w", s.dataDir, err)
	}
	return nil
}

// listen starts the server on a free port, trying again on another when
// the port was taken in between.
func (s *Server) listen() error {
	var err error
	for range 3 {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.run(); err == nil {
			return nil
		}
	}
	return err
}

func (s *Server) run() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return fmt.Errorf("open log %s: %w", s.logPath, err)
	}
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), "-D", s.dataDir,
		"-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.dir
	// fsync=off loses nothing when a process dies, only when the machine
	// does; commits stay synchronous, so a killed server keeps them.
	// The kernel stops the server (immediate shutdown) when the test
	// process dies, so no server outlives its test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w (run `make postgres`)", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		s.Stop()
		log, _ := os.ReadFile(s.logPath)
		return fmt.Errorf("PostgreSQL on port %d did not start: %w\n%s", s.port, err, log)
	}
	return nil
}

func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := s.exec("SELECT 1")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", readyTimeout, err)
		}
		select {
		case <-exited:
			return errors.New("the server exited")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop shuts the server down (fast shutdown: sessions are ended, the data
// is kept) and waits until it has exited. It is safe to call more than once.
func (s *Server) Stop() { s.signal(syscall.SIGINT) }

// Kill stops the server as a crash would (SIGKILL): the next Restart
// recovers from its write-ahead log.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
	}
	if sig == syscall.SIGKILL {
		// The backends notice the postmaster is gone and exit; wait for
		// the lock file's shared memory to be released before a restart.
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *Server) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd == nil
}

// Restart starts a stopped or killed server again on the same port and
// data directory.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.run(); err != nil {
		t.Fatalf("pgtest: restart: %v", err)
	}
}

// Remove stops the server and deletes its directory.
func (s *Server) Remove() {
	s.Stop()
	os.RemoveAll(s.dir)
}

func (s *Server) dumpLog(t testing.TB) {
	if log, err := os.ReadFile(s.logPath); err == nil {
		t.Logf("pgtest: PostgreSQL log %s:\n%s", s.logPath, log)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Password returns the superuser's password.
func (s *Server) Password() string { return s.password }
