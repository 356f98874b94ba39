package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir    = ".."
	repoRoot    = "../../.."
	releaseName = "simdex"
	namespace   = "compliance"
	// kubeVersion is the oldest Kubernetes the chart claims (Chart.yaml
	// kubeVersion) rounded up to one that has every field it uses.
	kubeVersion = "v1.31.0"
)

// scenario is one set of values the chart must render: the defaults, or a
// ci/*-values.yaml file.
type scenario struct {
	name   string
	file   string         // empty for the defaults
	values map[string]any // the file's values (not merged with the defaults)
}

// scenarios lists the defaults, every ci/*-values.yaml file and every
// examples/*-values.yaml file.
func scenarios(t *testing.T) []scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no ci/*-values.yaml scenarios")
	}
	examples, err := filepath.Glob(filepath.Join(chartDir, "examples", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, examples...)
	out := []scenario{{name: "chart-defaults", values: map[string]any{}}}
	for _, f := range files {
		vals, err := chartutil.ReadValuesFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		out = append(out, scenario{
			name:   strings.TrimSuffix(filepath.Base(f), "-values.yaml"),
			file:   f,
			values: vals.AsMap(),
		})
	}
	return out
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// rendered is one release rendered client-side, as `helm template` would.
type rendered struct {
	docs  []doc
	notes string
}

// doc is one rendered Kubernetes object.
type doc struct {
	source string // template path
	data   []byte
	meta   metav1.TypeMeta
	obj    any // the typed object, after decode
}

func (r *rendered) byKind(kind string) []doc {
	var out []doc
	for _, d := range r.docs {
		if d.meta.Kind == kind {
			out = append(out, d)
		}
	}
	return out
}

// one returns the only object of kind, failing the test otherwise.
func one[T any](t *testing.T, r *rendered, kind string) *T {
	t.Helper()
	ds := r.byKind(kind)
	if len(ds) != 1 {
		t.Fatalf("want one %s, rendered %d", kind, len(ds))
	}
	return ds[0].obj.(*T)
}

// render renders the chart with vals (merged over the chart's defaults)
// through Helm's install action in client-only dry-run mode, and decodes
// every document strictly. It returns the error of rendering, if any.
func render(t *testing.T, vals map[string]any) (*rendered, error) {
	t.Helper()
	ch := loadChart(t)
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = kv
	rel, err := install.Run(ch, vals)
	if err != nil {
		return nil, err
	}
	r := &rendered{notes: rel.Info.Notes}
	manifests := releaseutil.SplitManifests(rel.Manifest)
	keys := make([]string, 0, len(manifests))
	for k := range manifests {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	for _, k := range keys {
		data := []byte(manifests[k])
		source := ""
		if _, rest, ok := strings.Cut(manifests[k], "# Source: "); ok {
			source, _, _ = strings.Cut(rest, "\n")
		}
		d := doc{source: source, data: data}
		if err := yaml.Unmarshal(data, &d.meta); err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		if d.meta.Kind == "" && len(bytes.TrimSpace(stripComments(data))) == 0 {
			continue // an empty document
		}
		obj, err := decodeStrict(d.meta, data)
		if err != nil {
			t.Errorf("%s: %v\n%s", source, err, data)
			continue
		}
		d.obj = obj
		r.docs = append(r.docs, d)
	}
	return r, nil
}

// workload returns the pod template of the only StatefulSet or Deployment,
// failing the test unless exactly one of them is rendered.
func workload(t *testing.T, r *rendered) *corev1.PodTemplateSpec {
	t.Helper()
	sts, deps := r.byKind("StatefulSet"), r.byKind("Deployment")
	switch {
	case len(sts) == 1 && len(deps) == 0:
		return &sts[0].obj.(*appsv1.StatefulSet).Spec.Template
	case len(deps) == 1 && len(sts) == 0:
		return &deps[0].obj.(*appsv1.Deployment).Spec.Template
	}
	t.Fatalf("want one StatefulSet or one Deployment, rendered %d and %d", len(sts), len(deps))
	return nil
}

// selector returns the label selector of the only StatefulSet or
// Deployment, and its kind.
func selector(t *testing.T, r *rendered) (map[string]string, string) {
	t.Helper()
	if sts := r.byKind("StatefulSet"); len(sts) == 1 {
		return sts[0].obj.(*appsv1.StatefulSet).Spec.Selector.MatchLabels, "StatefulSet"
	}
	return one[appsv1.Deployment](t, r, "Deployment").Spec.Selector.MatchLabels, "Deployment"
}

// workloadReplicas returns the replicas of the only StatefulSet or
// Deployment.
func workloadReplicas(t *testing.T, r *rendered) int32 {
	t.Helper()
	var n *int32
	if sts := r.byKind("StatefulSet"); len(sts) == 1 {
		n = sts[0].obj.(*appsv1.StatefulSet).Spec.Replicas
	} else {
		n = one[appsv1.Deployment](t, r, "Deployment").Spec.Replicas
	}
	if n == nil {
		t.Fatal("workload sets no replicas")
	}
	return *n
}

// mustRender renders a scenario, failing the test on an error.
func mustRender(t *testing.T, vals map[string]any) *rendered {
	t.Helper()
	r, err := render(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func stripComments(data []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

// decodeStrict decodes data into the Go type of its apiVersion and kind,
// rejecting unknown fields, duplicate fields and wrong types. A kind the
// chart is not expected to render is an error.
func decodeStrict(meta metav1.TypeMeta, data []byte) (any, error) {
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case "apps/v1 StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &serviceMonitor{}
	default:
		return nil, fmt.Errorf("unexpected kind %q of apiVersion %q", meta.Kind, meta.APIVersion)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return nil, fmt.Errorf("decode %s strictly: %w", meta.Kind, err)
	}
	return obj, nil
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) the chart renders. Strict decoding into it
// rejects any field the chart does not mean to set, typos included.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// objectMeta returns the metadata of a decoded object.
func objectMeta(obj any) metav1.Object {
	return obj.(metav1.Object)
}

// readRepoFile reads a file of the simdex repository.
func readRepoFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
