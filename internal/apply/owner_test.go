package apply

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// TestOwnedByHostedControlPlane: the management target of an HCP namespace makes its
// HostedControlPlane an owner of what it writes whole in that namespace, Events aside.
func TestOwnedByHostedControlPlane(t *testing.T) {
	const hcp = "clusters-example"
	for _, tc := range []struct {
		name            string
		action          contract.Action
		namespace, kind string
		hcpNamespace    string
		want            bool
	}{
		{"an Apply in the HCP namespace", contract.ActionApply, hcp, "Deployment", hcp, true},
		{"a Create", contract.ActionCreate, hcp, "ConfigMap", hcp, true},
		{"an Update", contract.ActionUpdate, hcp, "Secret", hcp, true},
		{"a Patch: the object is the live one's", contract.ActionPatch, hcp, "Deployment", hcp, false},
		{"a status write", contract.ActionApplyStatus, hcp, "Deployment", hcp, false},
		{"a Delete", contract.ActionDelete, hcp, "Deployment", hcp, false},
		{"an Event", contract.ActionCreate, hcp, "Event", hcp, false},
		{"another namespace", contract.ActionApply, "openshift-config", "ConfigMap", hcp, false},
		{"a cluster-scoped object", contract.ActionApply, "", "ClusterRole", hcp, false},
		{"a target without an HCP namespace (the guest's)", contract.ActionApply, "", "ConfigMap", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OwnedByHostedControlPlane(WritesWhole(tc.action), tc.namespace, tc.kind, tc.hcpNamespace); got != tc.want {
				t.Errorf("OwnedByHostedControlPlane = %v, want %v", got, tc.want)
			}
		})
	}
}
