package kubeschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFileName(t *testing.T) {
	for _, c := range []struct{ group, version, kind, want string }{
		{"", "v1", "Service", "service-v1.json"},
		{"apps", "v1", "StatefulSet", "statefulset-apps-v1.json"},
		{"coordination.k8s.io", "v1", "Lease", "lease-coordination-v1.json"},
		{"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebinding-rbac-v1.json"},
		{"policy", "v1", "PodDisruptionBudget", "poddisruptionbudget-policy-v1.json"},
	} {
		if got := FileName(c.group, c.version, c.kind); got != c.want {
			t.Errorf("FileName(%q, %q, %q) = %q, want %q", c.group, c.version, c.kind, got, c.want)
		}
	}
}

const doc = `{"definitions": {
  "a.Thing": {
    "x-kubernetes-group-version-kind": [{"group": "things.example.com", "version": "v2", "kind": "Thing"}],
    "properties": {
      "spec": {"$ref": "#/definitions/a.Spec"},
      "labels": {"type": "object", "additionalProperties": {"type": "string"}}
    }
  },
  "a.Spec": {"properties": {
    "port": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
    "children": {"type": "array", "items": {"$ref": "#/definitions/a.Spec"}},
    "inline": {"properties": {"x": {"type": "string"}}}
  }},
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
  "a.Unused": {"properties": {"y": {"type": "string"}}}
}}`

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	files, err := Convert([]byte(doc), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"thing-things-v2.json"}) {
		t.Fatalf("wrote %v, want only the kind's file", files)
	}
	b, err := os.ReadFile(filepath.Join(dir, files[0]))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Ref         string                    `json:"$ref"`
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Ref != "#/definitions/a.Thing" {
		t.Errorf("$ref %q", got.Ref)
	}
	var names []string
	for n := range got.Definitions {
		names = append(names, n)
	}
	slices.Sort(names)
	// The recursive a.Spec is held once; a.Unused is not reached.
	if want := []string{"a.Spec", "a.Thing", "io.k8s.apimachinery.pkg.util.intstr.IntOrString"}; !slices.Equal(names, want) {
		t.Errorf("definitions %v, want %v", names, want)
	}
	thing, spec := got.Definitions["a.Thing"], got.Definitions["a.Spec"]
	if thing["additionalProperties"] != false || spec["additionalProperties"] != false {
		t.Errorf("objects with properties must refuse others: %v / %v", thing["additionalProperties"], spec["additionalProperties"])
	}
	inline := spec["properties"].(map[string]any)["inline"].(map[string]any)
	if inline["additionalProperties"] != false {
		t.Error("a nested object with properties is not strict")
	}
	labels := thing["properties"].(map[string]any)["labels"].(map[string]any)
	if labels["additionalProperties"].(map[string]any)["type"] != "string" {
		t.Errorf("a map's value schema was replaced: %v", labels)
	}
	ios := got.Definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
	if !strings.Contains(string(mustJSON(t, ios["oneOf"])), `"number"`) {
		t.Errorf("IntOrString must take a number too: %v", ios)
	}
}

func TestConvertRefusesBadInput(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":       "{",
		"no definitions": `{"paths": {}}`,
		"dangling $ref":  `{"definitions": {"a.K": {"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "K"}], "properties": {"s": {"$ref": "#/definitions/a.Missing"}}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Convert([]byte(in), t.TempDir()); err == nil {
				t.Error("Convert accepted it")
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
