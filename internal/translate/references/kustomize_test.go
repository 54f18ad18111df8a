package references_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	kusttest_test "sigs.k8s.io/kustomize/api/testutils/kusttest"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/references"
)

// kustomizeExclusions are the entries of kustomize's default nameReference configuration
// that the reference table leaves out on purpose, keyed "Referenced <- Referrer path".
var kustomizeExclusions = map[string]string{
	"ConfigMap <- Ingress metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap": "" +
		"ingress-nginx annotation: specific to one ingress controller, whose values may be " +
		"namespace/name; OpenShift control planes are reached through Routes",
	"Secret <- Ingress metadata/annotations/ingress.kubernetes.io\\/auth-secret":       "ingress-nginx annotation (see the ConfigMap one)",
	"Secret <- Ingress metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret": "ingress-nginx annotation (see the ConfigMap one)",
	"Secret <- Ingress metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret": "" +
		"ingress-nginx annotation (see the ConfigMap one)",
	"Secret <- StorageClass parameters/secretName": "" +
		"provisioner-specific parameter whose Secret namespace is another parameter; " +
		"StorageClasses are guest-cluster objects that topolayer does not rename",
	"Secret <- StorageClass parameters/adminSecretName": "provisioner-specific parameter (see parameters/secretName)",
	"Secret <- StorageClass parameters/userSecretName":  "provisioner-specific parameter (see parameters/secretName)",
	"Secret <- StorageClass parameters/secretRef":       "provisioner-specific parameter (see parameters/secretName)",
	"Secret <- PersistentVolume spec/azureFile/secretName": "" +
		"the Secret's namespace is spec.azureFile.secretNamespace, a sibling that is no object " +
		"reference; PersistentVolumes are guest-cluster objects that topolayer does not rename",
	"Secret <- serving.knative.dev/Service spec/template/spec/containers/env/valueFrom/secretKeyRef/name": "" +
		"Knative Serving is no kind topolayer supports",
}

// kustomizeNameReferences reads kustomize's default nameReference configuration, as its
// test harness writes it.
func kustomizeNameReferences(t *testing.T) []kustomizeNameReference {
	t.Helper()
	th := kusttest_test.MakeHarness(t)
	const file = "/legacy-configs.yaml"
	th.WriteLegacyConfigs(file)
	data, err := th.GetFSys().ReadFile(file)
	if err != nil {
		t.Fatalf("read kustomize's default configuration: %v", err)
	}
	var cfg struct {
		NameReference []kustomizeNameReference `yaml:"nameReference"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("parse kustomize's default configuration: %v", err)
	}
	if len(cfg.NameReference) == 0 {
		t.Fatal("kustomize's default configuration has no nameReference entries")
	}
	return cfg.NameReference
}

type kustomizeNameReference struct {
	resid.Gvk  `yaml:",inline"`
	FieldSpecs []types.FieldSpec `yaml:"fieldSpecs"`
}

// refCovers says whether our field spec reaches every field kustomize's does: the same kind,
// a group that is ours or that kustomize leaves open, any version or kustomize's, and the
// same path, or ours ends one step before kustomize's "/name" because we read the whole
// object reference (its name, and its namespace or kind where it carries them).
func refCovers(ours, theirs types.FieldSpec) bool {
	return ours.Kind == theirs.Kind &&
		(ours.Group == theirs.Group || theirs.Group == "") &&
		(ours.Version == "" || ours.Version == theirs.Version) &&
		(ours.Path == theirs.Path || ours.Path+"/name" == theirs.Path)
}

func refKey(referenced string, fs types.FieldSpec) string {
	kind := fs.Kind
	if fs.Group != "" {
		kind = fs.Group + "/" + fs.Kind // tells a Knative Service from a core one
	}
	return fmt.Sprintf("%s <- %s %s", referenced, kind, fs.Path)
}

// TestReferenceTableCoversKustomize proves that, for every kind kustomize's default
// nameReference configuration lists as referenced, every field kustomize rewrites is in
// our table, unless kustomizeExclusions says why not.
func TestReferenceTableCoversKustomize(t *testing.T) {
	ours := map[string][]types.FieldSpec{} // by referenced kind
	for _, row := range references.ReferenceTable() {
		ours[row.Kind.Kind] = append(ours[row.Kind.Kind], row.FieldSpecs...)
	}

	var missing, missingKinds []string
	usedExclusions := map[string]bool{}
	compared := 0
	for _, theirs := range kustomizeNameReferences(t) {
		// Referenced kinds are matched by kind alone: kustomize's groups are loose
		// (IngressClass says "networking.k8s.io/v1").
		mine, supported := ours[theirs.Kind]
		if !supported {
			missingKinds = append(missingKinds, theirs.Kind)
			continue
		}
		for _, fs := range theirs.FieldSpecs {
			compared++
			key := refKey(theirs.Kind, fs)
			if _, excluded := kustomizeExclusions[key]; excluded {
				usedExclusions[key] = true
				continue
			}
			if !slices.ContainsFunc(mine, func(o types.FieldSpec) bool { return refCovers(o, fs) }) {
				missing = append(missing, fmt.Sprintf("%s (group %q, version %q)", key, fs.Group, fs.Version))
			}
		}
	}
	t.Logf("compared %d field specs of kustomize's nameReference configuration, %d excluded", compared, len(usedExclusions))
	slices.Sort(missing)
	missing = slices.Compact(missing) // kustomize lists Ingress spec/tls/secretName twice
	if len(missingKinds) > 0 {
		t.Errorf("kustomize has references to kinds the table does not list:\n  %s", strings.Join(missingKinds, "\n  "))
	}
	if len(missing) > 0 {
		t.Errorf("the table misses %d of kustomize's name references (add them, or exclude them with a reason):\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
	for key := range kustomizeExclusions {
		if !usedExclusions[key] {
			t.Errorf("exclusion %q is not in kustomize's configuration any more: remove it", key)
		}
	}
}

// TestReferenceTableWellFormed checks what the rewrite relies on: every row names a
// kind and its resource, every field spec a kind and a path, and no field twice.
func TestReferenceTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range references.ReferenceTable() {
		if row.Kind.Kind == "" || row.Resource == "" || len(row.FieldSpecs) == 0 {
			t.Errorf("row %v: kind, resource and field specs are required", row.Kind)
		}
		if seen[row.Kind.String()] {
			t.Errorf("row %v: listed twice", row.Kind)
		}
		seen[row.Kind.String()] = true
		for _, fs := range row.FieldSpecs {
			if fs.Kind == "" || fs.Path == "" || fs.CreateIfNotPresent {
				t.Errorf("row %v: field spec %v: a referrer kind and a path are required, create is not allowed", row.Kind, fs)
			}
			key := row.Kind.String() + " <- " + fs.String()
			if seen[key] {
				t.Errorf("row %v: field spec %v listed twice", row.Kind, fs)
			}
			seen[key] = true
		}
	}
}

// TestReferenceTableIsACopy checks that callers cannot change the table the rewrite uses.
func TestReferenceTableIsACopy(t *testing.T) {
	a := references.ReferenceTable()
	a[0].FieldSpecs[0].Path = "changed"
	a[0].Kind.Kind = "changed"
	if b := references.ReferenceTable(); b[0].FieldSpecs[0].Path == "changed" || b[0].Kind.Kind == "changed" {
		t.Fatal("ReferenceTable returned the table itself, not a copy")
	}
}
