package fleettest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	jsconn "github.com/simdex/simdex/connectors/jetstream"
)

// Names of the JetStream objects a fleet shares, created replicated on
// every node before MinIO or a replica starts.
const (
	EventStream  = "MINIO_EVENTS" // MinIO's bucket events
	EventSubject = "minio.events"
	StateBucket  = "simdex_state" // the daemon's key-value state (backfill markers)
)

// NATSUser is the user the replicas authenticate as. MinIO connects
// without credentials and is taken for a user that may only publish
// bucket events (no_auth_user).
const NATSUser = "simdex"

// healthTimeout bounds how long a node may take to start and catch up.
const healthTimeout = 90 * time.Second

// Cluster is a NATS cluster with JetStream, each node its own process.
type Cluster struct {
	Nodes    []*Node
	Password string // NATSUser's password
}

// Node is one nats-server process of a Cluster.
type Node struct {
	proc
	Name                                 string
	ClientPort, ClusterPort, MonitorPort int
}

// ClientURL returns the node's client URL.
func (n *Node) ClientURL() string { return "nats://127.0.0.1:" + strconv.Itoa(n.ClientPort) }

// StartCluster starts size nodes clustered over loopback routes, each with
// its own JetStream store, and returns once every node reports healthy.
func StartCluster(t testing.TB, bins Binaries, size int) *Cluster {
	t.Helper()
	dir := t.TempDir()
	c := &Cluster{Password: rand.Text()}
	routes := make([]string, size)
	for i := range size {
		n := &Node{Name: fmt.Sprintf("n%d", i+1), ClientPort: freePort(t), ClusterPort: freePort(t), MonitorPort: freePort(t)}
		routes[i] = "nats-route://127.0.0.1:" + strconv.Itoa(n.ClusterPort)
		c.Nodes = append(c.Nodes, n)
	}
	for _, n := range c.Nodes {
		conf := filepath.Join(dir, n.Name+".conf")
		if err := os.WriteFile(conf, []byte(c.config(n, filepath.Join(dir, n.Name), routes)), 0o600); err != nil {
			t.Fatalf("fleettest: write %s: %v", conf, err)
		}
		n.proc = proc{name: "nats " + n.Name, path: bins.NATSServer, args: []string{"-c", conf},
			logPath: filepath.Join(dir, n.Name+".log")}
		if err := n.start(); err != nil {
			t.Fatalf("fleettest: %v", err)
		}
		t.Cleanup(func() {
			n.kill()
			if t.Failed() {
				n.dumpLog(t)
			}
		})
	}
	for i := range c.Nodes {
		c.WaitHealthy(t, i)
	}
	return c
}

