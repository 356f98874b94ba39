package lease

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/simdex/simdex/internal/pgdb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// namespace is the first key of every lease's advisory lock, so that
// leases never meet another user's single-key advisory locks (goose's).
const namespace = 0x53444c // "SDL"

// PostgresOptions tune a Postgres lease; zero values take the defaults.
type PostgresOptions struct {
	// PingInterval is how often a holder checks its session (default 1 s).
	PingInterval time.Duration
	// PingTimeout is how long a ping may take before the lease counts as
	// lost (default 2 s).
	PingTimeout time.Duration
	// KeepAlive bounds how long the server keeps the session of a holder
	// it no longer hears from, through TCP keepalives, the TCP user
	// timeout and idle_session_timeout (default 10 s; whole seconds, at
	// least 2). Keep it above PingInterval+PingTimeout, so that a
	// partitioned holder stops its job before the server gives its lease
	// to another.
	KeepAlive time.Duration
	// RetryPause is the pause before Hold waits again after losing the
	// lease or failing to reach the server (default 1 s).
	RetryPause time.Duration
	// Holder names this replica in the run records (default host:pid).
	Holder string
	// Logger receives the lease's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the lease's metrics; nil registers none.
	Registerer prometheus.Registerer
}

func (o *PostgresOptions) ensureDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PingInterval, time.Second)
	def(&o.PingTimeout, 2*time.Second)
	def(&o.KeepAlive, 10*time.Second)
	def(&o.RetryPause, time.Second)
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = host + ":" + strconv.Itoa(os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// maxRetryPause bounds Hold's pauses while the server cannot be reached.
const maxRetryPause = 30 * time.Second

// Postgres holds leases as session advisory locks of the fleet's
// PostgreSQL database. It is safe for concurrent use. Each lease held, or
// waited for, takes one connection out of the pool for its duration (a
// hijacked connection no longer counts against the pool's MaxConns, so the
// server sees one more connection per lease).
type Postgres struct {
	pool *pgxpool.Pool
	opts PostgresOptions
	log  *slog.Logger
	held *prometheus.GaugeVec   // 1 while this replica holds the lease
	lost *prometheus.CounterVec // leases lost while held
}

// NewPostgres applies the lease's migrations (table lease_runs, version
// table lease_schema) to the pool's database and returns the lease. It
// holds nothing yet; closing the pool is the caller's.
func NewPostgres(ctx context.Context, pool *pgxpool.Pool, opts PostgresOptions) (*Postgres, error) {
	opts.ensureDefaults()
	if opts.KeepAlive < 2*time.Second || opts.KeepAlive <= opts.PingInterval+opts.PingTimeout {
		return nil, fmt.Errorf("lease options: KeepAlive %s must be at least 2 s and above PingInterval+PingTimeout (%s)",
			opts.KeepAlive, opts.PingInterval+opts.PingTimeout)
	}
	if err := pgdb.Migrate(ctx, pool, migrations, "migrations", "lease_schema"); err != nil {
		return nil, err
	}
	p := &Postgres{pool: pool, opts: opts, log: opts.Logger.With("component", "lease"),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "simdex_lease_held", Help: "Whether this replica holds the lease (1) or not (0).",
		}, []string{"lease"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "simdex_lease_lost_total", Help: "Leases lost while held: the session ended or stopped answering.",
		}, []string{"lease"}),
	}
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{p.held, p.lost} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("register lease metrics: %w", err)
			}
		}
	}
	return p, nil
}

// Now returns the database server's clock, the one every replica reads.
func (p *Postgres) Now(ctx context.Context) (time.Time, error) {
	var t time.Time
	if err := p.pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("read the database clock: %w", err)
	}
	return t, nil
}

// Run runs fn if no other holder has name, and reports whether it ran. It
// returns fn's error, wrapping ErrLost if the lease was lost meanwhile.
func (p *Postgres) Run(ctx context.Context, name string, fn Func) (bool, error) {
	// A turn refused costs a query on the pool, not a new session.
	if held, err := p.heldElsewhere(ctx, name); err != nil || held {
		return false, err
	}
	h, err := p.acquire(ctx, name, false)
	if err != nil || h == nil {
		return false, err
	}
	defer h.release()
	return true, h.run(fn)
}

