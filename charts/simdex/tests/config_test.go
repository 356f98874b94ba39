package tests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/simdex/simdex/daemon"
)

// credentialEnv are the variables the chart sets from the credentials
// Secret. The daemon reads a variable only for a key its Config has, so
// TestDaemonLoadsRenderedConfig reports those it does not read yet.
var credentialEnv = []string{"SIMDEX_S3_ACCESS_KEY", "SIMDEX_S3_SECRET_KEY", "SIMDEX_NATS_USER", "SIMDEX_NATS_PASSWORD", "SIMDEX_NATS_TOKEN"}

// TestDaemonLoadsRenderedConfig feeds the rendered config.yaml of every
// scenario, with the environment the pod gets (the image's ENV, then the
// container's env), through the daemon's own loader, so that the chart can
// never ship a configuration the daemon refuses. It also checks that the
// loaded configuration agrees with the pod: data volume, HTTP port, NATS.
func TestDaemonLoadsRenderedConfig(t *testing.T) {
	known := daemonEnvNames(reflect.TypeOf(daemon.Config{}), daemon.EnvPrefix)
	for _, sc := range scenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			r := mustRender(t, sc.values)
			pod := workload(t, r)
			c := pod.Spec.Containers[0]
			environ := podEnviron(t, r, c)

			cfg, err := daemon.Load(writeConfig(t, r), environ)
			if err != nil {
				t.Fatalf("daemon.Load refuses the rendered config:\n%v", err)
			}

			mounts := map[string]string{}
			for _, m := range c.VolumeMounts {
				mounts[m.Name] = m.MountPath
			}
			if cfg.DataDir != mounts["data"] {
				t.Errorf("daemon's data_dir %q is not the data volume %q", cfg.DataDir, mounts["data"])
			}
			if !strings.HasPrefix(cfg.IndexPath(), mounts["data"]+"/") {
				t.Errorf("index path %q is outside the data volume %q", cfg.IndexPath(), mounts["data"])
			}
			_, port, err := net.SplitHostPort(cfg.HTTP.Addr)
			if err != nil {
				t.Fatalf("daemon's http.addr %q: %v", cfg.HTTP.Addr, err)
			}
			if host, _, _ := net.SplitHostPort(cfg.HTTP.Addr); host != "0.0.0.0" && host != "" && host != "::" {
				t.Errorf("daemon listens on %s: probes and the Service cannot reach it", cfg.HTTP.Addr)
			}
			if fmt.Sprint(c.Ports[0].ContainerPort) != port {
				t.Errorf("daemon listens on port %s, the container port is %d", port, c.Ports[0].ContainerPort)
			}
			if want := workloadReplicas(t, r); int32(cfg.Replicas) != want {
				t.Errorf("daemon's replicas %d, the workload runs %d", cfg.Replicas, want)
			}
			if file, _ := dsnFile(t, pod); cfg.Store.Driver == daemon.DriverPostgres && cfg.Store.Postgres.DSNFile != file {
				t.Errorf("daemon reads the DSN from %q, the Secret is mounted at %q", cfg.Store.Postgres.DSNFile, file)
			}
			wantNATS, _ := lookup(sc.values, "config", "nats", "url").(string)
			if cfg.NATS.URL != wantNATS {
				t.Errorf("daemon's nats.url %q, values say %q", cfg.NATS.URL, wantNATS)
			}
			if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= cfg.Pipeline.ShutdownTimeout {
				t.Errorf("terminationGracePeriodSeconds does not exceed the daemon's shutdown timeout %s", cfg.Pipeline.ShutdownTimeout)
			}

			// Every SIMDEX_* variable must name a key of the daemon's
			// Config, or it is silently ignored.
			for _, e := range c.Env {
				if !strings.HasPrefix(e.Name, daemon.EnvPrefix+"_") || known[e.Name] {
					continue
				}
				if slices.Contains(credentialEnv, e.Name) {
					t.Logf("%s: the daemon has no key for it yet, so it ignores it", e.Name)
					continue
				}
				t.Errorf("env %s names no key of the daemon's Config", e.Name)
			}
		})
	}
}

