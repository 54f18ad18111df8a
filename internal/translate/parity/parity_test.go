package parity_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/golden"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/nodemachinery"
	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

const hostedConfig = `
apiVersion: topolayer.dev/v1alpha1
kind: TopologyConfig
topology:
  type: Hosted
  hosted: {namespace: clusters-example, hostedControlPlane: example}
`

const standaloneConfig = `
apiVersion: topolayer.dev/v1alpha1
kind: TopologyConfig
topology: {type: Standalone}
`

// mutation builds one recorded request; gvr is "group/version/resource" ("" group for core).
func mutation(class contract.Class, action contract.Action, gvr, namespace, name, body string) contract.Mutation {
	parts := strings.Split(gvr, "/")
	return contract.Mutation{
		Class: class,
		Metadata: contract.Metadata{
			Action: action, Namespace: namespace, Name: name,
			ResourceType: contract.ResourceType{Group: parts[0], Version: parts[1], Resource: parts[2]},
		},
		Body: []byte(strings.TrimSpace(body) + "\n"),
		Path: string(class) + "/" + string(action) + "/" + name,
	}
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  template:
    spec:
      nodeSelector: {node-role.kubernetes.io/master: ""}
      serviceAccountName: web
      containers: [{name: web, image: web}]
`

// plansOf translates out with the standalone and the hosted configurations.
func plansOf(t *testing.T, out *contract.OutputDir) (s, h *plans.Plan, he translate.Engine) {
	t.Helper()
	scfg, err := config.Parse([]byte(standaloneConfig))
	se := engineOf(t, scfg, err, "demo-operator", nil)
	hcfg, err := config.Parse([]byte(hostedConfig))
	he = engineOf(t, hcfg, err, "demo-operator", nil)
	return se.Plan(out), he.Plan(out), he
}

// engineOf returns the engine of the topology of cfg for operator and the output resources
// it declares; err is the error of reading or parsing cfg, which fails the test.
func engineOf(t *testing.T, cfg *config.TopologyConfig, err error, operator string, declared *contract.OutputResources) translate.Engine {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	e, err := topology.Engine(cfg, operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestCompare(t *testing.T) {
	type want struct {
		outcome parity.Outcome
		causes  []parity.CauseKind // every cause kind of the object's differences, sorted
	}
	tests := map[string]struct {
		mutations []contract.Mutation
		// tamper changes the hosted plan before the comparison.
		tamper func(*plans.Plan)
		want   map[string]want // by source object, as Identity.String prints it
	}{
		"a namespaced object is renamed into the HCP namespace": {
			mutations: []contract.Mutation{mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "demo", "settings",
				`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: demo}, data: {k: v}}`)},
			want: map[string]want{"configmaps demo/settings": {parity.RenamedOnly,
				[]parity.CauseKind{parity.CausePlaced, parity.CauseRecorded, parity.CauseRenamed}}},
		},
		"a workload is transformed and its references follow": {
			mutations: []contract.Mutation{
				mutation(contract.ClassManagement, contract.ActionCreate, "apps/v1/deployments", "demo", "web", deployment),
				mutation(contract.ClassManagement, contract.ActionCreate, "/v1/serviceaccounts", "demo", "web",
					`{apiVersion: v1, kind: ServiceAccount, metadata: {name: web, namespace: demo}}`),
			},
			want: map[string]want{
				"deployments.apps demo/web": {parity.Transformed, []parity.CauseKind{parity.CausePlaced,
					parity.CauseRecorded, parity.CauseReference, parity.CauseRenamed, parity.CauseTransform}},
				// Its pods run as it without a token (guestidentity.Rule): the
				// renamed account on the management cluster is compared.
				"serviceaccounts demo/web": {parity.Transformed,
					[]parity.CauseKind{parity.CausePlaced, parity.CauseRecorded, parity.CauseRenamed, parity.CauseTransform}},
				// The account's namespace on the guest.
				"namespaces demo": {parity.Transformed, []parity.CauseKind{parity.CauseAdded}},
			},
		},
		"a Namespace is absorbed": {
			mutations: []contract.Mutation{mutation(contract.ClassManagement, contract.ActionCreate, "/v1/namespaces", "", "demo",
				`{apiVersion: v1, kind: Namespace, metadata: {name: demo}}`)},
			want: map[string]want{"namespaces demo": {parity.Absorbed, []parity.CauseKind{parity.CauseAbsorbed}}},
		},
		"a cluster-scoped operator CR becomes its shadow; status only": {
			mutations: []contract.Mutation{mutation(contract.ClassManagement, contract.ActionApplyStatus, "config.openshift.io/v1/clusteroperators", "", "demo",
				`{apiVersion: config.openshift.io/v1, kind: ClusterOperator, metadata: {name: demo}, status: {versions: [{name: operator, version: "1"}]}}`)},
			want: map[string]want{"clusteroperators.config.openshift.io demo": {parity.RenamedOnly,
				[]parity.CauseKind{parity.CausePlaced, parity.CauseRenamed, parity.CauseShadowed}}},
		},
		"a UserWorkload object is placed on the guest, unchanged": {
			mutations: []contract.Mutation{mutation(contract.ClassUserWorkload, contract.ActionCreate, "rbac.authorization.k8s.io/v1/clusterroles", "", "reader",
				`{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader}, rules: []}`)},
			want: map[string]want{"clusterroles.rbac.authorization.k8s.io reader": {parity.Identical,
				[]parity.CauseKind{parity.CausePlaced, parity.CauseRecorded}}},
		},
		"a delete on the guest is identical": {
			mutations: []contract.Mutation{mutation(contract.ClassUserWorkload, contract.ActionDelete, "rbac.authorization.k8s.io/v1/clusterroles", "", "old",
				`{apiVersion: rbac.authorization.k8s.io/v1, kind: DeleteOptions}`)},
			want: map[string]want{"clusterroles.rbac.authorization.k8s.io old": {parity.Identical, []parity.CauseKind{parity.CausePlaced}}},
		},
		"a hosted body that no rule explains": {
			mutations: []contract.Mutation{mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "demo", "settings",
				`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: demo}, data: {k: v}}`)},
			tamper: func(p *plans.Plan) {
				// The hosted object as it will be written, changed behind the engine's back.
				if err := unstructured.SetNestedField(p.Entries[0].Object.Object, "changed", "data", "k"); err != nil {
					panic(err)
				}
			},
			want: map[string]want{"configmaps demo/settings": {parity.Unexplained,
				[]parity.CauseKind{parity.CausePlaced, parity.CauseRecorded, parity.CauseRenamed, parity.CauseUnexplained}}},
		},
		"transforms whose changes are not recorded cannot explain": {
			mutations: []contract.Mutation{mutation(contract.ClassManagement, contract.ActionCreate, "apps/v1/deployments", "demo", "web", deployment)},
			tamper: func(p *plans.Plan) {
				for i := range p.Entries {
					p.Entries[i].Changes = slices.DeleteFunc(p.Entries[i].Changes, func(c plans.Change) bool { return c.Kind == plans.ChangeTransformed })
				}
			},
			want: map[string]want{
				"deployments.apps demo/web": {parity.Unexplained, []parity.CauseKind{parity.CausePlaced,
					parity.CauseRecorded, parity.CauseReference, parity.CauseRenamed, parity.CauseUnexplained}},
				// The service account its pods run as, which the operator does not write.
				"serviceaccounts demo/web": {parity.Transformed, []parity.CauseKind{parity.CauseAdded}},
				"namespaces demo":          {parity.Transformed, []parity.CauseKind{parity.CauseAdded}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, h, he := plansOf(t, &contract.OutputDir{Mutations: tc.mutations})
			if tc.tamper != nil {
				tc.tamper(h)
			}
			r, err := parity.Compare(s, h, parity.OptionsFor(he))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]want{}
			for _, o := range r.Objects {
				var kinds []parity.CauseKind
				for _, d := range o.Differences {
					for _, c := range d.Causes {
						if !slices.Contains(kinds, c.Kind) {
							kinds = append(kinds, c.Kind)
						}
					}
				}
				slices.Sort(kinds)
				got[o.Source.String()] = want{o.Outcome, kinds}
			}
			for k, w := range tc.want {
				w.causes = slices.Sorted(slices.Values(w.causes))
				if g, ok := got[k]; !ok {
					t.Errorf("%s: not in the report; it has %v", k, got)
				} else if g.outcome != w.outcome || !slices.Equal(g.causes, w.causes) {
					t.Errorf("%s: got %s %v, want %s %v", k, g.outcome, g.causes, w.outcome, w.causes)
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d objects %v, want %d", len(got), got, len(tc.want))
			}
			unexplained := r.Summary.Unexplained > 0
			if err := r.Err(); errors.Is(err, parity.ErrUnexplained) != unexplained {
				t.Errorf("Err() = %v, with %d unexplained objects", err, r.Summary.Unexplained)
			}
			if t.Failed() {
				var buf bytes.Buffer
				_ = r.WriteTable(&buf)
				t.Log("\n" + buf.String())
			}
		})
	}
}

// TestCompareObjectsLive compares a hosted object as the live management cluster holds it:
// the applier has turned the owner annotation into an ownerReference. The entry is written by
// hand, with the changes the hosted engine records.
func TestCompareObjectsLive(t *testing.T) {
	src := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "demo", Name: "settings"}
	target := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "clusters-example", Name: "demo--settings"}
	s := []parity.Object{{Source: src, Cluster: routing.ClusterStandalone, Identity: src, Body: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "demo"},
	}}}
	h := []parity.Object{{Source: src, Cluster: routing.ClusterManagement, Identity: target, Body: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "demo--settings", "namespace": "clusters-example", "ownerReferences": []any{
			map[string]any{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedControlPlane", "name": "example", "uid": "1234"},
		}},
	}}}
	entries := []plans.Entry{{
		Operator: "demo-operator", Class: contract.ClassManagement, Action: contract.ActionCreate, Source: src,
		Target: plans.Target{Cluster: routing.ClusterManagement, Identity: target}, Disposition: routing.Apply,
		Rule: "hosted/management", Transforms: []string{hosted.ProfileHyperShift + "/owner-reference"},
		// The changes the engine records on the way (identity, then the owner annotation).
		Changes: []plans.Change{
			{Path: "/metadata/namespace", From: "demo", To: "clusters-example", By: plans.ByNamespaces, Kind: plans.ChangeRenamed},
			{Path: "/metadata/name", From: "settings", To: "demo--settings", By: plans.ByNamespaces, Kind: plans.ChangeRenamed},
			{Path: "/metadata/annotations/" + strings.ReplaceAll(namespaces.AnnotationOwnerHCP, "/", "~1"), To: "example",
				By: hosted.ProfileHyperShift + "/owner-reference", Kind: plans.ChangeTransformed},
		},
	}}
	r, err := parity.CompareObjects(s, h, entries, parity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	o := r.Objects[0]
	i := slices.IndexFunc(o.Differences, func(d parity.Difference) bool { return d.Path == "metadata.ownerReferences" })
	if i < 0 || o.Differences[i].Causes[0].Kind != parity.CauseOwner {
		t.Errorf("ownerReferences: want a difference caused by %s, got %+v", parity.CauseOwner, o.Differences)
	}
	if o.Outcome != parity.RenamedOnly {
		t.Errorf("outcome %s, want %s", o.Outcome, parity.RenamedOnly)
	}
}

// TestSampleOperator keeps the reports of the sample operator's example outputs as golden files.
func TestSampleOperator(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "examples", "outputs")
	r := compareDir(t, filepath.Join(dir, "sample-operator"), filepath.Join(dir, "sample-operator-output-resources.yaml"), "sample-operator")
	if err := r.Err(); err != nil {
		t.Error(err)
	}
	var table, md bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	golden.File(t, filepath.Join("testdata", "sample-operator", "report.txt"), table.Bytes(), "go test ./internal/translate/parity -update")
	golden.File(t, filepath.Join("testdata", "sample-operator", "report.md"), md.Bytes(), "go test ./internal/translate/parity -update")
}

// TestCompareAttributesSimulatedNamespaces: the changes that keep a simulated namespace whole
// are attributed to their rules: a dropped installer Pod to hosted/drop-standalone-node, a
// scoped deny-all policy to hosted/selector-scope, the serving-cert annotation, a Service URL
// and a ClusterOperator's relatedObjects to their reference steps; nothing is unexplained.
func TestCompareAttributesSimulatedNamespaces(t *testing.T) {
	ms := []contract.Mutation{
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/pods", "demo", "installer-3-master-0",
			`{apiVersion: v1, kind: Pod, metadata: {name: installer-3-master-0, namespace: demo}, spec: {nodeName: master-0, containers: [{name: i, image: i}]}}`),
		mutation(contract.ClassManagement, contract.ActionCreate, "networking.k8s.io/v1/networkpolicies", "demo", "default-deny-all",
			`{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: default-deny-all, namespace: demo}, spec: {podSelector: {}, policyTypes: [Ingress, Egress]}}`),
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/services", "demo", "web",
			`{apiVersion: v1, kind: Service, metadata: {name: web, namespace: demo, annotations: {service.beta.openshift.io/serving-cert-secret-name: web-cert}}, spec: {ports: [{port: 443}]}}`),
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "demo", "config",
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: config, namespace: demo}, data: {url: "https://web.demo.svc:443"}}`),
		mutation(contract.ClassManagement, contract.ActionUpdateStatus, "config.openshift.io/v1/clusteroperators", "", "demo",
			`{apiVersion: config.openshift.io/v1, kind: ClusterOperator, metadata: {name: demo}, status: {relatedObjects: [{group: "", resource: services, namespace: demo, name: web}]}}`),
	}
	s, h, he := plansOf(t, &contract.OutputDir{Mutations: ms})
	r, err := parity.Compare(s, h, parity.OptionsFor(he))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil {
		t.Error(err)
	}
	by := map[string][]string{} // object -> steps its differences are attributed to
	for _, o := range r.Objects {
		for _, d := range o.Differences {
			for _, c := range d.Causes {
				if !slices.Contains(by[o.Source.String()], c.By) {
					by[o.Source.String()] = append(by[o.Source.String()], c.By)
				}
			}
		}
	}
	for obj, step := range map[string]string{
		"pods demo/installer-3-master-0":                          nodemachinery.Rule,
		"networkpolicies.networking.k8s.io demo/default-deny-all": scope.Rule,
		"services demo/web":                                       translate.ByAnnotationReferences,
		"configmaps demo/config":                                  translate.ByPayloadServiceDNS,
		"clusteroperators.config.openshift.io demo":               translate.ByStatusReferences,
	} {
		if !slices.Contains(by[obj], step) {
			t.Errorf("%s: differences attributed to %v, want %s among them", obj, by[obj], step)
		}
	}
}
