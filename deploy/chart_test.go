//go:build integration

package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sqlfs/sqlfs/internal/kubeschema"
	"github.com/sqlfs/sqlfs/internal/testenv"
)

// KubernetesVersion is the release whose API the chart is checked
// against: its module's api/openapi-spec/swagger.json, through the Go
// module proxy.
const KubernetesVersion = "v1.37.2"

const chart = "sqlfs"

// valueSets are the configurations rendered and checked: the defaults,
// replication with a Secret made by the chart, a fleet, and everything
// supplied from outside (existing Secrets, no RBAC, no PDB).
var valueSets = map[string][]string{
	"defaults": nil,
	"replica": {"--set", "replica.enabled=true", "--set", "replica.url=s3://b/p?endpoint=https://s3.example.com&forcePathStyle=true",
		"--set", "replica.accessKeyID=AK", "--set", "replica.secretAccessKey=SK", "--set", "auth.token=t0ken"},
	"fleet": {"--set", "replica.enabled=true", "--set", "replica.url=s3://b/p", "--set", "replica.accessKeyID=AK",
		"--set", "replica.secretAccessKey=SK", "--set", "fleet.enabled=true", "--set", "fleet.leaseURL=s3://b/leases"},
	"external": {"--set", "replica.enabled=true", "--set", "replica.existingSecret=my-replica", "--set", "auth.existingSecret=my-auth",
		"--set", "fleet.enabled=true", "--set", "rbac.create=false", "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=sqlfs",
		"--set", "podDisruptionBudget.enabled=false", "--set", "persistence.storageClassName=fast",
		"--set", "host.extraArgs={--quota=10GiB}", "--set", "resources.requests.cpu=2"},
}

func TestChartLint(t *testing.T) {
	helm := tool(t, "helm")
	for name, args := range valueSets {
		t.Run(name, func(t *testing.T) {
			run(t, helm, append([]string{"lint", "--strict", chart}, args...)...)
		})
	}
}

// TestChartSchemas renders the chart with each value set and checks every
// object against the API's schemas, strictly.
func TestChartSchemas(t *testing.T) {
	helm, schemas := tool(t, "helm"), schemaDir(t)
	for name, args := range valueSets {
		t.Run(name, func(t *testing.T) {
			out := render(t, helm, args...)
			got := kubeconform(t, schemas, out)
			if got.err != nil {
				t.Fatalf("kubeconform: %v\n%s", got.err, got.out)
			}
			if !strings.Contains(got.out, "Invalid: 0, Errors: 0, Skipped: 0") {
				t.Errorf("kubeconform did not check every object:\n%s", got.out)
			}
			t.Logf("kubeconform: %s", strings.TrimSpace(got.out))
			kinds := []string{"StatefulSet", "Service"}
			if name != "external" {
				kinds = append(kinds, "Secret", "ServiceAccount", "Role", "RoleBinding", "PodDisruptionBudget")
			}
			for _, k := range kinds {
				if !bytes.Contains(out, []byte("\nkind: "+k+"\n")) {
					t.Errorf("no %s rendered", k)
				}
			}
			if replica := bytes.Contains(out, []byte("--replica=$(SQLFS_REPLICA_URL)")); replica != (name != "defaults") {
				t.Errorf("--replica on the command line: %v, want it only with replica.enabled", replica)
			}
			fleet := name == "fleet" || name == "external"
			if got := bytes.Contains(out, []byte("--fleet-lease=$(SQLFS_FLEET_LEASE_URL)")) && bytes.Contains(out, []byte("--advertise-addr=$(SQLFS_HOST_ADDR)")); got != fleet {
				t.Errorf("--fleet-lease and --advertise-addr on the command line: %v, want them only with fleet.enabled", got)
			}
		})
	}
}

