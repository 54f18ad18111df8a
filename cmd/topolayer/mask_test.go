package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func secret(data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "namespace": "ns"},
		"data":     data,
	}}
}

// TestDiffMasksSecrets: a Secret's diff keeps its keys and shows which values changed,
// never a value, as kubectl diff does; a ConfigMap's is not masked.
func TestDiffMasksSecrets(t *testing.T) {
	live := secret(map[string]any{"same": "c2FtZQ==", "changed": "b2xk", "removed": "Z29uZQ=="})
	would := secret(map[string]any{"same": "c2FtZQ==", "changed": "bmV3", "added": "YWRkZWQ="})
	d, err := objectDiff("cluster:secrets/ns/s", live, would)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-  changed: '*** (before)'", "+  changed: '*** (after)'", "+  added: '***'", "-  removed: '***'", "   same: '***'"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	for _, value := range []string{"c2FtZQ==", "b2xk", "bmV3", "YWRkZWQ=", "Z29uZQ=="} {
		if strings.Contains(d, value) {
			t.Errorf("diff shows the value %s:\n%s", value, d)
		}
	}
	if live.Object["data"].(map[string]any)["changed"] != "b2xk" {
		t.Error("masking changed the live object")
	}
	created, err := objectDiff("cluster:secrets/ns/s", nil, secret(map[string]any{"k": "dg=="}))
	if err != nil || !strings.Contains(created, "+  k: '***'") || strings.Contains(created, "dg==") {
		t.Errorf("a created Secret's diff (%v):\n%s", err, created)
	}
	cmDiff, err := objectDiff("cluster:configmaps/ns/x", cm(map[string]any{"a": "1"}, "1"), cm(map[string]any{"a": "2"}, "2"))
	if err != nil || !strings.Contains(cmDiff, `+  a: "2"`) {
		t.Errorf("a ConfigMap's diff is masked (%v):\n%s", err, cmDiff)
	}
}
