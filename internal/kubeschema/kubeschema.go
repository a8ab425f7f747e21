// Package kubeschema turns the Kubernetes API's OpenAPI v2 document
// (api/openapi-spec/swagger.json in the k8s.io/kubernetes module) into the
// strict JSON schemas kubeconform reads, so manifests are checked offline
// against exactly one API version.
//
// One file per kind and API version, named as kubeconform's
// -schema-location template '{{ .ResourceKind }}{{ .KindSuffix }}.json'
// expects (statefulset-apps-v1.json, service-v1.json,
// lease-coordination-v1.json), each standalone: the kind's definition as
// $ref plus every definition it reaches under "definitions" (recursive
// ones included, which inlining could not hold). Strict means what
// openapi2jsonschema --strict means: every object with properties allows
// no others, so a misspelled field is an error instead of being ignored.
package kubeschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const refPrefix = "#/definitions/"

// Definitions whose OpenAPI type says string but whose JSON takes a number
// too (`port: 8080` and `targetPort: api`, `cpu: 1` and `cpu: 500m`).
var numberOrString = map[string]bool{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": true,
	"io.k8s.apimachinery.pkg.api.resource.Quantity":   true,
}

type gvk struct {
	Group, Version, Kind string
}

// Convert reads the OpenAPI v2 document swagger and writes a strict schema
// for every kind it defines into dir, returning the file names written.
func Convert(swagger []byte, dir string) ([]string, error) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(swagger, &doc); err != nil {
		return nil, fmt.Errorf("kubeschema: parsing the OpenAPI document: %w", err)
	}
	if len(doc.Definitions) == 0 {
		return nil, errors.New("kubeschema: the OpenAPI document has no definitions")
	}
	defs := make(map[string]map[string]any, len(doc.Definitions))
	for name, d := range doc.Definitions {
		if numberOrString[name] {
			d = map[string]any{"description": d["description"], "oneOf": []any{
				map[string]any{"type": "string"}, map[string]any{"type": "number"},
			}}
		}
		strict(d)
		defs[name] = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("kubeschema: %w", err)
	}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	var written []string
	for _, name := range names {
		kinds, err := kindsOf(doc.Definitions[name])
		if err != nil {
			return nil, fmt.Errorf("kubeschema: %s: %w", name, err)
		}
		if len(kinds) == 0 {
			continue
		}
		reached := map[string]any{}
		if err := reach(defs, name, reached); err != nil {
			return nil, fmt.Errorf("kubeschema: %s: %w", name, err)
		}
		b, err := json.Marshal(map[string]any{"$ref": refPrefix + name, "definitions": reached})
		if err != nil {
			return nil, fmt.Errorf("kubeschema: %s: %w", name, err)
		}
		for _, k := range kinds {
			file := FileName(k.Group, k.Version, k.Kind)
			if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
				return nil, fmt.Errorf("kubeschema: %w", err)
			}
			written = append(written, file)
		}
	}
	return written, nil
}

// FileName is the file kubeconform looks for a kind in: the kind in lower
// case, then "-" and the first label of the group when it has one, then
// "-" and the version.
func FileName(group, version, kind string) string {
	suffix := "-" + strings.ToLower(version)
	if group != "" {
		first, _, _ := strings.Cut(group, ".")
		suffix = "-" + strings.ToLower(first) + suffix
	}
	return strings.ToLower(kind) + suffix + ".json"
}

func kindsOf(def map[string]any) ([]gvk, error) {
	raw, ok := def["x-kubernetes-group-version-kind"]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var kinds []gvk
	if err := json.Unmarshal(b, &kinds); err != nil {
		return nil, fmt.Errorf("x-kubernetes-group-version-kind: %w", err)
	}
	return kinds, nil
}

// strict makes every object schema below s (s included) that lists its
// properties refuse any other, as the API server's strict field
// validation does.
func strict(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		if _, set := s["additionalProperties"]; !set {
			s["additionalProperties"] = false
		}
		for _, p := range props {
			if ps, ok := p.(map[string]any); ok {
				strict(ps)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := s[key].(map[string]any); ok {
			strict(sub)
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok {
			for _, item := range list {
				if sub, ok := item.(map[string]any); ok {
					strict(sub)
				}
			}
		}
	}
}

// reach adds name and every definition its schema refers to, directly or
// not, to out.
func reach(defs map[string]map[string]any, name string, out map[string]any) error {
	if _, done := out[name]; done {
		return nil
	}
	d, ok := defs[name]
	if !ok {
		return fmt.Errorf("$ref to %s, which is not defined", name)
	}
	out[name] = d
	var refs []string
	collectRefs(d, &refs)
	for _, r := range refs {
		if err := reach(defs, r, out); err != nil {
			return err
		}
	}
	return nil
}

func collectRefs(v any, refs *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok {
			*refs = append(*refs, strings.TrimPrefix(r, refPrefix))
		}
		for _, sub := range x {
			collectRefs(sub, refs)
		}
	case []any:
		for _, sub := range x {
			collectRefs(sub, refs)
		}
	}
}
