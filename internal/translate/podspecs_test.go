package translate_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// TestPodSpecsFoundGenerically: the pod specs of every pod-bearing object placed on the
// management cluster are found by package podspec, not by a list of workload kinds: a
// ReplicationController's, a PodTemplate's, a custom resource's at any depth. With their kinds
// allowed for the operator, the Pod Security check, the projected-token refusal, the replicas
// bound and the reserved labels refuse them, naming the field; by default the strip, the
// guest identity and the selector scope change them as they change a Deployment.
func TestPodSpecsFoundGenerically(t *testing.T) {
	const ns = attackerNamespace
	obj := attackerObject
	gadget := func(rest string) contract.Mutation {
		return obj("example.com", "gadgets", "Gadget", "g", rest)
	}
	hostile := "{hostPID: true, containers: [{name: c, image: i, securityContext: {privileged: true}}]}"
	allow := func(podSecurity string) string {
		return "policy:\n  podSecurity: " + podSecurity + "\n  operators:\n  - name: attacker\n    management:\n      kinds:\n" +
			"      - {group: \"\", resource: replicationcontrollers}\n      - {group: \"\", resource: podtemplates}\n" +
			"      - {group: apps, resource: replicasets}\n      - {group: example.com, resource: gadgets}\n"
	}
	patch := policyMutation(contract.ActionPatch, "example.com", "gadgets", ns, "g", `{"spec":{"template":{"spec":{"hostPID":true}}}}`)
	patch.Metadata.PatchType = contract.PatchTypeMerge
	deep := gadget("spec: " + strings.Repeat("{a: ", podspec.MaxDepth) + "1" + strings.Repeat("}", podspec.MaxDepth) + "\n")

	tests := []struct {
		name, config string
		mutation     contract.Mutation
		rule, reason string
	}{
		{"a privileged ReplicationController", allow("reject"), obj("", "replicationcontrollers", "ReplicationController", "rc",
			"spec: {replicas: 1, selector: {a: b}, template: {metadata: {labels: {a: b}}, spec: "+hostile+"}}\n"), policy.RulePodSecurity, "spec.template.spec violates Pod Security"},
		{"a privileged PodTemplate", allow("reject"), obj("", "podtemplates", "PodTemplate", "pt", "template: {spec: "+hostile+"}\n"),
			policy.RulePodSecurity, "template.spec violates Pod Security"},
		{"a privileged ReplicaSet", allow("reject"), obj("apps", "replicasets", "ReplicaSet", "rs",
			"spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: "+hostile+"}}\n"), policy.RulePodSecurity, "spec.template.spec violates Pod Security"},
		{"a custom resource's privileged template", allow("reject"), gadget("spec: {template: {spec: " + hostile + "}}\n"),
			policy.RulePodSecurity, "spec.template.spec violates Pod Security \"restricted\": host namespaces (hostPID=true)"},
		{"a custom resource's privileged pod spec in a list", allow("reject"), gadget("spec: {jobs: [{name: a}, {podSpec: " + hostile + "}]}\n"),
			policy.RulePodSecurity, "spec.jobs[1].podSpec violates Pod Security"},
		{"a custom resource's projected token", allow("strip"), gadget("spec: {template: {spec: {containers: [{name: c, image: i}], volumes: [{name: t, projected: {sources: [{serviceAccountToken: {path: t}}]}}]}}}\n"),
			policy.RuleManagementFields, "spec.template.spec.volumes[0].projected.sources[0].serviceAccountToken"},
		{"a custom resource's replicas over the bound", allow("strip"), gadget("spec: {replicas: 100, template: {spec: {containers: [{name: c, image: i}]}}}\n"),
			policy.RuleManagementFields, "spec.replicas: 100 is over the management cluster's bound of 3"},
		{"a custom resource's pods labelled app: etcd", allow("strip"), gadget("spec: {template: {metadata: {labels: {app: etcd}}, spec: {containers: [{name: c, image: i}]}}}\n"),
			policy.RuleReservedLabels, "spec.template.metadata.labels[app]: app=etcd is reserved"},
		// Offline, a patch of an object the plan does not write is left to the live admission,
		// which judges what the server makes of it (AdmitPatched: pod specs found the same way).
		{"a patch of a custom resource is left to the live admission", allow("strip"), patch, "", ""},
		{"a custom resource too deep to search", allow("strip"), deep, guestidentity.Rule, "spec.a.a.a.a.a.a.a...: nested over 100 levels: too deep or too large to search for pod specs"},
		{"a custom resource without a pod spec lands", allow("reject"), gadget("spec: {size: 3, containers: [{name: a}]}\n"), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := planOne(t, tc.config, tc.mutation)
			switch {
			case tc.rule == "" && e.Disposition != routing.Apply:
				t.Errorf("%s by %s: %s; want it applied", e.Disposition, e.Rule, e.Reason)
			case tc.rule != "" && (e.Disposition != routing.Rejected || e.Rule != tc.rule || !strings.Contains(e.Reason, tc.reason)):
				t.Errorf("%s by %s: %s; want rejected by %s naming %q", e.Disposition, e.Rule, e.Reason, tc.rule, tc.reason)
			}
		})
	}

	t.Run("a custom resource's template is stripped, scoped and acts as its guest identity", func(t *testing.T) {
		e := planOne(t, allow("strip"), gadget("spec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"+
			"    spec: {hostPID: true, volumes: [{name: root, hostPath: {path: /}}], containers: [{name: c, image: i, securityContext: {privileged: true}}]}\n"))
		if e.Disposition != routing.Apply || e.Object == nil {
			t.Fatalf("%s by %s: %s; want it applied", e.Disposition, e.Rule, e.Reason)
		}
		o := e.Object.Object
		if _, found, _ := unstructured.NestedFieldNoCopy(o, "spec", "template", "spec", "hostPID"); found {
			t.Error("spec.template.spec.hostPID is left")
		}
		volumes, _, _ := unstructured.NestedSlice(o, "spec", "template", "spec", "volumes")
		for i, v := range volumes {
			if m, _ := v.(map[string]any); m["hostPath"] != nil {
				t.Errorf("spec.template.spec.volumes[%d]: the hostPath volume is left", i)
			}
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(o, "spec", "template", "spec", "containers"); !found {
			t.Error("spec.template.spec.containers is gone")
		}
		containers, _, _ := unstructured.NestedSlice(o, "spec", "template", "spec", "containers")
		if c, _ := containers[0].(map[string]any); c != nil {
			if p, _, _ := unstructured.NestedBool(c, "securityContext", "privileged"); p {
				t.Error("the container is left privileged")
			}
		}
		if v, _, _ := unstructured.NestedBool(o, "spec", "template", "spec", "automountServiceAccountToken"); v {
			t.Error("the template mounts the management API token")
		}
		if got, _, _ := unstructured.NestedString(o, "spec", "template", "metadata", "labels", namespaces.LabelNamespace); got != ns {
			t.Errorf("template label %s = %q, want %q", namespaces.LabelNamespace, got, ns)
		}
		if got, _, _ := unstructured.NestedString(o, "spec", "selector", "matchLabels", namespaces.LabelNamespace); got != ns {
			t.Errorf("selector %s = %q, want %q", namespaces.LabelNamespace, got, ns)
		}
	})
}

