package translate_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/policy"
)

// TestScratchOnManagement: a pod on the shared management cluster may not fill its node's
// disk (or memory) through a scratch volume: every emptyDir is bounded as it will be
// written (hypershift/bound-scratch gives one without a sizeLimit the default, more for the
// audit log it keeps), and the pod's limits together stay under the allow-list's bound,
// which the configuration may widen for one operator.
func TestScratchOnManagement(t *testing.T) {
	const hcp = "clusters-example"
	transforms, _ := hosted.Profile(hosted.ProfileHyperShift, hosted.ProfileOptions{})
	withProfile := hostedEngine(hcp, transforms...)
	withProfile.Policy = &policy.Policy{PodSecurity: policy.PodSecurityStrip}
	_, withoutProfile := containedEngines(hcp)
	withProfile.Containment, withProfile.HCPNamespace = hosted.Containment(hcp), hcp
	widened := withProfile
	big := resource.MustParse("200Gi")
	widened.Policy = &policy.Policy{PodSecurity: policy.PodSecurityStrip, Management: &policy.ManagementAllowance{MaxScratch: &big}}
	deployment := func(args, volumes string) contract.Mutation {
		return deploymentMutation("openshift-authentication", "server", "oauth",
			"      containers:\n      - name: server\n        image: server\n        args: "+args+"\n"+
				"        volumeMounts: [{name: audit-dir, mountPath: /var/log/oauth-server}]\n"+
				"      volumes: "+volumes+"\n")
	}
	const rotated = `["--audit-log-path=/var/log/oauth-server/audit.log --audit-log-maxsize=100 --audit-log-maxbackup=10"]`
	tests := []struct {
		name      string
		engine    translate.Engine
		mutations []contract.Mutation
		// refused is part of the reason of the last entry; "" means every entry lands.
		refused string
		// want are the sizeLimits of the landed pod's volumes, by name.
		want map[string]string
	}{
		{"an emptyDir: the default bound", withProfile, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {}}, {name: shm, emptyDir: {medium: Memory}}]")}, "",
			map[string]string{"audit-dir": "256Mi", "shm": "256Mi"}},
		{"a host path that becomes the pod's own, holding a rotated audit log: the log's files and the default", withProfile,
			[]contract.Mutation{deployment(rotated, "[{name: audit-dir, hostPath: {path: /var/log/oauth-server}}]")}, "",
			map[string]string{"audit-dir": "1356Mi"}},
		{"an audit log whose backups are all kept: the default bounds it", withProfile,
			[]contract.Mutation{deployment(`["--audit-log-path=/var/log/oauth-server/audit.log", "--audit-log-maxsize=100"]`, "[{name: audit-dir, emptyDir: {}}]")}, "",
			map[string]string{"audit-dir": "256Mi"}},
		{"its own bound, under the allow-list's: kept", withProfile, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {sizeLimit: 1Gi}}]")}, "",
			map[string]string{"audit-dir": "1Gi"}},
		{"its own bound, over the allow-list's", withProfile, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {sizeLimit: 100Gi}}]")},
			"emptyDir sizeLimits add up to 100Gi, over the management cluster's bound of 2Gi", nil},
		{"bounds that together are over it", withProfile, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {sizeLimit: 1600Mi}}, {name: b, emptyDir: {}}, {name: c, emptyDir: {}}]")},
			"add up to 2112Mi", nil}, // 1600Mi and two defaults of 256Mi
		{"widened for the operator: lands", widened, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {sizeLimit: 100Gi}}]")}, "",
			map[string]string{"audit-dir": "100Gi"}},
		{"not a quantity", withProfile, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {sizeLimit: lots}}]")}, `"lots" is not a positive quantity`, nil},
		{"placed without the profile: unbounded", withoutProfile, []contract.Mutation{deployment("[]", "[{name: audit-dir, emptyDir: {}}]")},
			"spec.template.spec.volumes[0].emptyDir.sizeLimit: unset", nil},
		{"a patch that adds an unbounded volume (a patch is not transformed: judged on what it makes)", withProfile, []contract.Mutation{
			deployment("[]", "[{name: audit-dir, emptyDir: {}}]"),
			mergePatchAfter("apps", "deployments", "openshift-authentication", "server", `{"spec": {"template": {"spec": {"volumes": [{"name": "audit-dir", "emptyDir": {}}]}}}}`),
		}, "sizeLimit: unset", nil},
		{"a patch that takes the bound away, judged on what it makes", withProfile, []contract.Mutation{
			deployment("[]", "[{name: audit-dir, emptyDir: {}}]"),
			mergePatchAfter("apps", "deployments", "openshift-authentication", "server", `{"spec": {"template": {"spec": {"volumes": [{"name": "audit-dir", "emptyDir": {"sizeLimit": null}}]}}}}`),
		}, "sizeLimit: unset", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			last, landed := landsOnManagement(t, tc.engine, tc.mutations, tc.refused)
			if !landed {
				return
			}
			volumes, _, _ := unstructured.NestedSlice(last.Object.Object, "spec", "template", "spec", "volumes")
			got := map[string]string{}
			for _, v := range volumes {
				m := v.(map[string]any)
				limit, _, _ := unstructured.NestedString(m, "emptyDir", "sizeLimit")
				got[m["name"].(string)] = limit
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("volume %s: sizeLimit %q, want %q", name, got[name], want)
				}
			}
		})
	}
}
