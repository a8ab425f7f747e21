{{/* The release's full name, cut to the 63 characters a name may have. */}}
{{- define "sqlfs.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "sqlfs.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sqlfs.labels" -}}
{{ include "sqlfs.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "sqlfs.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sqlfs.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "sqlfs.authSecret" -}}
{{- default (printf "%s-auth" (include "sqlfs.fullname" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{- define "sqlfs.replicaSecret" -}}
{{- default (printf "%s-replica" (include "sqlfs.fullname" .)) .Values.replica.existingSecret -}}
{{- end -}}
