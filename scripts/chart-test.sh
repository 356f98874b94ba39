#!/usr/bin/env bash
# Checks the Helm chart the way a cluster would see it, offline:
#  1. the chart's Go tests (charts/simdex/tests): Helm's linter as a library,
#     rendering of every scenario in charts/simdex/ci, typed decoding of the
#     manifests, the rendered config.yaml loaded by the daemon's own loader;
#  2. `helm lint --strict` with the helm CLI;
#  3. `helm template` of every scenario (and of every example in
#     charts/simdex/examples) validated by kubeconform in strict
#     mode against the Kubernetes schemas, generated from the swagger.json of
#     the k8s.io/kubernetes module (no schema download at run time).
# helm and kubeconform are built from the Go module proxy into the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SIMDEX_CACHE:-$HOME/.cache/simdex}
bin=$cache/bin
helm_version=v3.22.0
kubeconform_version=v0.8.0
k8s_version=v1.34.1
mkdir -p "$bin"

(cd charts/simdex/tests && go test -count=1 ./...)

if [ ! -x "$bin/helm-$helm_version" ]; then
  GOBIN=$bin go install "helm.sh/helm/v3/cmd/helm@$helm_version"
  mv "$bin/helm" "$bin/helm-$helm_version"
fi
if [ ! -x "$bin/kubeconform-$kubeconform_version" ]; then
  GOBIN=$bin go install "github.com/yannh/kubeconform/cmd/kubeconform@$kubeconform_version"
  mv "$bin/kubeconform" "$bin/kubeconform-$kubeconform_version"
fi
helm=$bin/helm-$helm_version
kubeconform=$bin/kubeconform-$kubeconform_version

schemas=$cache/k8s-schemas/$k8s_version
if [ ! -f "$schemas/.done" ]; then
  swagger_dir=$(cd charts/simdex/tests && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$k8s_version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  rm -rf "$schemas"
  (cd charts/simdex/tests && go run ./cmd/k8sschemas -swagger "$swagger_dir/api/openapi-spec/swagger.json" -out "$schemas")
  touch "$schemas/.done"
fi

"$helm" lint --strict charts/simdex
for values in charts/simdex/ci/*.yaml charts/simdex/examples/*-values.yaml; do
  echo "chart: $values"
  "$helm" lint --strict charts/simdex -f "$values"
  # ServiceMonitor is a CRD of the Prometheus operator: not in the core schemas.
  "$helm" template simdex charts/simdex -f "$values" --namespace simdex --kube-version "${k8s_version#v}" |
    "$kubeconform" -strict -summary -skip ServiceMonitor \
      -schema-location "$schemas/{{.ResourceKind}}{{.KindSuffix}}.json" -
done
