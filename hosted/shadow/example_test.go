package shadow_test

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/hosted/shadow"
)

// The shadow of a cluster-scoped operator CR's CRD: same kind and schema, Namespaced, in the
// shadow group, without the short names that would clash with the original's.
func ExampleCRD() {
	var orig apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.operator.example.com
  annotations:
    release.openshift.io/feature-set: Default
spec:
  group: operator.example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget, shortNames: [wd]}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations: [{rule: "self.metadata.name == 'cluster'"}]
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources: {status: {}}
`), &orig); err != nil {
		panic(err)
	}

	s, err := shadow.CRD(&orig)
	if err != nil {
		panic(err)
	}
	if err := shadow.Validate(s); err != nil {
		panic(err)
	}
	fmt.Println(s.Name)
	fmt.Println(s.Spec.Scope, s.Spec.Names.Kind, s.Spec.Names.ShortNames, s.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations[0].Rule)
	fmt.Println(s.Labels[shadow.LabelShadowOf], len(s.Annotations))
	// Output:
	// widgets.operator.example.com.shadow.topolayer.dev
	// Namespaced Widget [] self.metadata.name == 'cluster'
	// widgets.operator.example.com 1
}
