package serviceca

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/topolayer/topolayer/internal/translate/transform"
)

const (
	ns     = "clusters-example"
	caPEM  = "-----BEGIN CERTIFICATE-----\nHyperShift's\n-----END CERTIFICATE-----\n"
	placer = "topolayer"
)

// configMap is a ConfigMap of ns; annotations and managers as given.
func configMap(name string, annotations map[string]string, data map[string]string, managers ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations}, Data: data}
	for _, m := range managers {
		cm.ManagedFields = append(cm.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: m, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{}}}`)},
		})
	}
	return cm
}

var (
	asksBeta  = map[string]string{AnnotationInjectBeta: "true"}
	asksAlpha = map[string]string{AnnotationInjectAlpha: "true"}
	source    = configMap("oauth-master-ca-bundle", nil, map[string]string{"ca.crt": caPEM}, "control-plane-operator")
)

func TestInject(t *testing.T) {
	for name, tc := range map[string]struct {
		objects []runtime.Object
		names   []string
		want    []Filled
		// data is each ConfigMap's data afterwards.
		data    map[string]map[string]string
		wantErr error
	}{
		"an operand's ConfigMap asking (alpha) is filled": {
			objects: []runtime.Object{source, configMap("a--service-ca", asksAlpha, nil, placer)},
			names:   []string{"a--service-ca"},
			want:    []Filled{{Name: "a--service-ca", Written: true}},
			data:    map[string]map[string]string{"a--service-ca": {KeyServiceCA: caPEM}},
		},
		"beta, with other keys kept": {
			objects: []runtime.Object{source, configMap("b", asksBeta, map[string]string{"other": "x"}, placer)},
			names:   []string{"b"},
			want:    []Filled{{Name: "b", Written: true}},
			data:    map[string]map[string]string{"b": {"other": "x", KeyServiceCA: caPEM}},
		},
		"the ask withheld from the management cluster's own service-ca operator (the hypershift profile): filled": {
			objects: []runtime.Object{source, configMap("k", map[string]string{transform.AnnotationWithheld: `{"annotations":{"` + AnnotationInjectBeta + `":"true"}}`}, nil, placer)},
			names:   []string{"k"},
			want:    []Filled{{Name: "k", Written: true}},
			data:    map[string]map[string]string{"k": {KeyServiceCA: caPEM}},
		},
		"already filled: nothing written": {
			objects: []runtime.Object{source, configMap("c", asksBeta, map[string]string{KeyServiceCA: caPEM}, placer)},
			names:   []string{"c", "c"},
			want:    []Filled{{Name: "c"}},
		},
		"a stale bundle is replaced": {
			objects: []runtime.Object{source, configMap("d", asksBeta, map[string]string{KeyServiceCA: "old"}, placer)},
			names:   []string{"d"},
			want:    []Filled{{Name: "d", Written: true}},
			data:    map[string]map[string]string{"d": {KeyServiceCA: caPEM}},
		},
		"not asking, asking with another value, missing: untouched": {
			objects: []runtime.Object{source, configMap("e", nil, nil, placer), configMap("f", map[string]string{AnnotationInjectBeta: "false"}, nil, placer)},
			names:   []string{"e", "f", "missing"},
			data:    map[string]map[string]string{"e": nil, "f": nil},
		},
		"HyperShift's own ConfigMap (not placed by topolayer) is never written": {
			objects: []runtime.Object{source, configMap("g", asksBeta, nil, "control-plane-operator")},
			names:   []string{"g", "oauth-master-ca-bundle"},
			data:    map[string]map[string]string{"g": nil},
		},
		"no bundle: a clear error, nothing written": {
			objects: []runtime.Object{configMap("h", asksBeta, nil, placer)},
			names:   []string{"h"},
			wantErr: ErrNoBundle,
			data:    map[string]map[string]string{"h": nil},
		},
		"an empty bundle is none": {
			objects: []runtime.Object{configMap("oauth-master-ca-bundle", nil, map[string]string{"ca.crt": ""}), configMap("i", asksBeta, nil, placer)},
			names:   []string{"i"},
			wantErr: ErrNoBundle,
		},
		"no candidate asks: the bundle is not even read": {
			objects: []runtime.Object{configMap("j", nil, nil, placer)},
			names:   []string{"j"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objects...)
			in := New(cs, Options{Namespace: ns, ConfigMap: "oauth-master-ca-bundle", Key: "ca.crt", PlacedBy: placer})
			got, err := in.Inject(t.Context(), tc.names)
			if !errors.Is(err, tc.wantErr) || (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("Inject: %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Filled{}, "ResourceVersion")); diff != "" {
				t.Errorf("Inject (-want +got):\n%s", diff)
			}
			for cmName, want := range tc.data {
				cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), cmName, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, cm.Data); diff != "" {
					t.Errorf("%s data (-want +got):\n%s", cmName, diff)
				}
			}
		})
	}
}