// Hold waits for the lease name, runs fn while it holds it and returns
// fn's error once fn returns with the lease still held. When the lease is
// lost, fn's context is cancelled and, once fn has returned, Hold waits
// for the lease again and runs fn anew. It returns nil when ctx is done.
func (p *Postgres) Hold(ctx context.Context, name string, fn Func) error {
	pause := p.opts.RetryPause
	for ctx.Err() == nil {
		h, err := p.acquire(ctx, name, true)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("wait for lease, will retry", "lease", name, "err", err, "in", pause)
				sleep(ctx, pause)
				pause = min(2*pause, maxRetryPause)
			}
			continue
		}
		pause = p.opts.RetryPause
		p.log.Info("holding lease", "lease", name)
		err = h.run(fn)
		h.release()
		if !errors.Is(err, ErrLost) {
			return err
		}
		p.log.Warn("lease lost, its job stopped; waiting for it again", "lease", name, "err", err)
		sleep(ctx, p.opts.RetryPause)
	}
	return nil
}

// RunSlot waits for the lease job and runs fn for slot unless a holder
// completed that slot, or a later one, already, then records it complete, on the lease's
// session: a slot is recorded at most once, and only while its lease is
// held. A run whose lease was lost, or whose ctx ended, is not recorded,
// so the next holder runs the slot again. A run that returned an error is
// recorded with it (the next slot retries).
func (p *Postgres) RunSlot(ctx context.Context, job string, slot time.Time, fn Func) (bool, error) {
	h, err := p.acquire(ctx, job, true)
	if err != nil {
		return false, err
	}
	defer h.release()
	done, err := h.completed(job, slot)
	if err != nil || done {
		return false, err
	}
	ferr := h.run(fn)
	if errors.Is(ferr, ErrLost) || ctx.Err() != nil {
		return true, ferr
	}
	if err := h.complete(job, slot, p.opts.Holder, ferr); err != nil {
		return true, errors.Join(ferr, fmt.Errorf("record slot %s of %s: %w", slot.UTC().Format(time.RFC3339), job, err))
	}
	return true, ferr
}

// LastSlot returns the last slot of job recorded complete, or the zero
// time.
func (p *Postgres) LastSlot(ctx context.Context, job string) (time.Time, error) {
	var last *time.Time
	if err := p.pool.QueryRow(ctx, "SELECT max(slot) FROM lease_runs WHERE job = $1", job).Scan(&last); err != nil {
		return time.Time{}, fmt.Errorf("read the last slot of %s: %w", job, err)
	}
	if last == nil {
		return time.Time{}, nil
	}
	return *last, nil
}

