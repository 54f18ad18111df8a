package translate_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// TestServiceAccountTokens: a Secret of type kubernetes.io/service-account-token names the
// operator's own account as it lands (renamed in hosted, as written standalone) and maps back
// to the standalone name; one that names another account (an HCP account such as the
// control-plane-operator's), or a patch of the annotation, is refused with the field named.
func TestServiceAccountTokens(t *testing.T) {
	const ns, hcp = "openshift-sample", "clusters-example"
	token := func(account string) contract.Mutation {
		return policyMutation(contract.ActionApply, "", "secrets", ns, "token",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: "+ns+", annotations: {kubernetes.io/service-account.name: "+account+"}}\ntype: kubernetes.io/service-account-token\n")
	}
	serviceAccount := policyMutation(contract.ActionApply, "", "serviceaccounts", ns, "sample",
		"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sample, namespace: "+ns+"}\n")
	declaresSA := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
		{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: ns, Name: "token"},
		{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "serviceaccounts"}, Namespace: ns, Name: "sample"},
	}}}
	patch := policyMutation(contract.ActionPatch, "", "secrets", ns, "token", `{"metadata":{"annotations":{"kubernetes.io/service-account.name":"control-plane-operator"}}}`)
	patch.Metadata.PatchType = contract.PatchTypeMerge
	patchOf := func(patchType, body string) contract.Mutation {
		m := policyMutation(contract.ActionPatch, "", "secrets", ns, "token", body)
		m.Metadata.PatchType = patchType
		return m
	}
	hosted := func(declared *contract.OutputResources) translate.Engine {
		e := profileEngine(hcp, &policy.Policy{})
		e.Declared = declared
		return e
	}
	standalone := func(declared *contract.OutputResources) translate.Engine {
		return standaloneEngine(declared, &policy.Policy{})
	}
	for _, tc := range []struct {
		name      string
		engine    translate.Engine
		ms        []contract.Mutation
		wantName  string // the annotation as written; "" when refused
		wantError string
	}{
		{"hosted: its own account, written by the plan", hosted(nil), []contract.Mutation{serviceAccount, token("sample")}, ns + "--sample", ""},
		{"hosted: its own account, declared", hosted(declaresSA), []contract.Mutation{token("sample")}, ns + "--sample", ""},
		{"hosted: the control-plane-operator's account", hosted(declaresSA), []contract.Mutation{token("control-plane-operator")}, "", "names service account serviceaccounts openshift-sample/control-plane-operator, which is not the operator's"},
		{"hosted: no account named", hosted(nil), []contract.Mutation{token("\"\"")}, "", "must name its service account"},
		{"hosted: a patch of the annotation", hosted(nil), []contract.Mutation{patch}, "", "metadata.annotations[kubernetes.io/service-account.name]: a Patch that sets or removes"},
		{"hosted: a JSON patch spelling the annotation with a pointer escape", hosted(nil), []contract.Mutation{patchOf(contract.PatchTypeJSON,
			`[{"op":"add","path":"/metadata/annotations/kubernetes.io~1service-account.name","value":"control-plane-operator"}]`)}, "", "a Patch that sets or removes the Secret's type or that annotation"},
		{"hosted: a merge patch spelling it with an escaped slash", hosted(nil), []contract.Mutation{patchOf(contract.PatchTypeMerge,
			`{"metadata":{"annotations":{"kubernetes.io\/service-account.name":"control-plane-operator"}}}`)}, "", "a Patch that sets or removes"},
		{"hosted: a strategic merge patch replacing every annotation", hosted(nil), []contract.Mutation{patchOf(contract.PatchTypeStrategicMerge,
			`{"metadata":{"annotations":{"$patch":"replace","kubernetes.io/service-account.name":"control-plane-operator"}}}`)}, "", "a Patch that sets or removes"},
		{"hosted: a patch making a Secret a token Secret", hosted(nil), []contract.Mutation{patchOf(contract.PatchTypeMerge, `{"type":"kubernetes.io/service-account-token"}`)}, "", "a Patch that sets or removes"},
		{"hosted: a JSON patch moving an annotation into place", hosted(nil), []contract.Mutation{patchOf(contract.PatchTypeJSON,
			`[{"op":"move","from":"/metadata/annotations/x","path":"/metadata/annotations/kubernetes.io~1service-account.name"}]`)}, "", "a Patch that sets or removes"},
		{"hosted: a patch of data only", hosted(nil), []contract.Mutation{patchOf(contract.PatchTypeMerge, `{"data":{"a":"Yg=="}}`)}, "(patch)", ""},
		{"standalone: its own account", standalone(declaresSA), []contract.Mutation{token("sample")}, "sample", ""},
		{"standalone: another account", standalone(declaresSA), []contract.Mutation{token("default")}, "", "which is not the operator's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.engine.Plan(&contract.OutputDir{Mutations: tc.ms})
			for _, e := range p.Entries {
				if e.Source.Resource != "secrets" {
					continue
				}
				if tc.wantError != "" {
					if e.Disposition != routing.Rejected || e.Rule != policy.RuleServiceAccountToken || !strings.Contains(e.Reason, tc.wantError) {
						t.Errorf("%s: %s by %s: %s; want refused by %s naming %q", e.Source, e.Disposition, e.Rule, e.Reason, policy.RuleServiceAccountToken, tc.wantError)
					}
					continue
				}
				if e.Disposition != routing.Apply {
					t.Fatalf("%s: %s by %s: %s", e.Source, e.Disposition, e.Rule, e.Reason)
				}
				if tc.wantName == "(patch)" {
					continue // a patch has no final object to read
				}
				if got := e.Object.GetAnnotations()[check.AnnotationServiceAccountName]; got != tc.wantName {
					t.Errorf("final annotation %q, want %q", got, tc.wantName)
				}
				body, err := yaml.Parse(string(contracttest.Bytes(t, e.Mutation)))
				if err != nil {
					t.Fatal(err)
				}
				if got := body.GetAnnotations()[check.AnnotationServiceAccountName]; got != tc.wantName {
					t.Errorf("written annotation %q, want %q", got, tc.wantName)
				}
				// Read back, the Secret names the account as the operator wrote it.
				back, _, _, err := translate.Inverse{Names: tc.engine.Names}.Object(e.Target.Cluster, e.Target.Identity, body)
				if err != nil {
					t.Fatal(err)
				}
				if got := back.GetAnnotations()[check.AnnotationServiceAccountName]; got != "sample" {
					t.Errorf("mapped back: annotation %q, want sample", got)
				}
			}
		})
	}
}
