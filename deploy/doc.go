// Package deploy holds the Helm chart for running sqlfs hosts on
// Kubernetes (deploy/sqlfs) and its test: `go test -tags integration
// ./deploy/` lints and renders the chart with helm and checks every object
// with kubeconform in strict mode against the schemas of one Kubernetes
// release, generated offline by internal/kubeschema from the OpenAPI
// document in the k8s.io/kubernetes module. make test-integration runs it.
package deploy
