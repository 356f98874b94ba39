{{/*
Chart name, truncated to the 63 characters of a DNS label.
*/}}
{{- define "simdex.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's resources: the release name, followed by the
chart name unless the release name already contains it.
*/}}
{{- define "simdex.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "simdex.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every resource.
*/}}
{{- define "simdex.labels" -}}
helm.sh/chart: {{ include "simdex.chart" . }}
{{ include "simdex.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels: stable for the life of the release.
*/}}
{{- define "simdex.selectorLabels" -}}
app.kubernetes.io/name: {{ include "simdex.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
ServiceAccount the pods run as.
*/}}
{{- define "simdex.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "simdex.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image reference: repository:tag, or repository@digest when a digest is set.
A floating `latest` tag is refused: the index format follows the daemon's
version, so the version must be known.
*/}}
{{- define "simdex.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString }}
{{- if eq $tag "latest" }}
{{- fail "image.tag must be a pinned version, not latest" }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
The daemon's config.yaml, from .Values.config, with the keys the chart
owns: replicas (from replicaCount) and, with the postgres driver,
store.postgres.dsn_file (where the DSN Secret is mounted).
*/}}
{{- define "simdex.config" -}}
{{- $cfg := include "simdex.configBase" . | fromYaml }}
{{- $_ := set $cfg "replicas" (include "simdex.replicas" . | int) }}
{{- toYaml $cfg }}
{{- end }}

{{/*
The daemon's config.yaml but replicas: what the pods' checksum/config
follows. The daemon reads replicas only to refuse a fleet without shared
stores at start, so scaling changes the ConfigMap without rolling every pod.
*/}}
{{- define "simdex.configBase" -}}
{{- $cfg := deepCopy .Values.config }}
{{- if include "simdex.postgres" . }}
{{- $_ := set $cfg.store.postgres "dsn_file" (include "simdex.dsnPath" .) }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/*
"true" when the stores are in PostgreSQL (config.store.driver), else empty.
*/}}
{{- define "simdex.postgres" -}}
{{- if eq (toString .Values.config.store.driver) "postgres" }}
{{- if not .Values.postgres.dsnSecret.name }}
{{- fail "config.store.driver postgres needs postgres.dsnSecret.name: the Secret holding the connection string" }}
{{- end }}
{{- if or .Values.config.store.postgres.dsn_file .Values.config.store.postgres.dsn_env }}
{{- fail "leave config.store.postgres.dsn_file and dsn_env empty: the chart mounts postgres.dsnSecret as the DSN file" }}
{{- end }}
{{- "true" }}
{{- end }}
{{- end }}

{{/*
"true" for a fleet: PostgreSQL stores and an external NATS, so that every
pod shares the state and the work; the pods are a Deployment.
*/}}
{{- define "simdex.fleet" -}}
{{- if and (include "simdex.postgres" .) .Values.config.nats.url }}true{{ end }}
{{- end }}

{{/*
Number of pods: replicaCount, or 3 for a fleet and 1 otherwise. More
than one pod with a store or a NATS of its own is refused.
*/}}
{{- define "simdex.replicas" -}}
{{- $fleet := include "simdex.fleet" . }}
{{- $n := .Values.replicaCount | default (ternary 3 1 (eq $fleet "true")) | int }}
{{- if and (gt $n 1) (not $fleet) }}
{{- fail (printf "replicaCount %d needs a fleet (config.store.driver: postgres and config.nats.url): each pod would keep its own index" $n) }}
{{- end }}
{{- $n }}
{{- end }}

{{/*
Directory the DSN Secret is mounted at, and the DSN file in it.
*/}}
{{- define "simdex.dsnDir" -}}/etc/simdex-postgres{{- end }}
{{- define "simdex.dsnPath" -}}
{{- printf "%s/%s" (include "simdex.dsnDir" .) .Values.postgres.dsnSecret.key }}
{{- end }}

{{/*
Port of config.http.addr (host:port): the container port.
*/}}
{{- define "simdex.httpPort" -}}
{{- $port := regexFind "[0-9]+$" (toString .Values.config.http.addr) }}
{{- if not (regexMatch ":[0-9]+$" (toString .Values.config.http.addr)) }}
{{- fail "config.http.addr must be host:port" }}
{{- end }}
{{- $port }}
{{- end }}

{{/*
Credentials by their key in the Secret, as YAML; values may be empty.
*/}}
{{- define "simdex.credentials" -}}
{{- $c := .Values.credentials }}
s3-access-key: {{ $c.s3.accessKey | default "" | toString | quote }}
s3-secret-key: {{ $c.s3.secretKey | default "" | toString | quote }}
nats-user: {{ $c.nats.user | default "" | toString | quote }}
nats-password: {{ $c.nats.password | default "" | toString | quote }}
nats-token: {{ $c.nats.token | default "" | toString | quote }}
{{- end }}

{{/*
Environment variable set from each key of the credentials Secret.
*/}}
{{- define "simdex.credentialEnv" -}}
s3-access-key: SIMDEX_S3_ACCESS_KEY
s3-secret-key: SIMDEX_S3_SECRET_KEY
nats-user: SIMDEX_NATS_USER
nats-password: SIMDEX_NATS_PASSWORD
nats-token: SIMDEX_NATS_TOKEN
{{- end }}

{{/*
Whether the chart makes its own Secret: "true" or empty.
*/}}
{{- define "simdex.createSecret" -}}
{{- if not .Values.credentials.existingSecret }}
{{- range $k, $v := (include "simdex.credentials" . | fromYaml) }}
{{- if $v }}true{{ break }}{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Name of the credentials Secret, or empty when there is none.
*/}}
{{- define "simdex.secretName" -}}
{{- if .Values.credentials.existingSecret }}
{{- .Values.credentials.existingSecret }}
{{- else if include "simdex.createSecret" . }}
{{- include "simdex.fullname" . }}
{{- end }}
{{- end }}