// heldElsewhere reports whether a session holds the lease name.
func (p *Postgres) heldElsewhere(ctx context.Context, name string) (bool, error) {
	var held bool
	err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = $1::bigint::oid AND objid = (hashtext($2)::bigint & 4294967295)::oid AND objsubid = 2)`, namespace, name).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("lease %s: look for its holder: %w", name, err)
	}
	return held, nil
}

// acquire takes a dedicated session and the lock name on it, waiting for
// it if wait. It returns nil, nil when the lock is held elsewhere and not
// wait.
func (p *Postgres) acquire(ctx context.Context, name string, wait bool) (*held, error) {
	conn, err := p.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", name, err)
	}
	got := true
	if wait {
		_, err = conn.Exec(ctx, "SELECT pg_advisory_lock($1, hashtext($2))", namespace, name)
	} else {
		err = conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, hashtext($2))", namespace, name).Scan(&got)
	}
	if err != nil || !got {
		closeConn(conn)
		if err != nil {
			return nil, fmt.Errorf("lease %s: lock: %w", name, err)
		}
		return nil, nil
	}
	h := &held{name: name, conn: conn, stop: make(chan struct{}), done: make(chan struct{}), metrics: p}
	h.ctx, h.cancel = context.WithCancelCause(ctx)
	p.held.WithLabelValues(name).Set(1)
	go h.watch(p.opts.PingInterval, p.opts.PingTimeout)
	return h, nil
}

// session takes a connection out of the pool for good and makes both
// ends drop it within about KeepAlive of losing the other: TCP keepalives
// on the client's socket and the server's, and the server's
// idle_session_timeout (PostgreSQL 14 and later), which ends a holder's
// session when its pings stop arriving even if something between them
// still answers TCP.
func (p *Postgres) session(ctx context.Context) (*pgx.Conn, error) {
	c, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire a connection: %w", err)
	}
	conn := c.Hijack()
	ka := max(2, int(p.opts.KeepAlive/time.Second))
	idle, count := ka/2, ka-ka/2
	keepAlive(conn, time.Duration(idle)*time.Second, count)
	_, err = conn.Exec(ctx, `SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', '1', false),
		set_config('tcp_keepalives_count', $2, false), set_config('tcp_user_timeout', $3, false),
		CASE WHEN current_setting('server_version_num')::int >= 140000 THEN set_config('idle_session_timeout', $3, false) END`,
		strconv.Itoa(idle), strconv.Itoa(count), strconv.Itoa(ka*1000))
	if err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("set the session's keepalives: %w", err)
	}
	return conn, nil
}

// keepAlive makes the client's TCP socket of conn probe its peer after
// idle, every second, count times, so that a waiter blocked in the lock
// call learns of a partition; Unix sockets need none.
func keepAlive(conn *pgx.Conn, idle time.Duration, count int) {
	nc := conn.PgConn().Conn()
	if tc, ok := nc.(interface{ NetConn() net.Conn }); ok { // TLS
		nc = tc.NetConn()
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: idle, Interval: time.Second, Count: count})
	}
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = conn.Close(ctx) // closing ends the session and its locks, whatever Close says
}

// held is a lease held on its own session.
type held struct {
	name   string
	mu     sync.Mutex // serialises the session's use: pings, run records
	conn   *pgx.Conn
	ctx    context.Context // the job's, cancelled with ErrLost
	cancel context.CancelCauseFunc
	stop   chan struct{}
	done   chan struct{}

	metrics *Postgres
}

// watch pings the session until release, and cancels the job's context
// with ErrLost at the first failed ping.
func (h *held) watch(interval, timeout time.Duration) {
	defer close(h.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err := h.conn.Ping(ctx)
		cancel()
		h.mu.Unlock()
		if err != nil {
			h.metrics.lost.WithLabelValues(h.name).Inc()
			h.cancel(fmt.Errorf("%w: session check: %w", ErrLost, err))
			return
		}
	}
}

// run runs fn under the lease.
func (h *held) run(fn Func) error {
	return lostError(h.ctx, h.name, fn(h.ctx))
}

// release stops the watch and closes the session, which ends the lock.
func (h *held) release() {
	close(h.stop)
	<-h.done
	h.cancel(nil)
	closeConn(h.conn)
	h.metrics.held.WithLabelValues(h.name).Set(0)
}

// completed reports whether slot of job, or a later one, is recorded
// complete.
func (h *held) completed(job string, slot time.Time) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var done bool
	err := h.conn.QueryRow(h.ctx, "SELECT EXISTS (SELECT 1 FROM lease_runs WHERE job = $1 AND slot >= $2)", job, slot).Scan(&done)
	if err != nil {
		return false, fmt.Errorf("read slot %s of %s: %w", slot.UTC().Format(time.RFC3339), job, err)
	}
	return done, nil
}

// keepRuns is how many completed slots are kept per job.
const keepRuns = 100

// complete records slot of job complete with the job's error, and forgets
// the job's slots beyond the last keepRuns.
func (h *held) complete(job string, slot time.Time, holder string, jobErr error) error {
	msg := ""
	if jobErr != nil {
		msg = jobErr.Error()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b := &pgx.Batch{}
	b.Queue("INSERT INTO lease_runs (job, slot, holder, error) VALUES ($1, $2, $3, $4) ON CONFLICT (job, slot) DO NOTHING",
		job, slot, holder, msg)
	b.Queue(`DELETE FROM lease_runs WHERE job = $1 AND slot < (
		SELECT slot FROM lease_runs WHERE job = $1 ORDER BY slot DESC OFFSET $2 LIMIT 1)`, job, keepRuns-1)
	return h.conn.SendBatch(h.ctx, b).Close()
}
