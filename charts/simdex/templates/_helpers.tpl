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
The daemon's config.yaml, from .Values.config alone.
*/}}
{{- define "simdex.config" -}}
{{- toYaml .Values.config }}
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
