{{/* Names and labels, as `helm create` makes them. */}}
{{- define "herald.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "herald.fullname" -}}
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

{{- define "herald.selectorLabels" -}}
app.kubernetes.io/name: {{ include "herald.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "herald.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "herald.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The Secret the chart creates when a value is given instead of an existing Secret. */}}
{{- define "herald.secretName" -}}
{{ include "herald.fullname" . }}-secrets
{{- end }}

{{/* Where DATABASE_URL and HERALD_SECRET come from: `name key` of a secretKeyRef. */}}
{{- define "herald.databaseSecretRef" -}}
{{- if .Values.database.existingSecret -}}
{{ .Values.database.existingSecret }} {{ .Values.database.existingSecretKey }}
{{- else -}}
{{- $_ := required "database.existingSecret (a Secret holding DATABASE_URL) or database.url is required" .Values.database.url -}}
{{ include "herald.secretName" . }} DATABASE_URL
{{- end -}}
{{- end }}

{{- define "herald.heraldSecretRef" -}}
{{- if .Values.heraldSecret.existingSecret -}}
{{ .Values.heraldSecret.existingSecret }} {{ .Values.heraldSecret.existingSecretKey }}
{{- else -}}
{{- $_ := required "heraldSecret.existingSecret (a Secret holding HERALD_SECRET) or heraldSecret.value is required" .Values.heraldSecret.value -}}
{{ include "herald.secretName" . }} HERALD_SECRET
{{- end -}}
{{- end }}

{{- define "herald.secretKeyRef" -}}
{{- $ref := splitList " " . -}}
valueFrom:
  secretKeyRef:
    name: {{ index $ref 0 }}
    key: {{ index $ref 1 }}
{{- end }}

{{/* DATABASE_URL, all the migrate Job needs. */}}
{{- define "herald.databaseEnv" -}}
- name: DATABASE_URL
  {{- include "herald.secretKeyRef" (include "herald.databaseSecretRef" .) | nindent 2 }}
{{- end }}

{{/* Variables the chart sets itself: `env` may not set them again. */}}
{{- define "herald.managedEnv" -}}
NODE_ENV HOST PORT PUBLIC_URL DATABASE_URL HERALD_SECRET TEMPORAL_ADDRESS TEMPORAL_NAMESPACE OWN_PROVIDER_URL OWN_PROVIDER_MESSAGES_PER_SECOND LOG_LEVEL TRUSTED_PROXIES WORKER_HEALTH_PORT METRICS_PORT
{{- end }}

{{/* The environment of the api and worker containers (the migrate Job needs only DATABASE_URL). */}}
{{- define "herald.env" -}}
- name: NODE_ENV
  value: production
- name: HOST
  value: 0.0.0.0
- name: PUBLIC_URL
  value: {{ required "publicUrl is required: where clients, receipts and webhooks reach the api (https://…)" .Values.publicUrl | quote }}
- name: TEMPORAL_ADDRESS
  value: {{ required "temporal.address is required: host:port of an existing Temporal frontend" .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: OWN_PROVIDER_URL
  value: {{ required "ownProviderUrl is required: the operator's `own` provider (no pod of this chart runs one)" .Values.ownProviderUrl | quote }}
{{- with .Values.ownProviderMessagesPerSecond }}
- name: OWN_PROVIDER_MESSAGES_PER_SECOND
  value: {{ . | quote }}
{{- end }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.trustedProxies }}
- name: TRUSTED_PROXIES
  value: {{ . | quote }}
{{- end }}
{{- if .Values.metrics.enabled }}
- name: METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
{{- end }}
{{ include "herald.databaseEnv" . }}
- name: HERALD_SECRET
  {{- include "herald.secretKeyRef" (include "herald.heraldSecretRef" .) | nindent 2 }}
{{- $managed := splitList " " (include "herald.managedEnv" .) }}
{{- range $name, $value := .Values.env }}
{{- if has $name $managed }}
{{- fail (printf "env.%s is set by the chart itself: use its own value instead" $name) }}
{{- end }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{/* Pod-level settings shared by the api, the worker and the migrate Job. */}}
{{- define "herald.podSpecCommon" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
volumes:
  - name: tmp
    emptyDir: {}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- end }}

{{- define "herald.containerCommon" -}}
image: {{ include "herald.image" . | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
{{- end }}

{{/* Rolls the pods when a Secret the chart made changes (existing Secrets are the operator's to roll). */}}
{{- define "herald.secretChecksum" -}}
{{ list .Values.database.url .Values.heraldSecret.value | toJson | sha256sum }}
{{- end }}