// config is a node's configuration file.
func (c *Cluster) config(n *Node, store string, routes []string) string {
	return fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
http: 127.0.0.1:%d
jetstream { store_dir: %q }
cluster {
  name: simdex-fleet
  listen: 127.0.0.1:%d
  routes: [%s]
}
authorization {
  users: [
    { user: %s, password: %q }
    { user: minio, permissions: { publish: [%q], subscribe: ["_INBOX.>"] } }
  ]
}
no_auth_user: minio
`, n.Name, n.ClientPort, n.MonitorPort, store, n.ClusterPort, strings.Join(routes, ", "), NATSUser, c.Password, EventSubject)
}

// URL returns every node's client URL, comma-separated, as nats.Connect
// and the daemon's nats.url take them.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		urls[i] = n.ClientURL()
	}
	return strings.Join(urls, ",")
}

// Conn connects as NATSUser to any live node; the connection reconnects
// forever and is closed when the test ends.
func (c *Cluster) Conn(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(c.URL(), nats.UserInfo(NATSUser, c.Password), nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatalf("fleettest: connect to NATS %s: %v", c.URL(), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Kill kills node i with SIGKILL: its clients reconnect to the others and
// its streams' replicas elect new leaders.
func (c *Cluster) Kill(i int) { c.Nodes[i].kill() }

// Restart starts node i again on its ports and store, and waits until it
// has caught up with the cluster.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	if err := c.Nodes[i].start(); err != nil {
		t.Fatalf("fleettest: %v", err)
	}
	c.WaitHealthy(t, i)
}

// WaitHealthy waits until node i's monitoring /healthz answers 200: it
// accepts clients and its JetStream assets are current with the cluster.
func (c *Cluster) WaitHealthy(t testing.TB, i int) {
	t.Helper()
	n := c.Nodes[i]
	url := "http://127.0.0.1:" + strconv.Itoa(n.MonitorPort) + "/healthz"
	client := &http.Client{Timeout: 2 * time.Second}
	err := poll(healthTimeout, n.exited(), func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %s", url, resp.Status)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fleettest: NATS node %s not healthy: %v", n.Name, err)
	}
}

// CreateStreams creates what the fleet shares, each with one replica per
// node: MinIO's event stream, the dead-letter stream and the daemon's
// state bucket. The daemon finds them and creates none of its own.
func (c *Cluster) CreateStreams(t testing.TB) {
	t.Helper()
	js, err := natsjs.New(c.Conn(t))
	if err != nil {
		t.Fatalf("fleettest: jetstream: %v", err)
	}
	r := len(c.Nodes)
	streams := []natsjs.StreamConfig{
		{Name: EventStream, Subjects: []string{EventSubject}, Storage: natsjs.FileStorage, Replicas: r},
		{Name: jsconn.DeadLetterStream, Subjects: []string{jsconn.DeadLetterPrefix + ">"}, Storage: natsjs.FileStorage, Replicas: r},
	}
	err = poll(healthTimeout, nil, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range streams {
			if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
				return fmt.Errorf("create stream %s: %w", s.Name, err)
			}
		}
		if _, err := js.CreateOrUpdateKeyValue(ctx, natsjs.KeyValueConfig{Bucket: StateBucket, Storage: natsjs.FileStorage, Replicas: r}); err != nil {
			return fmt.Errorf("create key-value bucket %s: %w", StateBucket, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fleettest: %v", err)
	}
}

// Replicas returns how many replicas each shared stream has now, by
// stream name (the state bucket's stream is KV_simdex_state).
func (c *Cluster) Replicas(t testing.TB) map[string]int {
	t.Helper()
	js, err := natsjs.New(c.Conn(t))
	if err != nil {
		t.Fatalf("fleettest: jetstream: %v", err)
	}
	out := map[string]int{}
	for _, name := range []string{EventStream, jsconn.DeadLetterStream, "KV_" + StateBucket} {
		err := poll(healthTimeout, nil, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := js.Stream(ctx, name)
			if err != nil {
				return fmt.Errorf("stream %s: %w", name, err)
			}
			out[name] = s.CachedInfo().Config.Replicas
			return nil
		})
		if err != nil {
			t.Fatalf("fleettest: %v", err)
		}
	}
	return out
}

// ClientsNamed returns the indexes of the nodes that clients named name
// (nats.Name; the daemon's is "simdex") are connected to, by the nodes'
// monitoring /connz.
func (c *Cluster) ClientsNamed(t testing.TB, name string) []int {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var out []int
	for i, n := range c.Nodes {
		resp, err := client.Get("http://127.0.0.1:" + strconv.Itoa(n.MonitorPort) + "/connz?limit=1024")
		if err != nil {
			continue // a node that is down has no clients
		}
		var connz struct {
			Connections []struct {
				Name string `json:"name"`
			} `json:"connections"`
		}
		err = json.NewDecoder(resp.Body).Decode(&connz)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatalf("fleettest: decode /connz of %s: %v", n.Name, err)
		}
		for _, conn := range connz.Connections {
			if conn.Name == name {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// poll calls try every 100 ms until it succeeds, exited is closed or
// limit has passed, and returns the last error.
func poll(limit time.Duration, exited <-chan struct{}, try func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := try()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", limit, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("the process exited: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePort returns a currently free TCP port of 127.0.0.1.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fleettest: find a free port: %v", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