// TestDaemonRefusesBadChartConfig checks that the loader in
// TestDaemonLoadsRenderedConfig has teeth: values the daemon rejects do
// render, and are caught.
func TestDaemonRefusesBadChartConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals string
		err  string
	}{
		{"bad level", `config: {log: {level: verbose}}`, "log.level"},
		{"unknown key", `config: {index: {treshold: 0.5}}`, "treshold"},
		{"no workers", `config: {pipeline: {workers: 0}}`, "pipeline.workers"},
		{"bad duration", `config: {extract: {timeout: soon}}`, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(tc.vals), &vals); err != nil {
				t.Fatal(err)
			}
			r := mustRender(t, vals)
			c := workload(t, r).Spec.Containers[0]
			_, err := daemon.Load(writeConfig(t, r), podEnviron(t, r, c))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("daemon.Load: %v, want an error about %s", err, tc.err)
			}
		})
	}
}

// TestConfigMirrorsRepository checks that the chart's default config is
// the repository's documented config.yaml, except where the container
// differs on purpose: data_dir on the volume, and http.addr on every
// interface. A key added to config.yaml must be added to values.yaml.
func TestConfigMirrorsRepository(t *testing.T) {
	r := mustRender(t, map[string]any{})
	chartCfg := renderedConfig(t, one[corev1.ConfigMap](t, r, "ConfigMap"))
	var repoCfg map[string]any
	if err := yaml.Unmarshal(readRepoFile(t, "config.yaml"), &repoCfg); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	if got := chartCfg["data_dir"]; got != "/var/lib/simdex" {
		t.Errorf("chart data_dir %v, want /var/lib/simdex", got)
	}
	if got := lookup(chartCfg, "http", "addr"); got != "0.0.0.0:8080" {
		t.Errorf("chart http.addr %v, want 0.0.0.0:8080", got)
	}
	repoCfg["data_dir"] = chartCfg["data_dir"]
	if h, ok := repoCfg["http"].(map[string]any); ok {
		h["addr"] = lookup(chartCfg, "http", "addr")
	}
	for _, d := range diffMaps("", repoCfg, chartCfg) {
		t.Error(d)
	}
}

// diffMaps lists the keys whose values differ between config.yaml (a) and
// the chart (b).
func diffMaps(prefix string, a, b map[string]any) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		av, aok := a[k]
		bv, bok := b[k]
		switch {
		case !aok:
			out = append(out, fmt.Sprintf("%s%s: in the chart's config, not in config.yaml", prefix, k))
		case !bok:
			out = append(out, fmt.Sprintf("%s%s: in config.yaml, not in the chart's config (values.yaml)", prefix, k))
		default:
			am, aIsMap := av.(map[string]any)
			bm, bIsMap := bv.(map[string]any)
			if aIsMap && bIsMap {
				out = append(out, diffMaps(prefix+k+".", am, bm)...)
			} else if !reflect.DeepEqual(av, bv) {
				out = append(out, fmt.Sprintf("%s%s: config.yaml has %v, the chart %v", prefix, k, av, bv))
			}
		}
	}
	sort.Strings(out)
	return out
}

// writeConfig writes the rendered config.yaml to a temporary file.
func writeConfig(t *testing.T, r *rendered) string {
	t.Helper()
	cm := one[corev1.ConfigMap](t, r, "ConfigMap")
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// podEnviron is the environment of the simdex process in the pod: the
// image's ENV, then the container's env, which overrides it. Secret
// references resolve to the rendered Secret's values, or to a placeholder
// for an existing Secret; other references to a placeholder.
func podEnviron(t *testing.T, r *rendered, c corev1.Container) []string {
	t.Helper()
	var environ []string
	for _, kv := range parseDockerfile(t).env {
		environ = append(environ, kv[0]+"="+kv[1])
	}
	secrets := map[string]*corev1.Secret{}
	for _, d := range r.byKind("Secret") {
		s := d.obj.(*corev1.Secret)
		secrets[s.Name] = s
	}
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			v = "placeholder"
			if ref := e.ValueFrom.SecretKeyRef; ref != nil {
				if s, ok := secrets[ref.Name]; ok {
					v = string(s.Data[ref.Key])
				}
			}
		}
		environ = append(environ, e.Name+"="+v)
	}
	return environ
}

// daemonEnvNames lists the variable of every leaf key of the daemon's
// Config, following its mapstructure tags as daemon.Load does.
func daemonEnvNames(typ reflect.Type, prefix string) map[string]bool {
	out := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, opt, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if (tag == "" && opt != "squash") || tag == "-" {
			continue
		}
		name := prefix + "_" + strings.ToUpper(tag)
		if opt == "squash" { // an embedded section's keys are its parent's
			name = prefix
		}
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			for k := range daemonEnvNames(f.Type, name) {
				out[k] = true
			}
			continue
		}
		out[name] = true
	}
	return out
}
