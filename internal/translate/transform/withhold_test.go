package transform_test

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
)

// withholdCA is the filter the hypershift profile runs on the management cluster.
var withholdCA = transform.Withhold{
	Labels:      []string{"config.openshift.io/inject-trusted-cabundle"},
	Annotations: []string{"service.beta.openshift.io/inject-cabundle", "service.alpha.openshift.io/serving-cert-secret-name"},
}

// TestWithhold: the keys leave the object, their values go into the record, everything else
// stays, a mapping left empty goes, and a record the operator wrote itself never survives.
func TestWithhold(t *testing.T) {
	tests := []struct {
		name, object string
		// applies is what Applies says; want is the object after the filter.
		applies bool
		want    string
	}{
		{"a label: withheld and recorded, the labels mapping gone",
			"metadata: {name: ca, labels: {config.openshift.io/inject-trusted-cabundle: 'true'}}", true,
			"metadata: {name: ca, annotations: {topolayer.dev/withheld: '{\"labels\":{\"config.openshift.io/inject-trusted-cabundle\":\"true\"}}'}}"},
		{"an annotation among others: only it goes",
			"metadata: {name: svc, annotations: {a: b, service.alpha.openshift.io/serving-cert-secret-name: cert}, labels: {app: x}}", true,
			"metadata: {name: svc, annotations: {a: b, topolayer.dev/withheld: '{\"annotations\":{\"service.alpha.openshift.io/serving-cert-secret-name\":\"cert\"}}'}, labels: {app: x}}"},
		{"both, one record",
			"metadata: {labels: {config.openshift.io/inject-trusted-cabundle: 'true'}, annotations: {service.beta.openshift.io/inject-cabundle: 'true'}}", true,
			"metadata: {annotations: {topolayer.dev/withheld: '{\"labels\":{\"config.openshift.io/inject-trusted-cabundle\":\"true\"},\"annotations\":{\"service.beta.openshift.io/inject-cabundle\":\"true\"}}'}}"},
		{"a null (a patch removing the key): removed, nothing recorded",
			"metadata: {labels: {config.openshift.io/inject-trusted-cabundle: null, app: x}}", true,
			"metadata: {labels: {app: x}}"},
		{"a record the operator wrote: dropped",
			"metadata: {annotations: {topolayer.dev/withheld: '{\"annotations\":{\"service.beta.openshift.io/inject-cabundle\":\"true\"}}', a: b}}", true,
			"metadata: {annotations: {a: b}}"},
		{"nothing to withhold: untouched",
			"metadata: {name: x, labels: {app: x}, annotations: {a: b}}", false,
			"metadata: {name: x, labels: {app: x}, annotations: {a: b}}"},
		{"metadata that is no mapping: untouched", "metadata: [1]", false, "metadata: [1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := yaml.MustParse(tc.object)
			if got := withholdCA.Applies(obj); got != tc.applies {
				t.Errorf("Applies = %v, want %v", got, tc.applies)
			}
			out, err := withholdCA.Filter([]*yaml.RNode{obj})
			if err != nil {
				t.Fatal(err)
			}
			want := yaml.MustParse(tc.want).YNode()
			if diff := cmp.Diff(yamlnode.Value(want), yamlnode.Value(out[0].YNode())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The scoped edit the engine runs makes the same object.
			again := yaml.MustParse(tc.object)
			if _, _, edit, ok := withholdCA.Scope(again.YNode()); ok {
				edit()
				if diff := cmp.Diff(yamlnode.Value(want), yamlnode.Value(again.YNode())); diff != "" {
					t.Errorf("scoped edit (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestWithheld: the record reads back; one that does not parse, or holds nothing, is none.
func TestWithheld(t *testing.T) {
	tests := []struct {
		name, record       string
		labels, annotation map[string]string
		ok                 bool
	}{
		{"labels and annotations", `{"labels":{"l":"1"},"annotations":{"a":"2"}}`, map[string]string{"l": "1"}, map[string]string{"a": "2"}, true},
		{"not JSON", `{"labels":`, nil, nil, false},
		{"values that are not strings", `{"labels":{"l":1}}`, nil, nil, false},
		{"empty", `{}`, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			labels, annotations, ok := transform.Withheld(map[string]string{transform.AnnotationWithheld: tc.record})
			if ok != tc.ok || !maps.Equal(labels, tc.labels) || !maps.Equal(annotations, tc.annotation) {
				t.Errorf("Withheld = %v, %v, %v; want %v, %v, %v", labels, annotations, ok, tc.labels, tc.annotation, tc.ok)
			}
		})
	}
	if _, _, ok := transform.Withheld(map[string]string{"other": "x"}); ok {
		t.Error("no record read as one")
	}
}

// FuzzWithheld: any record text parses or is refused without panicking, and whatever the
// filter withholds from any metadata reads back from its record.
func FuzzWithheld(f *testing.F) {
	f.Add(`{"labels":{"l":"1"}}`, "true", "cert")
	f.Add(`not json`, "", "")
	f.Add(strings.Repeat(`{"labels":`, 100), "'", "\n")
	f.Fuzz(func(t *testing.T, record, label, annotation string) {
		transform.Withheld(map[string]string{transform.AnnotationWithheld: record})
		if !utf8.ValidString(label) || !utf8.ValidString(annotation) {
			t.Skip("the API server accepts no such value")
		}
		obj, err := yaml.FromMap(map[string]any{"metadata": map[string]any{
			"labels":      map[string]any{"config.openshift.io/inject-trusted-cabundle": label, "keep": "x"},
			"annotations": map[string]any{"service.beta.openshift.io/inject-cabundle": annotation, transform.AnnotationWithheld: record},
		}})
		if err != nil {
			t.Skip()
		}
		out, err := withholdCA.Filter([]*yaml.RNode{obj})
		if err != nil {
			t.Fatal(err)
		}
		labels, annotations, ok := transform.Withheld(out[0].GetAnnotations())
		if !ok || labels["config.openshift.io/inject-trusted-cabundle"] != label || annotations["service.beta.openshift.io/inject-cabundle"] != annotation {
			t.Errorf("withheld %q and %q, read back %v, %v (%v)", label, annotation, labels, annotations, ok)
		}
		if out[0].GetLabels()["keep"] != "x" {
			t.Error("a label not withheld went")
		}
	})
}
