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
	withProfile, withoutProfile := boundedEngines(hcp)
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

// TestWritableLayerOnManagement: a container with a writable root filesystem on the shared
// management cluster writes its writable layer to its node's disk, which no emptyDir bound
// covers. Only a pod's ephemeral-storage limit does (the kubelet holds the pod's layers, logs
// and emptyDirs to it together): a pod with a writable root must have one, at most the
// allow-list's bound. hypershift/bound-scratch gives it one that covers its emptyDirs and
// 64Mi per writable container, on its first container, so that the kubelet evicts nothing
// that keeps to its volumes' bounds. Judged as it will be written, also when a patch takes
// the limit away.
func TestWritableLayerOnManagement(t *testing.T) {
	withProfile, withoutProfile := boundedEngines("clusters-example")
	deployment := func(containers string) contract.Mutation {
		return deploymentMutation("openshift-authentication", "server", "oauth", containers)
	}
	const writable = "      containers:\n      - name: server\n        image: server\n"
	const readOnly = "        securityContext: {readOnlyRootFilesystem: true}\n"
	tests := []struct {
		name      string
		engine    translate.Engine
		mutations []contract.Mutation
		refused   string
		// want are the ephemeral-storage limits of the landed pod's containers and init
		// containers, by name ("" for none).
		want map[string]string
	}{
		{"a writable root: the profile bounds the pod", withProfile, []contract.Mutation{deployment(writable)}, "",
			map[string]string{"server": "64Mi"}},
		{"its emptyDirs are covered too", withProfile, []contract.Mutation{deployment(writable + "      volumes: [{name: tmp, emptyDir: {}}, {name: shm, emptyDir: {medium: Memory}}]\n")}, "",
			map[string]string{"server": "320Mi"}}, // 64Mi and tmp's 256Mi; memory is not the node's disk
		{"an init container with a writable root: on the first container", withProfile,
			[]contract.Mutation{deployment("      initContainers: [{name: prepare, image: server}]\n" + writable + readOnly)}, "",
			map[string]string{"prepare": "", "server": "64Mi"}},
		{"every root read-only: no limit needed", withProfile, []contract.Mutation{deployment(writable + readOnly)}, "",
			map[string]string{"server": ""}},
		{"its own limit, enough: kept", withProfile, []contract.Mutation{deployment(writable + "        resources: {limits: {ephemeral-storage: 1Gi}}\n")}, "",
			map[string]string{"server": "1Gi"}},
		{"its own limit, short of its volumes: raised", withProfile,
			[]contract.Mutation{deployment(writable + "        resources: {limits: {ephemeral-storage: 10Mi}}\n      volumes: [{name: tmp, emptyDir: {sizeLimit: 1Gi}}]\n")}, "",
			map[string]string{"server": "1088Mi"}},
		{"its own limit, over the allow-list's bound", withProfile, []contract.Mutation{deployment(writable + "        resources: {limits: {ephemeral-storage: 3Gi}}\n")},
			"spec.template.spec: the pod's ephemeral-storage limit of 3Gi (its containers' resources.limits.ephemeral-storage), which bounds its writable root filesystems, is over the management cluster's bound of 2Gi", nil},
		{"not a quantity", withProfile, []contract.Mutation{deployment(writable + "        resources: {limits: {ephemeral-storage: lots}}\n")},
			`spec.template.spec.containers[0].resources.limits.ephemeral-storage: "lots" is not a quantity`, nil},
		{"placed without the profile: unbounded", withoutProfile, []contract.Mutation{deployment(writable)},
			"spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem: not true, and no container of the pod sets a positive resources.limits.ephemeral-storage", nil},
		{"a patch that takes the limit away (a patch is not transformed: judged on what it makes)", withProfile, []contract.Mutation{
			deployment(writable),
			mergePatchAfter("apps", "deployments", "openshift-authentication", "server", `{"spec": {"template": {"spec": {"containers": [{"name": "server", "image": "server"}]}}}}`),
		}, "containers[0].securityContext.readOnlyRootFilesystem: not true, and no container of the pod sets", nil},
		{"a patch that makes a read-only root writable", withProfile, []contract.Mutation{
			deployment(writable + readOnly),
			mergePatchAfter("apps", "deployments", "openshift-authentication", "server", `{"spec": {"template": {"spec": {"containers": [{"name": "server", "image": "server", "securityContext": {"readOnlyRootFilesystem": false}}]}}}}`),
		}, "containers[0].securityContext.readOnlyRootFilesystem: not true, and no container of the pod sets", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			last, landed := landsOnManagement(t, tc.engine, tc.mutations, tc.refused)
			if !landed {
				return
			}
			got := map[string]string{}
			for _, list := range []string{"initContainers", "containers"} {
				containers, _, _ := unstructured.NestedSlice(last.Object.Object, "spec", "template", "spec", list)
				for _, c := range containers {
					m := c.(map[string]any)
					limit, _, _ := unstructured.NestedString(m, "resources", "limits", "ephemeral-storage")
					got[m["name"].(string)] = limit
				}
			}
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("container %s: ephemeral-storage limit %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

// boundedEngines returns operator "op"'s hosted engines for HCP namespace hcp under the
// allow-list, stripping to Pod Security restricted: with the whole hypershift profile a user
// gets without a HostedControlPlane (hypershift/bound-scratch included), and without it.
func boundedEngines(hcp string) (withProfile, withoutProfile translate.Engine) {
	transforms, _ := hosted.Profile(hosted.ProfileHyperShift, hosted.ProfileOptions{})
	withProfile = hostedEngine(hcp, transforms...)
	withProfile.Policy = &policy.Policy{PodSecurity: policy.PodSecurityStrip}
	withProfile.Containment, withProfile.HCPNamespace = hosted.Containment(hcp), hcp
	_, withoutProfile = containedEngines(hcp)
	return withProfile, withoutProfile
}
