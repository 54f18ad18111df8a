package namespaces_test

import (
	"fmt"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// benchIdentities are standalone identities of the shapes the hosted mapping handles:
// namespaced (readable and hashed names), cluster-scoped shadows, RBAC and Namespaces.
func benchIdentities() []contract.Identity {
	var ids []contract.Identity
	for i := range 100 {
		ids = append(ids,
			contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-authentication", Name: fmt.Sprintf("v4-0-config-system-cliconfig-%d", i)},
			contract.Identity{Version: "v1", Resource: "services", Namespace: "openshift-oauth-apiserver", Name: fmt.Sprintf("a-rather-long-service-name-that-needs-a-hash-%d", i)},
			contract.Identity{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: fmt.Sprintf("cluster-%d", i)},
			contract.Identity{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Name: fmt.Sprintf("system:openshift:foo-%d", i)},
			contract.Identity{Version: "v1", Resource: "namespaces", Name: fmt.Sprintf("openshift-ns-%d", i)},
		)
	}
	return ids
}

// BenchmarkHostedToTarget maps standalone identities to the management cluster.
func BenchmarkHostedToTarget(b *testing.B) {
	h := namespaces.Hosted{Namespace: "clusters-example"}
	ids := benchIdentities()
	b.ReportAllocs()
	for b.Loop() {
		for _, id := range ids {
			if _, err := h.ToTarget(routing.ClusterManagement, id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(ids))*float64(b.N)/b.Elapsed().Seconds(), "identities/s")
}

// BenchmarkHostedToSource maps management identities back, from names and, where the name
// is hashed, from annotations.
func BenchmarkHostedToSource(b *testing.B) {
	h := namespaces.Hosted{Namespace: "clusters-example"}
	type pair struct {
		target contract.Identity
		ann    map[string]string
	}
	var pairs []pair
	for _, id := range benchIdentities() {
		if id.Resource == "namespaces" {
			continue // absorbed: only annotations invert it
		}
		t, err := h.ToTarget(routing.ClusterManagement, id)
		if err != nil {
			b.Fatal(err)
		}
		pairs = append(pairs, pair{t, namespaces.SourceAnnotations(id)})
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pairs {
			if _, err := h.ToSource(routing.ClusterManagement, p.target, p.ann); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(pairs))*float64(b.N)/b.Elapsed().Seconds(), "identities/s")
}
