package translate_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/policy"
)

// TestClaimsOnManagement: a claim on the shared management cluster asks for bounded
// storage, as it will be written: a PersistentVolumeClaim and each volume claim template of
// a StatefulSet (each, and together: what one replica claims) request at most the
// allow-list's bound (8Gi, HyperShift's own etcd volume),
// with or without the profile, also when a patch grows it; the configuration may widen the
// bound for one operator.
func TestClaimsOnManagement(t *testing.T) {
	const ns, hcp = "openshift-sample", "clusters-example"
	withProfile, withoutProfile := containedEngines(hcp)
	widened := withProfile
	big := resource.MustParse("100Gi")
	widened.Policy = &policy.Policy{PodSecurity: policy.PodSecurityStrip, Management: &policy.ManagementAllowance{MaxClaim: &big}}
	pvc := func(resources string) contract.Mutation {
		m := policyMutation(contract.ActionApply, "", "persistentvolumeclaims", ns, "data",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: "+ns+"}\n"+
				"spec:\n  accessModes: [ReadWriteOnce]\n  resources: "+resources+"\n")
		m.Class = contract.ClassManagement
		return m
	}
	statefulSet := func(resources string) contract.Mutation {
		m := policyMutation(contract.ActionApply, "apps", "statefulsets", ns, "db",
			"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: "+ns+"}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: db}}\n  serviceName: db\n"+
				"  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: db, securityContext: {readOnlyRootFilesystem: true}, resources: {limits: {ephemeral-storage: 64Mi}}}]\n"+
				"  volumeClaimTemplates:\n  - metadata: {name: wal}\n    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"+
				"  - metadata: {name: data}\n    spec: {accessModes: [ReadWriteOnce], resources: "+resources+"}\n")
		m.Class = contract.ClassManagement
		return m
	}
	for _, tc := range []landsCase{
		{"a claim within the bound", withProfile, []contract.Mutation{pvc("{requests: {storage: 8Gi}}")}, ""},
		{"a claim within the bound, without the profile", withoutProfile, []contract.Mutation{pvc("{requests: {storage: 1Gi}, limits: {storage: 2Gi}}")}, ""},
		{"a claim of 10Ti", withProfile, []contract.Mutation{pvc("{requests: {storage: 10Ti}}")},
			"spec.resources.requests.storage: 10Ti is over the management cluster's bound of 8Gi for one claim (policy.operators[].management.maxClaim)"},
		{"a claim of 10Ti, without the profile", withoutProfile, []contract.Mutation{pvc("{requests: {storage: 10Ti}}")}, "spec.resources.requests.storage: 10Ti"},
		{"a claim of 10Ti, in bytes", withProfile, []contract.Mutation{pvc("{requests: {storage: 10995116277760}}")}, "spec.resources.requests.storage: 10995116277760"},
		{"a limit over the bound", withProfile, []contract.Mutation{pvc("{requests: {storage: 1Gi}, limits: {storage: 1Ti}}")}, "spec.resources.limits.storage: 1Ti"},
		{"a claim without a request", withProfile, []contract.Mutation{pvc("{}")}, "spec.resources.requests.storage: unset"},
		{"a claim of no quantity", withProfile, []contract.Mutation{pvc("{requests: {storage: lots}}")}, `spec.resources.requests.storage: "lots" is not a positive quantity`},
		{"a claim the configuration widened the bound for", widened, []contract.Mutation{pvc("{requests: {storage: 50Gi}}")}, ""},
		{"a StatefulSet's claim templates within the bound", withProfile, []contract.Mutation{statefulSet("{requests: {storage: 7Gi}}")}, ""},
		{"a StatefulSet's claim templates, each within the bound, over it together", withProfile, []contract.Mutation{statefulSet("{requests: {storage: 8Gi}}")},
			"spec.volumeClaimTemplates: the claims of one replica request 9Gi together, over the management cluster's bound of 8Gi"},
		{"a StatefulSet claiming 10Ti per replica", withProfile, []contract.Mutation{statefulSet("{requests: {storage: 10Ti}}")},
			"spec.volumeClaimTemplates[1].spec.resources.requests.storage: 10Ti"},
		{"a patch growing a claim to 10Ti (judged on what it makes)", withProfile, []contract.Mutation{
			pvc("{requests: {storage: 1Gi}}"),
			func() contract.Mutation {
				m := mergePatchAfter("", "persistentvolumeclaims", ns, "data", `{"spec": {"resources": {"requests": {"storage": "10Ti"}}}}`)
				m.Class = contract.ClassManagement
				return m
			}(),
		}, "spec.resources.requests.storage: 10Ti"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			landsOnManagement(t, tc.engine, tc.mutations, tc.refused)
		})
	}
}
