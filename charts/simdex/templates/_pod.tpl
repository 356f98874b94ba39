{{/*
The pod template of the StatefulSet or the Deployment: one container of
the daemon, its configuration, credentials and, with the postgres driver,
the DSN Secret mounted as a file.
*/}}
{{- define "simdex.podTemplate" -}}
{{- $secretName := include "simdex.secretName" . }}
{{- $dataDir := include "simdex.dataDir" . }}
metadata:
  labels:
    {{- include "simdex.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # Roll the pods when their configuration changes (but for replicas).
    checksum/config: {{ include "simdex.configBase" . | sha256sum }}
    {{- if include "simdex.createSecret" . }}
    checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "simdex.serviceAccountName" . }}
  automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  containers:
    - name: simdex
      image: {{ include "simdex.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - --config
        - /etc/simdex/config.yaml
      env:
        # The image sets these two; set them from config so that the
        # variables (which win over the file) cannot contradict it.
        - name: SIMDEX_DATA_DIR
          value: {{ $dataDir | quote }}
        - name: SIMDEX_HTTP_ADDR
          value: {{ .Values.config.http.addr | toString | quote }}
        {{- if $secretName }}
        {{- $credentials := include "simdex.credentials" . | fromYaml }}
        {{- $existing := .Values.credentials.existingSecret }}
        {{- range $key, $name := (include "simdex.credentialEnv" . | fromYaml) }}
        {{- if or $existing (get $credentials $key) }}
        - name: {{ $name }}
          valueFrom:
            secretKeyRef:
              name: {{ $secretName }}
              key: {{ $key }}
              {{- if $existing }}
              optional: true
              {{- end }}
        {{- end }}
        {{- end }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ include "simdex.httpPort" . }}
          protocol: TCP
      startupProbe:
        httpGet:
          path: /healthz
          port: http
          scheme: {{ if .Values.config.http.tls.cert_file }}HTTPS{{ else }}HTTP{{ end }}
        {{- toYaml .Values.startupProbe | nindent 8 }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
          scheme: {{ if .Values.config.http.tls.cert_file }}HTTPS{{ else }}HTTP{{ end }}
        {{- toYaml .Values.livenessProbe | nindent 8 }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
          scheme: {{ if .Values.config.http.tls.cert_file }}HTTPS{{ else }}HTTP{{ end }}
        {{- toYaml .Values.readinessProbe | nindent 8 }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: data
          mountPath: {{ $dataDir }}
        - name: config
          mountPath: /etc/simdex
          readOnly: true
        - name: tmp
          mountPath: /tmp
        {{- if include "simdex.postgres" . }}
        - name: postgres-dsn
          mountPath: {{ include "simdex.dsnDir" . }}
          readOnly: true
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "simdex.fullname" . }}
    - name: tmp
      emptyDir:
        sizeLimit: {{ .Values.tmpSizeLimit }}
    {{- if include "simdex.fleet" . }}
    # A fleet's pod keeps nothing of its own: the stores are in PostgreSQL.
    - name: data
      emptyDir:
        sizeLimit: {{ .Values.persistence.size }}
    {{- end }}
    {{- if include "simdex.postgres" . }}
    - name: postgres-dsn
      secret:
        secretName: {{ .Values.postgres.dsnSecret.name }}
        defaultMode: 0440
        items:
          - key: {{ .Values.postgres.dsnSecret.key }}
            path: {{ .Values.postgres.dsnSecret.key }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/*
config.data_dir, which must be absolute: the data volume is mounted there.
*/}}
{{- define "simdex.dataDir" -}}
{{- $dataDir := .Values.config.data_dir | toString }}
{{- if not (isAbs $dataDir) }}
{{- fail "config.data_dir must be an absolute path: the data volume is mounted there" }}
{{- end }}
{{- $dataDir }}
{{- end }}