// TestChartSchemasCatchTypos: the check fails on a misspelled field, at
// the top of an object and deep in the pod template; kubeconform without
// strict schemas would pass both.
func TestChartSchemasCatchTypos(t *testing.T) {
	helm, schemas := tool(t, "helm"), schemaDir(t)
	out := render(t, helm)
	for _, c := range []struct{ field, typo string }{
		{"serviceName", "servicName"},                          // StatefulSet spec
		{"readinessProbe", "readinesProbe"},                    // a container in the pod template
		{"publishNotReadyAddresses", "publishNotReadyAddress"}, // the headless Service
	} {
		field := []byte(" " + c.field + ":")
		if !bytes.Contains(out, field) {
			t.Fatalf("the rendered chart has no field %s", c.field)
		}
		bad := bytes.Replace(out, field, []byte(" "+c.typo+":"), 1)
		got := kubeconform(t, schemas, bad)
		if got.err == nil || !strings.Contains(got.out, c.typo) {
			t.Errorf("kubeconform passed %s or did not name it (err %v):\n%s", c.typo, got.err, got.out)
		}
	}
}

// TestChartRefusesIncomplete: replication or a fleet without their
// settings is an error at render time, naming what to set.
func TestChartRefusesIncomplete(t *testing.T) {
	helm := tool(t, "helm")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "replica.enabled=true"}, "replica.url is required"},
		{[]string{"--set", "fleet.enabled=true"}, "fleet.enabled needs replica.enabled"},
		{[]string{"--set", "fleet.enabled=true", "--set", "replica.enabled=true", "--set", "replica.url=u",
			"--set", "replica.accessKeyID=a", "--set", "replica.secretAccessKey=s"}, "fleet.leaseURL is required"},
	} {
		cmd := exec.Command(helm, append([]string{"template", "rel", chart}, c.args...)...)
		cmd.Env = helmEnv(t)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("helm template %v: err %v, want %q\n%s", c.args, err, c.want, out)
		}
	}
}

func render(t *testing.T, helm string, args ...string) []byte {
	t.Helper()
	return run(t, helm, append([]string{"template", "rel", chart, "--namespace", "agents"}, args...)...)
}

type result struct {
	out string
	err error
}

func kubeconform(t *testing.T, schemas string, manifests []byte) result {
	t.Helper()
	cmd := exec.Command(tool(t, "kubeconform"), "-strict", "-summary",
		"-schema-location", filepath.Join(schemas, "{{ .ResourceKind }}{{ .KindSuffix }}.json"), "-")
	cmd.Stdin = bytes.NewReader(manifests)
	out, err := cmd.CombinedOutput()
	return result{string(out), err}
}

var (
	schemasOnce sync.Once
	schemas     string
	schemasErr  error
)

// schemaDir converts the API's OpenAPI document once per test binary.
func schemaDir(t *testing.T) string {
	t.Helper()
	schemasOnce.Do(func() {
		var info struct{ Dir, Error string }
		cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+KubernetesVersion)
		cmd.Dir = os.TempDir() // outside this module: its go.mod does not require Kubernetes
		out, err := cmd.Output()
		if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Error != "" {
			schemasErr = &downloadError{err, info.Error, out}
			return
		}
		swagger, err := os.ReadFile(filepath.Join(info.Dir, "api", "openapi-spec", "swagger.json"))
		if err != nil {
			schemasErr = err
			return
		}
		dir, err := os.MkdirTemp("", "kubeschema-")
		if err != nil {
			schemasErr = err
			return
		}
		schemas = dir
		_, schemasErr = kubeschema.Convert(swagger, dir)
	})
	if schemasErr != nil {
		t.Fatalf("schemas of Kubernetes %s: %v", KubernetesVersion, schemasErr)
	}
	return schemas
}

type downloadError struct {
	err error
	msg string
	out []byte
}

func (e *downloadError) Error() string {
	return "go mod download: " + strings.TrimSpace(e.msg+" "+errString(e.err)+" "+string(e.out))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if schemas != "" {
		os.RemoveAll(schemas)
	}
	os.Exit(code)
}

// tool finds a checker make tools-integration installs.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	testenv.Require(t, "this test needs "+name+" (make tools-integration installs it into $(TOOLS)/bin)", err)
	return path
}

// helmEnv keeps helm's caches and configuration in the test's directory.
func helmEnv(t *testing.T) []string {
	dir := t.TempDir()
	return append(os.Environ(), "HELM_CACHE_HOME="+dir+"/cache", "HELM_CONFIG_HOME="+dir+"/config", "HELM_DATA_HOME="+dir+"/data")
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = helmEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}
