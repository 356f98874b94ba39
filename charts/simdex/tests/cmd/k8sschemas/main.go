// Command k8sschemas turns the Kubernetes OpenAPI v2 document (swagger.json
// of the k8s.io/kubernetes module) into the strict JSON schemas kubeconform
// reads offline, one file per kind named as kubeconform's default template
// expects ({{.ResourceKind}}{{.KindSuffix}}.json, e.g.
// statefulset-apps-v1.json). It does what openapi2jsonschema does, without
// Python or network access: objects with properties reject unknown fields,
// and IntOrString and Quantity accept numbers as well as strings.
//
//	go run ./cmd/k8sschemas -swagger .../api/openapi-spec/swagger.json -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	swagger := flag.String("swagger", "", "Kubernetes swagger.json")
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if *swagger == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: k8sschemas -swagger FILE -out DIR")
		os.Exit(2)
	}
	if err := run(*swagger, *out); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschemas:", err)
		os.Exit(1)
	}
}

func run(swaggerPath, out string) error {
	b, err := os.ReadFile(swaggerPath)
	if err != nil {
		return fmt.Errorf("read swagger: %w", err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("parse swagger %s: %w", swaggerPath, err)
	}
	if len(doc.Definitions) == 0 {
		return fmt.Errorf("swagger %s has no definitions", swaggerPath)
	}
	defs := make(map[string]any, len(doc.Definitions))
	for name, d := range doc.Definitions {
		switch name {
		case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
			defs[name] = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
		case "io.k8s.apimachinery.pkg.api.resource.Quantity":
			defs[name] = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
		default:
			defs[name] = strict(d)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// The definitions go once into _definitions.json, which each kind's
	// file refers to, as openapi2jsonschema lays them out.
	data, err := json.Marshal(map[string]any{"definitions": defs})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "_definitions.json"), data, 0o644); err != nil {
		return err
	}
	n := 0
	for name, d := range doc.Definitions {
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			group, _ := gvk["group"].(string)
			version, _ := gvk["version"].(string)
			kind, _ := gvk["kind"].(string)
			if kind == "" || version == "" {
				continue
			}
			suffix := "-" + version
			if group != "" {
				suffix = "-" + strings.ToLower(strings.Split(group, ".")[0]) + "-" + version
			}
			schema := map[string]any{
				"$schema": "http://json-schema.org/draft-07/schema#",
				"$ref":    "_definitions.json#/definitions/" + name,
			}
			data, err := json.Marshal(schema)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, strings.ToLower(kind)+suffix+".json"), data, 0o644); err != nil {
				return err
			}
			n++
		}
	}
	fmt.Fprintf(os.Stderr, "k8sschemas: wrote %d schemas to %s\n", n, out)
	return nil
}

// strict copies a schema, making every object with properties reject
// unknown fields, recursively.
func strict(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x)+1)
		for k, e := range x {
			m[k] = strict(e)
		}
		if _, ok := x["properties"]; ok {
			if _, set := x["additionalProperties"]; !set {
				m["additionalProperties"] = false
			}
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = strict(e)
		}
		return s
	}
	return v
}
