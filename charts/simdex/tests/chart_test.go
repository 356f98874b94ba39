package tests

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// TestLint runs Helm's linter, as `helm lint --strict` would, with the
// defaults and with every scenario: no errors and no warnings.
func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(chartDir, sc.values, namespace, kv)
			for _, m := range linter.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("%s", m)
				} else {
					t.Logf("%s", m)
				}
			}
		})
	}
}

// expectedKinds is what each scenario must render, kind by kind.
var expectedKinds = map[string]map[string]int{
	"chart-defaults": {"ConfigMap": 1, "Service": 2, "ServiceAccount": 1, "StatefulSet": 1},
	"default":        {"ConfigMap": 1, "Service": 2, "ServiceAccount": 1, "StatefulSet": 1},
	"s3-secrets": {"ConfigMap": 1, "Service": 2, "ServiceAccount": 1, "StatefulSet": 1,
		"Secret": 1, "PodDisruptionBudget": 1, "NetworkPolicy": 1, "ServiceMonitor": 1},
	"external-nats": {"ConfigMap": 1, "Service": 2, "StatefulSet": 1, "PodDisruptionBudget": 1},
	"postgres":      {"ConfigMap": 1, "Service": 2, "ServiceAccount": 1, "StatefulSet": 1},
	"fleet":         {"ConfigMap": 1, "Service": 1, "ServiceAccount": 1, "Deployment": 1, "PodDisruptionBudget": 1},
}

// TestRender renders the defaults and every scenario, decodes each object
// strictly into its Kubernetes type (in render), and checks what the chart
// promises: probes, non-root security context, limits, the config
// checksum, credentials only by Secret reference, no namespace.
func TestRender(t *testing.T) {
	for _, sc := range scenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			r := mustRender(t, sc.values)
			want, ok := expectedKinds[sc.name]
			if !ok {
				t.Fatalf("scenario %s has no row in expectedKinds", sc.name)
			}
			got := map[string]int{}
			for _, d := range r.docs {
				got[d.meta.Kind]++
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rendered kinds %v, want %v", got, want)
			}
			if strings.TrimSpace(r.notes) == "" {
				t.Error("NOTES.txt rendered empty")
			}
			checkMetadata(t, r)
			checkWorkload(t, r)
			checkServices(t, r)
			checkCredentials(t, r, sc)
			checkOptional(t, r)
		})
	}
}

func checkMetadata(t *testing.T, r *rendered) {
	t.Helper()
	for _, d := range r.docs {
		m := objectMeta(d.obj)
		if m.GetNamespace() != "" {
			t.Errorf("%s: sets metadata.namespace; leave it to helm --namespace", d.source)
		}
		for _, l := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"} {
			if m.GetLabels()[l] == "" {
				t.Errorf("%s: no label %s", d.source, l)
			}
		}
		if strings.Contains(string(d.data), "\nnamespace:") || strings.Contains(string(d.data), " namespace: ") {
			t.Errorf("%s: contains a namespace field", d.source)
		}
	}
}

