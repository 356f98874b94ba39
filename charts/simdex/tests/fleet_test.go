package tests

import (
	"path"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// scenarioValues returns the values of the scenario called name.
func scenarioValues(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, sc := range scenarios(t) {
		if sc.name == name {
			return sc.values
		}
	}
	t.Fatalf("no scenario %s", name)
	return nil
}

// checkDataVolume checks the data volume of a workload of kind: a volume
// claim per pod for a StatefulSet, an emptyDir for a fleet's Deployment.
func checkDataVolume(t *testing.T, r *rendered, kind string) {
	t.Helper()
	if kind == "Deployment" {
		for _, v := range workload(t, r).Spec.Volumes {
			if v.Name == "data" && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
				return
			}
		}
		t.Error("Deployment: no data emptyDir with a size limit")
		return
	}
	sts := one[appsv1.StatefulSet](t, r, "StatefulSet")
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Fatalf("want one volumeClaimTemplate named data")
	}
	if _, ok := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		t.Error("volumeClaimTemplate data requests no storage")
	}
}

// dsnFile returns where the pod's DSN Secret puts the key, read-only, or
// "" when the pod mounts none; secret is the Secret's name.
func dsnFile(t *testing.T, pod *corev1.PodTemplateSpec) (file, secret string) {
	t.Helper()
	for _, v := range pod.Spec.Volumes {
		if v.Name != "postgres-dsn" {
			continue
		}
		if v.Secret == nil || len(v.Secret.Items) != 1 || v.Secret.DefaultMode == nil || *v.Secret.DefaultMode&0o007 != 0 {
			t.Fatalf("postgres-dsn volume %+v: want one item of a Secret, unreadable by others", v)
		}
		for _, m := range pod.Spec.Containers[0].VolumeMounts {
			if m.Name == v.Name {
				if !m.ReadOnly {
					t.Error("postgres-dsn mounted writable")
				}
				return path.Join(m.MountPath, v.Secret.Items[0].Path), v.Secret.SecretName
			}
		}
		t.Fatal("postgres-dsn volume not mounted")
	}
	return "", ""
}

// TestFleet: PostgreSQL and an external NATS make a Deployment of three
// replicas by default, rolled one new pod at a time, with a
// PodDisruptionBudget of one, no volume of its own, no governing Service,
// and the DSN from a Secret mounted as the file the daemon is told to
// read; the daemon's replicas key follows replicaCount.
func TestFleet(t *testing.T) {
	example := scenarioValues(t, "fleet")
	for _, tc := range []struct {
		name     string
		replicas any
		want     int32
	}{{"default replicas", nil, 3}, {"five", 5, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]any{}
			for k, v := range example {
				vals[k] = v
			}
			vals["replicaCount"] = tc.replicas
			r := mustRender(t, vals)
			dep := one[appsv1.Deployment](t, r, "Deployment")
			if dep.Spec.Replicas == nil || *dep.Spec.Replicas != tc.want {
				t.Errorf("replicas %v, want %d", dep.Spec.Replicas, tc.want)
			}
			ru := dep.Spec.Strategy.RollingUpdate
			if ru == nil || ru.MaxUnavailable == nil || *ru.MaxUnavailable != intstr.FromInt32(0) {
				t.Error("rolling update may stop an old pod before a new one is ready")
			}
			pdb := one[policyv1.PodDisruptionBudget](t, r, "PodDisruptionBudget")
			if pdb.Spec.MaxUnavailable == nil || *pdb.Spec.MaxUnavailable != intstr.FromInt32(1) {
				t.Errorf("PodDisruptionBudget maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
			}
			cfg := renderedConfig(t, one[corev1.ConfigMap](t, r, "ConfigMap"))
			if got := lookup(cfg, "replicas"); got != float64(tc.want) {
				t.Errorf("config replicas %v, want %d", got, tc.want)
			}
			file, secret := dsnFile(t, &dep.Spec.Template)
			if file == "" || file != lookup(cfg, "store", "postgres", "dsn_file") || secret != "simdex-postgres" {
				t.Errorf("DSN mounted at %q from %q, config reads %v", file, secret, lookup(cfg, "store", "postgres", "dsn_file"))
			}
			for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
				if strings.Contains(e.Name, "DSN") {
					t.Errorf("env %s: the DSN is a file, never a variable", e.Name)
				}
			}
		})
	}
}

// TestPostgresStatefulSet: PostgreSQL beside the embedded NATS stays one
// StatefulSet pod (the NATS store needs its volume), with the DSN file.
func TestPostgresStatefulSet(t *testing.T) {
	r := mustRender(t, scenarioValues(t, "postgres"))
	sts := one[appsv1.StatefulSet](t, r, "StatefulSet")
	if *sts.Spec.Replicas != 1 {
		t.Errorf("replicas %d, want 1", *sts.Spec.Replicas)
	}
	cfg := renderedConfig(t, one[corev1.ConfigMap](t, r, "ConfigMap"))
	file, _ := dsnFile(t, &sts.Spec.Template)
	if file != "/etc/simdex-postgres/connection-string" || lookup(cfg, "store", "postgres", "dsn_file") != file {
		t.Errorf("DSN mounted at %q, config reads %v", file, lookup(cfg, "store", "postgres", "dsn_file"))
	}
	if f, _ := dsnFile(t, workload(t, mustRender(t, map[string]any{}))); f != "" {
		t.Errorf("sqlite mounts a DSN at %s", f)
	}
}

// TestSchemaRefuses: values.schema.json (and the templates behind it)
// refuse a bad layout before anything is deployed.
func TestSchemaRefuses(t *testing.T) {
	const fleet = `postgres: {dsnSecret: {name: pg}}
config: {store: {driver: postgres}, nats: {url: "nats://nats:4222"}}
`
	for _, tc := range []struct {
		name, vals string
		errs       []string
	}{
		{"unknown driver", `config: {store: {driver: mysql}}`, []string{"driver", "sqlite", "postgres"}},
		{"no replicas", fleet + `replicaCount: 0`, []string{"replicaCount", "minimum"}},
		{"replicas not a number", `replicaCount: three`, []string{"replicaCount"}},
		{"postgres without a DSN Secret", `config: {store: {driver: postgres}}`, []string{"/postgres/dsnSecret/name"}},
		{"DSN in the values", `{postgres: {dsnSecret: {name: pg}}, config: {store: {driver: postgres, postgres: {dsn: "postgres://u:pw@db/x"}}}}`, []string{"/config/store/postgres"}},
		{"DSN file set by hand", `{postgres: {dsnSecret: {name: pg}}, config: {store: {driver: postgres, postgres: {dsn_file: /x}}}}`, []string{"dsn_file"}},
		{"replicas on sqlite", `replicaCount: 3`, []string{"replicaCount"}},
		{"replicas on sqlite and an external NATS", `{replicaCount: 2, config: {nats: {url: "nats://n:4222"}}}`, []string{"replicaCount"}},
		{"replicas on the embedded NATS", `{replicaCount: 2, postgres: {dsnSecret: {name: pg}}, config: {store: {driver: postgres}}}`, []string{"replicaCount"}},
		{"daemon replicas set by hand", `config: {replicas: 2}`, []string{"/config/replicas"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(tc.vals), &vals); err != nil {
				t.Fatal(err)
			}
			_, err := render(t, vals)
			if err == nil {
				t.Fatal("rendered")
			}
			for _, e := range tc.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error %q does not say %q", err, e)
				}
			}
		})
	}
}
