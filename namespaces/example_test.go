package namespaces_test

import (
	"errors"
	"fmt"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

func ExampleHosted() {
	h := namespaces.Hosted{
		Namespace: "clusters-example",
		Aliases: []namespaces.Alias{{
			Source: contract.Identity{Resource: "secrets", Namespace: "openshift-authentication", Name: "v4-0-config-system-serving-cert"},
			Name:   "oauth-server-crt",
		}},
	}
	if err := h.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	for _, src := range []contract.Identity{
		{Version: "v1", Resource: "configmaps", Namespace: "openshift-authentication", Name: "audit"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Name: "system:openshift:foo"},
		{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"},
		{Version: "v1", Resource: "secrets", Namespace: "openshift-authentication", Name: "v4-0-config-system-serving-cert"},
		{Version: "v1", Resource: "configmaps", Namespace: "team--a", Name: "cfg"},
	} {
		target, err := h.ToTarget(routing.ClusterManagement, src)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s\n  -> %s\n", src, target)

		back, err := h.ToSource(routing.ClusterManagement, target, nil)
		if errors.Is(err, namespaces.ErrNeedsAnnotations) {
			// A hashed name: the object's annotations say what it is.
			back, err = h.ToSource(routing.ClusterManagement, target, namespaces.SourceAnnotations(src))
			fmt.Print("  (from annotations)")
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("  <- %s\n", back)
	}
	// Output:
	// configmaps openshift-authentication/audit
	//   -> configmaps clusters-example/openshift-authentication--audit
	//   <- configmaps openshift-authentication/audit
	// clusterroles.rbac.authorization.k8s.io system:openshift:foo
	//   -> roles.rbac.authorization.k8s.io clusters-example/--system:openshift:foo
	//   <- clusterroles.rbac.authorization.k8s.io system:openshift:foo
	// authentications.operator.openshift.io cluster
	//   -> authentications.operator.openshift.io.shadow.topolayer.dev clusters-example/cluster
	//   <- authentications.operator.openshift.io cluster
	// secrets openshift-authentication/v4-0-config-system-serving-cert
	//   -> secrets clusters-example/oauth-server-crt
	//   <- secrets openshift-authentication/v4-0-config-system-serving-cert
	// configmaps team--a/cfg
	//   -> configmaps clusters-example/team-a-cfg-a791ecf49bf1bca2
	//   (from annotations)  <- configmaps team--a/cfg
}