func checkWorkload(t *testing.T, r *rendered) {
	t.Helper()
	pod := *workload(t, r)
	sel, kind := selector(t, r)
	cm := one[corev1.ConfigMap](t, r, "ConfigMap")

	// Selector and labels.
	for k, v := range sel {
		if pod.Labels[k] != v {
			t.Errorf("pod label %s=%q does not match the selector's %q", k, pod.Labels[k], v)
		}
	}

	// The config checksum: a sha256, that changes with the config (see
	// TestChecksumFollowsConfig).
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(pod.Annotations["checksum/config"]) {
		t.Errorf("checksum/config annotation %q is not a sha256", pod.Annotations["checksum/config"])
	}

	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("want one container, have %d", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	// Image pinned.
	if strings.HasSuffix(c.Image, ":latest") || !(strings.Contains(c.Image, "@sha256:") || regexp.MustCompile(`:[^/:]+$`).MatchString(c.Image)) {
		t.Errorf("image %q is not pinned to a tag or digest", c.Image)
	}

	// HTTP port: the port of config http.addr, probed by name.
	cfg := renderedConfig(t, cm)
	addr, _ := lookup(cfg, "http", "addr").(string)
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("config http.addr %q: %v", addr, err)
	}
	port, _ := strconv.Atoi(portStr)
	if i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "http" }); i < 0 {
		t.Error("no container port named http")
	} else if int(c.Ports[i].ContainerPort) != port {
		t.Errorf("container port %d, config http.addr says %d", c.Ports[i].ContainerPort, port)
	}
	checkProbe(t, "liveness", c.LivenessProbe, "/healthz")
	checkProbe(t, "readiness", c.ReadinessProbe, "/readyz")
	checkProbe(t, "startup", c.StartupProbe, "/healthz")

	// Security: non-root, read-only root, no capabilities, seccomp.
	psc, sc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil {
		t.Fatal("pod or container securityContext missing")
	}
	if !isTrue(psc.RunAsNonRoot) || !isTrue(sc.RunAsNonRoot) {
		t.Error("runAsNonRoot must be true for the pod and the container")
	}
	for _, uid := range []*int64{psc.RunAsUser, sc.RunAsUser} {
		if uid != nil && *uid == 0 {
			t.Error("runAsUser is 0")
		}
	}
	if sc.RunAsUser != nil && *sc.RunAsUser != imageUID(t) {
		t.Errorf("container runAsUser %d, the image's USER is %d", *sc.RunAsUser, imageUID(t))
	}
	if !isTrue(sc.ReadOnlyRootFilesystem) {
		t.Error("readOnlyRootFilesystem must be true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Error("capabilities must drop ALL and add none")
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("seccompProfile must be RuntimeDefault")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("privileged container")
	}

	// Resources: requests and limits for CPU and memory, requests <= limits.
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[name]
		lim, okLim := c.Resources.Limits[name]
		if !okReq || !okLim {
			t.Errorf("resources: %s request and limit both required", name)
			continue
		}
		if req.Cmp(lim) > 0 {
			t.Errorf("resources: %s request %s above limit %s", name, req.String(), lim.String())
		}
	}

	// Persistent state: the data volume claim is mounted at data_dir; a
	// fleet's pods keep nothing, their data directory is an emptyDir.
	dataDir, _ := lookup(cfg, "data_dir").(string)
	checkDataVolume(t, r, kind)
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["data"] != dataDir {
		t.Errorf("data volume mounted at %q, config data_dir is %q", mounts["data"], dataDir)
	}
	if mounts["config"] != "/etc/simdex" {
		t.Errorf("config volume mounted at %q, want /etc/simdex", mounts["config"])
	}
	if mounts["tmp"] != "/tmp" {
		t.Errorf("no writable /tmp (the root file system is read-only)")
	}
	var cmVol *corev1.Volume
	for i, v := range pod.Spec.Volumes {
		if v.Name == "config" {
			cmVol = &pod.Spec.Volumes[i]
		}
	}
	if cmVol == nil || cmVol.ConfigMap == nil || cmVol.ConfigMap.Name != cm.Name {
		t.Errorf("config volume does not mount ConfigMap %s", cm.Name)
	}
	if strings.Join(c.Args, " ") != "--config /etc/simdex/config.yaml" {
		t.Errorf("args %q, want --config /etc/simdex/config.yaml", c.Args)
	}
	if len(c.Command) > 0 {
		t.Errorf("command %q overrides the image's ENTRYPOINT", c.Command)
	}

	// Shutdown: the grace period covers the pipeline's drain.
	if d, err := time.ParseDuration(fmt.Sprint(lookup(cfg, "pipeline", "shutdown_timeout"))); err != nil {
		t.Errorf("pipeline.shutdown_timeout: %v", err)
	} else if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= d {
		t.Errorf("terminationGracePeriodSeconds %v does not exceed pipeline.shutdown_timeout %s", g, d)
	}

	// The pod runs as a ServiceAccount of its own or a named one, without
	// an API token.
	if pod.Spec.ServiceAccountName == "" {
		t.Error("no serviceAccountName")
	}
	if sas := r.byKind("ServiceAccount"); len(sas) == 1 && objectMeta(sas[0].obj).GetName() != pod.Spec.ServiceAccountName {
		t.Errorf("pod runs as %s, chart made ServiceAccount %s", pod.Spec.ServiceAccountName, objectMeta(sas[0].obj).GetName())
	}
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken must be false: simdex does not call the Kubernetes API")
	}
}

