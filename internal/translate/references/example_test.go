package references_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/references"
)

// A Deployment moves into the hosted control plane's namespace: its ConfigMap follows it
// under a prefixed name, its serving certificate is an alias of an existing HCP Secret, and
// its ServiceAccount is in no plan.
func ExampleRewriteReferences() {
	obj := yaml.MustParse(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: oauth-openshift
  namespace: openshift-authentication
spec:
  template:
    spec:
      serviceAccountName: oauth-openshift
      containers:
      - name: oauth-openshift
        envFrom:
        - configMapRef:
            name: audit
      volumes:
      - name: serving-cert
        secret:
          secretName: v4-0-config-system-serving-cert
`)
	renames := references.RenameMap{
		{Kind: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "openshift-authentication", Name: "audit"}: {
			Namespace: "clusters-example", Name: "openshift-authentication--audit",
		},
		{Kind: schema.GroupKind{Kind: "Secret"}, Namespace: "openshift-authentication", Name: "v4-0-config-system-serving-cert"}: {
			Namespace: "clusters-example", Name: "oauth-server-crt",
		},
	}

	changed, dangling, err := references.RewriteReferences(obj, renames)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range changed {
		fmt.Println("changed:", c)
	}
	for _, d := range dangling {
		fmt.Println("dangling:", d)
	}
	fmt.Print(obj.MustString())
	// Output:
	// changed: spec.template.spec.containers[0].envFrom[0].configMapRef.name: audit -> openshift-authentication--audit
	// changed: spec.template.spec.volumes[0].secret.secretName: v4-0-config-system-serving-cert -> oauth-server-crt
	// dangling: spec.template.spec.serviceAccountName: ServiceAccount openshift-authentication/oauth-openshift
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   name: oauth-openshift
	//   namespace: openshift-authentication
	// spec:
	//   template:
	//     spec:
	//       serviceAccountName: oauth-openshift
	//       containers:
	//       - name: oauth-openshift
	//         envFrom:
	//         - configMapRef:
	//             name: openshift-authentication--audit
	//       volumes:
	//       - name: serving-cert
	//         secret:
	//           secretName: oauth-server-crt
}