// attackerNamespace is the namespace of the attacker operator's objects.
const attackerNamespace = "openshift-attacker"

// attackerObject is an Apply of the attacker operator's object of kind (in group, at version
// v1) named name in attackerNamespace, its body rest after the type and metadata.
func attackerObject(group, resource, kind, name, rest string) contract.Mutation {
	apiVersion := "v1"
	if group != "" {
		apiVersion = group + "/v1"
	}
	return policyMutation(contract.ActionApply, group, resource, attackerNamespace, name,
		"apiVersion: "+apiVersion+"\nkind: "+kind+"\nmetadata: {name: "+name+", namespace: "+attackerNamespace+"}\n"+rest)
}

// planOne plans one mutation of the attacker operator with the hosted configuration extended
// by cfg, and returns its entry.
func planOne(t *testing.T, cfg string, m contract.Mutation) plans.Entry {
	t.Helper()
	c, err := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n" +
		"  hosted: {namespace: clusters-example, hostedControlPlane: example}\n" + cfg))
	if err != nil {
		t.Fatal(err)
	}
	engine, err := topology.Engine(c, "attacker", nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{m}})
	for _, e := range plan.Entries {
		if e.Source.Name == m.Identity().Name && e.Source.Resource == m.Identity().Resource {
			return e
		}
	}
	t.Fatalf("no entry for %s in %+v", m.Identity(), plan.Entries)
	return plans.Entry{}
}