func checkProbe(t *testing.T, name string, p *corev1.Probe, path string) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("%s probe: missing or not httpGet", name)
		return
	}
	if p.HTTPGet.Path != path || p.HTTPGet.Port != intstr.FromString("http") {
		t.Errorf("%s probe: GET %s on port %s, want %s on http", name, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
	}
	if p.PeriodSeconds <= 0 || p.FailureThreshold <= 0 || p.TimeoutSeconds <= 0 {
		t.Errorf("%s probe: periodSeconds, timeoutSeconds and failureThreshold must be set", name)
	}
}

func checkServices(t *testing.T, r *rendered) {
	t.Helper()
	pod := workload(t, r)
	serviceName := ""
	if sts := r.byKind("StatefulSet"); len(sts) == 1 {
		serviceName = sts[0].obj.(*appsv1.StatefulSet).Spec.ServiceName
	}
	var governing bool
	for _, d := range r.byKind("Service") {
		svc := d.obj.(*corev1.Service)
		if svc.Name == serviceName {
			governing = svc.Spec.ClusterIP == corev1.ClusterIPNone
		} else if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			t.Errorf("headless Service %s governs no StatefulSet", svc.Name)
		}
		for k, v := range svc.Spec.Selector {
			if pod.Labels[k] != v {
				t.Errorf("Service %s selects %s=%s, which the pods do not carry", svc.Name, k, v)
			}
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http" || svc.Spec.Ports[0].TargetPort != intstr.FromString("http") {
			t.Errorf("Service %s: want one port named http targeting the http container port", svc.Name)
		}
	}
	if serviceName != "" && !governing {
		t.Errorf("StatefulSet serviceName %q is not a rendered headless Service", serviceName)
	}
}

// checkCredentials checks that credentials reach the pod only as Secret
// references, that every reference resolves, and that no credential value
// appears anywhere but in the Secret.
func checkCredentials(t *testing.T, r *rendered, sc scenario) {
	t.Helper()
	pod := workload(t, r)
	secrets := map[string]*corev1.Secret{}
	for _, d := range r.byKind("Secret") {
		s := d.obj.(*corev1.Secret)
		secrets[s.Name] = s
	}
	existing, _ := lookup(sc.values, "credentials", "existingSecret").(string)
	if existing != "" && len(secrets) > 0 {
		t.Errorf("existingSecret %s given, but the chart made a Secret too", existing)
	}
	var values []string
	for _, s := range secrets {
		for _, v := range s.Data {
			values = append(values, string(v))
		}
	}
	for _, path := range [][]string{{"s3", "accessKey"}, {"s3", "secretKey"}, {"nats", "user"}, {"nats", "password"}, {"nats", "token"}} {
		if v, _ := lookup(sc.values, append([]string{"credentials"}, path...)...).(string); v != "" {
			values = append(values, v)
		}
	}
	refs := 0
	for _, e := range pod.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs++
			ref := e.ValueFrom.SecretKeyRef
			if s, ok := secrets[ref.Name]; ok {
				if _, ok := s.Data[ref.Key]; !ok {
					t.Errorf("env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key)
				}
			} else if ref.Name != existing {
				t.Errorf("env %s: references Secret %s, which is neither rendered nor existingSecret", e.Name, ref.Name)
			}
			continue
		}
		if slices.Contains(values, e.Value) && e.Value != "" {
			t.Errorf("env %s holds a credential in clear", e.Name)
		}
	}
	if (len(secrets) > 0 || existing != "") && refs == 0 {
		t.Error("credentials given, but the pod references no Secret")
	}
	if len(secrets) > 0 && pod.Annotations["checksum/secret"] == "" {
		t.Error("chart-made Secret, but no checksum/secret annotation to roll the pods when it changes")
	}
	for _, d := range r.docs {
		if d.meta.Kind == "Secret" {
			continue
		}
		for _, v := range values {
			if strings.Contains(string(d.data), v) || strings.Contains(string(d.data), base64.StdEncoding.EncodeToString([]byte(v))) {
				t.Errorf("%s: contains a credential value", d.source)
			}
		}
	}
}

