{{/*
Names. The prefix is fullnameOverride or the release name without a trailing
"-agent": `helm install cni-bench-agent` gives cni-bench-agent and
cni-bench-collector, the names the plain manifests use. 53 characters leave
room for "-collector" within a 63-character name.
*/}}
{{- define "cni-bench.prefix" -}}
{{- $p := .Values.fullnameOverride | default (trimSuffix "-agent" .Release.Name) -}}
{{- $p | trunc 53 | trimSuffix "-" -}}
{{- end -}}

{{- define "cni-bench.agent.fullname" -}}
{{- printf "%s-agent" (include "cni-bench.prefix" .) -}}
{{- end -}}

{{- define "cni-bench.collector.fullname" -}}
{{- printf "%s-collector" (include "cni-bench.prefix" .) -}}
{{- end -}}

{{/* Where the sweep puts its Services: an RFC 1123 label, as the collector's config requires. */}}
{{- define "cni-bench.sweepNamespace" -}}
{{- .Values.scaleSweep.namespace | default (printf "%s-sweep" .Release.Name | trunc 63 | trimSuffix "-") -}}
{{- end -}}

{{/* The collector Service's DNS name: what agents dial and what its certificate names. */}}
{{- define "cni-bench.collector.host" -}}
{{- printf "%s.%s.svc" (include "cni-bench.collector.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "cni-bench.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Labels. Called with (dict "ctx" $ "component" "agent"|"collector"); the
component names the pods (app.kubernetes.io/name cni-bench-<component>).
*/}}
{{- define "cni-bench.selectorLabels" -}}
app.kubernetes.io/name: cni-bench-{{ .component }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- end -}}

{{- define "cni-bench.labels" -}}
{{ include "cni-bench.selectorLabels" . }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: cni-bench
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ include "cni-bench.chart" .ctx }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The collector's CNI_BENCH_AGENT_SELECTOR: the agent pods' selector labels as a label selector string. */}}
{{- define "cni-bench.agentSelector" -}}
{{- printf "app.kubernetes.io/name=cni-bench-agent,app.kubernetes.io/instance=%s" .Release.Name -}}
{{- end -}}

{{- define "cni-bench.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
TLS. One mount path for both components; each mounts a Secret whose items are
projected to ca.crt, tls.crt and tls.key there.
*/}}
{{- define "cni-bench.tls.enabled" -}}
{{- if ne .Values.tls.mode "disabled" }}true{{ end -}}
{{- end -}}

{{- define "cni-bench.tls.generatedSecret" -}}
{{- printf "%s-tls" (include "cni-bench.prefix" .) -}}
{{- end -}}

{{- define "cni-bench.tls.collectorSecret" -}}
{{- if eq .Values.tls.mode "generate" -}}
{{- include "cni-bench.tls.generatedSecret" . -}}
{{- else if eq .Values.tls.mode "certManager" -}}
{{- printf "%s-tls" (include "cni-bench.collector.fullname" .) -}}
{{- else if eq .Values.tls.mode "provided" -}}
{{- required "tls.existingSecret is required when tls.mode is provided" .Values.tls.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "cni-bench.tls.agentSecret" -}}
{{- if eq .Values.tls.mode "generate" -}}
{{- include "cni-bench.tls.generatedSecret" . -}}
{{- else if eq .Values.tls.mode "certManager" -}}
{{- printf "%s-tls" (include "cni-bench.agent.fullname" .) -}}
{{- else if eq .Values.tls.mode "provided" -}}
{{- .Values.tls.existingAgentSecret | default (include "cni-bench.tls.collectorSecret" .) -}}
{{- end -}}
{{- end -}}

{{/* The generated Secret holds both certificates; the agent's are under client.*. */}}
{{- define "cni-bench.tls.agentCertKey" -}}
{{- if eq .Values.tls.mode "generate" }}client.crt{{ else }}tls.crt{{ end -}}
{{- end -}}

{{- define "cni-bench.tls.agentKeyKey" -}}
{{- if eq .Values.tls.mode "generate" }}client.key{{ else }}tls.key{{ end -}}
{{- end -}}

{{- define "cni-bench.tls.dir" -}}/etc/cni-bench/tls{{- end -}}

{{/* REST bearer token. */}}
{{- define "cni-bench.rest.tokenSecret" -}}
{{- .Values.rest.existingTokenSecret | default (printf "%s-rest-token" (include "cni-bench.prefix" .)) -}}
{{- end -}}

{{- define "cni-bench.rest.tokenKey" -}}
{{- if .Values.rest.existingTokenSecret }}{{ .Values.rest.existingTokenSecretKey }}{{ else }}token{{ end -}}
{{- end -}}

{{- define "cni-bench.rest.tokenDir" -}}/etc/cni-bench/rest{{- end -}}

{{/* Ports the binaries bind (CNI_BENCH_GRPC_LISTEN, CNI_BENCH_HTTP_PORT). */}}
{{- define "cni-bench.grpcPort" -}}7070{{- end -}}
{{- define "cni-bench.httpPort" -}}8080{{- end -}}

{{/* Subject for every collector binding. */}}
{{- define "cni-bench.collector.subject" -}}
- kind: ServiceAccount
  name: {{ include "cni-bench.collector.fullname" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}
