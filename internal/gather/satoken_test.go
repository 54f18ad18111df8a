package gather

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// managementPlacement reads every input from the management cluster, where the name mapping
// puts it.
type managementPlacement struct{ hostedPlacement }

func (p managementPlacement) Locate(_ *contract.OutputResources, id contract.Identity) (Location, error) {
	t, err := p.names.ToTarget(routing.ClusterManagement, id)
	return Location{Cluster: routing.ClusterManagement, Identity: t}, err
}

// TestGatherServiceAccountTokens: gather hands a service-account-token Secret back only when
// its account is the operator's own renamed one (declared in its output-resources) and
// topolayer wrote the Secret for this operator (apply wrote it only for an account that was
// the operator's), with the annotation mapped back; a token of an HCP account (the
// control-plane-operator's), of an undeclared account, to an operator without
// output-resources, or a Secret someone else wrote is skipped, with a warning.
func TestGatherServiceAccountTokens(t *testing.T) {
	names := hostedNames(t)
	const ns = "openshift-sample"
	sa := check.ServiceAccountID(ns, "sample")
	saTarget, err := names.ToTarget(routing.ClusterManagement, sa)
	if err != nil {
		t.Fatal(err)
	}
	declares := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
		{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "serviceaccounts"}, Namespace: ns, Name: "sample"},
	}}}
	secret := func(account, writtenFor string) (contract.Identity, mapReader) {
		src := contract.Identity{Version: "v1", Resource: "secrets", Namespace: ns, Name: "token"}
		target, err := names.ToTarget(routing.ClusterManagement, src)
		if err != nil {
			t.Fatal(err)
		}
		o := object(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: "+target.Name+", namespace: hcp}\ntype: kubernetes.io/service-account-token\ndata: {token: c2VjcmV0}\n")
		a := namespaces.SourceAnnotations(src)
		a[check.AnnotationServiceAccountName] = account
		o.SetAnnotations(a)
		if writtenFor != "" {
			o.SetLabels(map[string]string{namespaces.LabelOperator: writtenFor})
		}
		return src, mapReader{target.Key(): o}
	}
	for _, tc := range []struct {
		name       string
		account    string
		writtenFor string // the Secret's operator label
		outputs    *contract.OutputResources
		wantName   string // the annotation handed back; "" when skipped
	}{
		{"the operator's own renamed account", saTarget.Name, "sample-operator", declares, "sample"},
		{"the control-plane-operator's account", "control-plane-operator", "sample-operator", declares, ""},
		{"an account of the simulated namespace it does not declare", ns + "--other", "sample-operator", declares, ""},
		{"its own account, but no output-resources", saTarget.Name, "sample-operator", nil, ""},
		{"its own declared account, a Secret someone else wrote", saTarget.Name, "", declares, ""},
		{"its own declared account, a Secret written for another operator", saTarget.Name, "other-operator", declares, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, mgmt := secret(tc.account, tc.writtenFor)
			res, err := Gather(t.Context(), Options{
				Placement: managementPlacement{hostedPlacement{names}}, Outputs: tc.outputs, Operator: "sample-operator",
				Inputs: &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{
					{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: src.Namespace, Name: src.Name},
				}}},
				Readers: map[string]Reader{routing.ClusterManagement: mgmt, routing.ClusterGuest: mapReader{}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range res.Objects {
				if o.Resource == "secrets" {
					got = append(got, o.Object.GetAnnotations()[check.AnnotationServiceAccountName])
				}
			}
			switch {
			case tc.wantName == "" && (len(got) > 0 || len(res.Warnings) == 0):
				t.Errorf("handed back %v (warnings %v); want skipped with a warning", got, res.Warnings)
			case tc.wantName != "" && (len(got) != 1 || got[0] != tc.wantName):
				t.Errorf("handed back %v (skipped %v, warnings %v); want one token of %q", got, res.Skipped, res.Warnings, tc.wantName)
			}
		})
	}
}