// checkOptional checks the optional objects when rendered.
func checkOptional(t *testing.T, r *rendered) {
	t.Helper()
	pods := workload(t, r).Labels
	matches := func(sel map[string]string) bool {
		for k, v := range sel {
			if pods[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	for _, d := range r.byKind("PodDisruptionBudget") {
		pdb := d.obj.(*policyv1.PodDisruptionBudget)
		if !matches(pdb.Spec.Selector.MatchLabels) {
			t.Error("PodDisruptionBudget does not select the pods")
		}
		if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
			t.Error("PodDisruptionBudget: set exactly one of minAvailable and maxUnavailable")
		}
	}
	for _, d := range r.byKind("NetworkPolicy") {
		np := d.obj.(*networkingv1.NetworkPolicy)
		if !matches(np.Spec.PodSelector.MatchLabels) {
			t.Error("NetworkPolicy does not select the pods")
		}
		if len(np.Spec.Ingress) == 0 || len(np.Spec.Ingress[0].Ports) == 0 || *np.Spec.Ingress[0].Ports[0].Port != intstr.FromString("http") {
			t.Error("NetworkPolicy does not admit the http port")
		}
		if slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			dns := false
			for _, e := range np.Spec.Egress {
				for _, p := range e.Ports {
					if p.Port != nil && p.Port.IntValue() == 53 {
						dns = true
					}
				}
			}
			if !dns {
				t.Error("NetworkPolicy restricts egress without allowing DNS")
			}
		}
	}
	for _, d := range r.byKind("ServiceMonitor") {
		sm := d.obj.(*serviceMonitor)
		if !matches(sm.Spec.Selector.MatchLabels) {
			t.Error("ServiceMonitor does not select the Service's labels")
		}
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "http" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Error("ServiceMonitor must scrape /metrics on port http")
		}
		for _, iv := range []string{sm.Spec.Endpoints[0].Interval, sm.Spec.Endpoints[0].ScrapeTimeout} {
			if _, err := time.ParseDuration(iv); err != nil {
				t.Errorf("ServiceMonitor: %v", err)
			}
		}
		// Exactly one Service (not the headless one) must match.
		n := 0
		for _, sd := range r.byKind("Service") {
			svc := sd.obj.(*corev1.Service)
			ok := true
			for k, v := range sm.Spec.Selector.MatchLabels {
				ok = ok && svc.Labels[k] == v
			}
			for _, ex := range sm.Spec.Selector.MatchExpressions {
				_, has := svc.Labels[ex.Key]
				ok = ok && ex.Operator == "DoesNotExist" && !has
			}
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Errorf("ServiceMonitor selects %d Services, want 1", n)
		}
	}
}

// TestChecksumFollowsConfig checks that checksum/config changes with the
// config, and only then, so that pods roll on every config change; the
// number of replicas (the daemon's replicas key) does not roll them.
func TestChecksumFollowsConfig(t *testing.T) {
	fleet := scenarioValues(t, "fleet")
	sum := func(vals map[string]any, replicas int) string {
		vals = maps.Clone(vals)
		vals["replicaCount"] = replicas
		return workload(t, mustRender(t, vals)).Annotations["checksum/config"]
	}
	a := sum(fleet, 3)
	b := sum(fleet, 5)
	debug, cfg := maps.Clone(fleet), maps.Clone(fleet["config"].(map[string]any))
	cfg["log"] = map[string]any{"level": "debug"}
	debug["config"] = cfg
	c := sum(debug, 3)
	if a != b {
		t.Error("checksum/config changed without a config change")
	}
	if a == c {
		t.Error("checksum/config did not change with the config")
	}
}

// TestRenderRefuses checks the values the chart refuses to render.
func TestRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals string
		err  string
	}{
		{"latest tag", `image: {tag: latest}`, "image.tag must be a pinned version"},
		{"addr without port", `config: {http: {addr: "0.0.0.0"}}`, "config.http.addr must be host:port"},
		{"relative data_dir", `config: {data_dir: data}`, "config.data_dir must be an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(tc.vals), &vals); err != nil {
				t.Fatal(err)
			}
			_, err := render(t, vals)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// renderedConfig returns the ConfigMap's config.yaml as a map.
func renderedConfig(t *testing.T, cm *corev1.ConfigMap) map[string]any {
	t.Helper()
	text, ok := cm.Data["config.yaml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no config.yaml", cm.Name)
	}
	var cfg map[string]any
	if err := yaml.UnmarshalStrict([]byte(text), &cfg); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	return cfg
}

// lookup walks nested maps by key; nil when a key is missing.
func lookup(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func isTrue(b *bool) bool { return b != nil && *b }
