package translate_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// TestPatchEffects: a patch on the management cluster is judged by the object it makes,
// whatever its spelling: applied to the object the plan writes earlier (offline), or to the
// live object, as the server's dry-run returns it (AdmitPatched, here the patch applied to
// the object the earlier entry lands as, with the cluster IP a server assigns a Service). Both
// paths give the same verdict, naming the rule and the field.
func TestPatchEffects(t *testing.T) {
	const ns, hcp = "openshift-sample", "clusters-example"
	engine := profileEngine(hcp, &policy.Policy{})
	engine.Containment = hosted.Containment(hcp)
	engine.HCPNamespace, engine.HostedControlPlane = hcp, "example"
	whole := map[string]contract.Mutation{
		"configmaps": policyMutation(contract.ActionApply, "", "configmaps", ns, "settings",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "+ns+", labels: {tier: web}}\ndata: {a: b}\n"),
		"services": policyMutation(contract.ActionApply, "", "services", ns, "web",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: "+ns+"}\nspec: {ports: [{name: https, port: 443}, {name: http, port: 80}]}\n"),
		"deployments": policyMutation(contract.ActionApply, "apps", "deployments", ns, "web",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: "+ns+"}\n"+
				"spec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"+
				"      volumes: [{name: config, configMap: {name: settings}}]\n"+
				"      containers: [{name: web, image: web, securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: {drop: [ALL]}, seccompProfile: {type: RuntimeDefault}}}]\n"),
		"secrets": policyMutation(contract.ActionApply, "", "secrets", ns, "creds",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: "+ns+"}\ndata: {a: Yg==}\n"),
	}
	tests := []struct {
		name            string
		resource        string // of whole: the object patched
		patchType, body string
		// rule is the refusing rule, "" when the patch lands; reason a part of the refusal.
		rule, reason string
		// live is the rule of the live path when it differs: the plan refuses what it
		// cannot judge without the earlier entry.
		live string
	}{
		{name: "a JSON patch setting a reserved label spelled with ~1", resource: "configmaps", patchType: contract.PatchTypeJSON,
			body: `[{"op":"add","path":"/metadata/labels/hypershift.openshift.io~1need-management-kas-access","value":"true"}]`,
			rule: policy.RuleReservedLabels, reason: "metadata.labels[hypershift.openshift.io/need-management-kas-access]"},
		{name: "a merge patch setting a reserved label spelled with an escaped slash", resource: "configmaps", patchType: contract.PatchTypeMerge,
			body: `{"metadata":{"labels":{"hypershift.openshift.io\/control-plane-component":"etcd"}}}`,
			rule: policy.RuleReservedLabels, reason: "hypershift.openshift.io/control-plane-component=etcd is reserved"},
		{name: "a merge patch labelling a Service app: kube-apiserver", resource: "services", patchType: contract.PatchTypeMerge,
			body: `{"metadata":{"labels":{"app":"kube-apiserver"}}}`, rule: policy.RuleReservedLabels, reason: "metadata.labels[app]: app=kube-apiserver is reserved"},
		{name: "a strategic merge replacing every label ($patch: replace) with app: etcd", resource: "configmaps", patchType: contract.PatchTypeStrategicMerge,
			body: `{"metadata":{"labels":{"$patch":"replace","app":"etcd"}}}`, rule: policy.RuleReservedLabels, reason: "app=etcd is reserved"},
		{name: "a YAML strategic merge setting a reserved label", resource: "secrets", patchType: contract.PatchTypeStrategicMerge,
			body: "metadata:\n  labels:\n    hypershift.openshift.io/hosted-control-plane: " + hcp + "x\n", rule: policy.RuleReservedLabels, reason: "hypershift.openshift.io/hosted-control-plane"},
		{name: "a JSON patch turning a Service into NodePort", resource: "services", patchType: contract.PatchTypeJSON,
			body: `[{"op":"add","path":"/spec/type","value":"NodePort"}]`, rule: policy.RuleManagementFields, reason: "spec.type: NodePort"},
		{name: "a strategic merge turning a Service into LoadBalancer, keeping keys with $retainKeys", resource: "services", patchType: contract.PatchTypeStrategicMerge,
			body: `{"spec":{"$retainKeys":["ports","type"],"type":"LoadBalancer"}}`, rule: policy.RuleManagementFields, reason: "spec.type: LoadBalancer"},
		{name: "a merge patch adding externalIPs", resource: "services", patchType: contract.PatchTypeMerge,
			body: `{"spec":{"externalIPs":["192.0.2.10"]}}`, rule: policy.RuleManagementFields, reason: "spec.externalIPs"},
		{name: "a strategic merge fixing a node port on one port (merged by port)", resource: "services", patchType: contract.PatchTypeStrategicMerge,
			body: `{"spec":{"ports":[{"port":80,"nodePort":30080}]}}`, rule: policy.RuleManagementFields, reason: "spec.ports[1].nodePort"},
		{name: "a strategic merge adding a projected serviceAccountToken volume to a Deployment", resource: "deployments", patchType: contract.PatchTypeStrategicMerge,
			body: `{"spec":{"template":{"spec":{"volumes":[{"name":"token","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}}]}}}}`,
			rule: policy.RuleManagementFields, reason: "projected.sources[0].serviceAccountToken: a pod on the management cluster may not mount"},
		{name: "a JSON patch scaling a Deployment over the bound", resource: "deployments", patchType: contract.PatchTypeJSON,
			body: `[{"op":"replace","path":"/spec/replicas","value":1000}]`, rule: policy.RuleManagementFields, reason: "spec.replicas: 1000"},
		{name: "a strategic merge making a Deployment's pods privileged", resource: "deployments", patchType: contract.PatchTypeStrategicMerge,
			body: `{"spec":{"template":{"spec":{"hostPID":true}}}}`, rule: policy.RulePodSecurity, reason: "hostPID=true"},
		{name: "a merge patch adding the service-account-token annotation, escaped slash", resource: "secrets", patchType: contract.PatchTypeMerge,
			body: `{"metadata":{"annotations":{"kubernetes.io\/service-account.name":"control-plane-operator"}},"type":"kubernetes.io/service-account-token"}`,
			rule: policy.RuleServiceAccountToken, reason: "names service account " + hcp + "/control-plane-operator",
			live: policy.RuleServiceAccountToken},
		// What lands.
		{name: "a merge patch of data", resource: "configmaps", patchType: contract.PatchTypeMerge, body: `{"data":{"a":"c"}}`},
		{name: "a JSON patch removing a label, ~1 in another", resource: "configmaps", patchType: contract.PatchTypeJSON,
			body: `[{"op":"remove","path":"/metadata/labels/tier"},{"op":"add","path":"/metadata/annotations","value":{"example.com~1x":"y"}}]`},
		{name: "a strategic merge deleting a port ($patch: delete)", resource: "services", patchType: contract.PatchTypeStrategicMerge,
			body: `{"spec":{"ports":[{"port":80,"$patch":"delete"}]}}`},
		{name: "a strategic merge scaling a Deployment within the bound", resource: "deployments", patchType: contract.PatchTypeStrategicMerge,
			body: `{"spec":{"replicas":2}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := whole[tc.resource]
			patch := base
			patch.Metadata.Action, patch.Metadata.PatchType, patch.Body = contract.ActionPatch, tc.patchType, []byte(tc.body)
			expect := func(path, rule, reason string, e plans.Entry, refusal *check.Refusal) {
				t.Helper()
				got, why := "", ""
				if e.Disposition == routing.Rejected {
					got, why = e.Rule, e.Reason
				} else if refusal != nil {
					got, why = refusal.Rule, refusal.Reason
				}
				if got != rule || !strings.Contains(why, reason) {
					t.Errorf("%s: %s %q; want %q naming %q", path, e.Disposition, got+": "+why, rule, reason)
				}
			}

			// Offline: the plan writes the object first.
			p := engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{base, patch}})
			if len(p.Entries) != 2 || p.Entries[0].Disposition != routing.Apply {
				t.Fatalf("plan: %+v", p.Entries)
			}
			expect("offline", tc.rule, tc.reason, p.Entries[1], nil)

			// Live: the plan patches an object it does not write; the target asks the server
			// what the patch makes of the live one (here, the object as it landed).
			landed := p.Entries[0].Object.DeepCopy()
			if tc.resource == "services" { // the server assigned it: not the operator's
				if err := unstructured.SetNestedField(landed.Object, "10.0.0.7", "spec", "clusterIP"); err != nil {
					t.Fatal(err)
				}
			}
			lp := engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{patch}})
			e := lp.Entries[0]
			var refusal *check.Refusal
			if e.Disposition == routing.Apply {
				made, err := check.PatchObject(landed, patch.Body, tc.patchType)
				if err != nil {
					t.Fatal(err)
				}
				if err := engine.AdmitPatched(e, landed, made); err != nil {
					refusal = err.(*check.Refusal)
				}
			}
			rule, reason := tc.rule, tc.reason
			if tc.live != "" {
				rule, reason = tc.live, "does not write earlier"
			}
			expect("live", rule, reason, e, refusal)
		})
	}
}
