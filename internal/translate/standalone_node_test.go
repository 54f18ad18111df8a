package translate_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/nodemachinery"
	"github.com/topolayer/topolayer/routing"
)

// TestDropStandaloneNode: in the hosted topology the named rule drops what library-go's
// static-pod controllers write for a standalone cluster's nodes (installer, pruner and guard
// pods bound to a node, the guard PDB, revision status ConfigMaps and the per-revision copies
// they own, the installer's and the guard's ServiceAccounts and the installer's cluster-admin
// binding), and nothing else, not even a name that ends in a number. Standalone keeps all.
func TestDropStandaloneNode(t *testing.T) {
	const ns = "namespace: openshift-kube-scheduler"
	owned := "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: revision-status-7, uid: u}]"
	cases := map[string]struct {
		group, resource, body string
		action                contract.Action
		name                  string // a Delete's name
		drop                  bool
	}{
		"installer pod bound to a node": {
			resource: "pods", drop: true,
			body: "apiVersion: v1\nkind: Pod\nmetadata: {name: installer-7-master-0, " + ns + "}\nspec: {nodeName: master-0, containers: [{name: i, image: i}]}\n",
		},
		"pod without a node": {
			resource: "pods",
			body:     "apiVersion: v1\nkind: Pod\nmetadata: {name: p, " + ns + "}\nspec: {containers: [{name: i, image: i}]}\n",
		},
		"guard pdb": {
			group: "policy", resource: "poddisruptionbudgets", drop: true,
			body: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: openshift-kube-scheduler-guard-pdb, " + ns + "}\nspec: {minAvailable: 1, selector: {matchLabels: {app: guard}}}\n",
		},
		"pdb named like a guard pdb that selects other pods": {
			group: "policy", resource: "poddisruptionbudgets",
			body: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: my-guard-pdb, " + ns + "}\nspec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n",
		},
		"revision status configmap": {
			resource: "configmaps", drop: true,
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: revision-status-7, " + ns + ", annotations: {operator.openshift.io/revision-ready: 'false'}}\ndata: {revision: '7', reason: 'configmap/config has changed'}\n",
		},
		"revision status configmap made ready": {
			resource: "configmaps", drop: true,
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: revision-status-7, " + ns + ", annotations: {operator.openshift.io/revision-ready: 'true'}}\n",
		},
		"configmap named revision-status-N that is not one": {
			resource: "configmaps",
			body:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: revision-status-7, " + ns + "}\ndata: {revision: '8'}\n",
		},
		"configmap revision-status-latest": {
			resource: "configmaps",
			body:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: revision-status-latest, " + ns + ", annotations: {operator.openshift.io/revision-ready: 'true'}}\n",
		},
		"per-revision configmap copy": {
			resource: "configmaps", drop: true,
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-scheduler-pod-7, " + ns + ", " + owned + "}\ndata: {pod.yaml: x}\n",
		},
		"per-revision secret copy": {
			resource: "secrets", drop: true,
			body: "apiVersion: v1\nkind: Secret\nmetadata: {name: serving-cert-7, " + ns + ", " + owned + "}\n",
		},
		"configmap ending in a number owned by another revision": {
			resource: "configmaps",
			body:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-scheduler-pod-8, " + ns + ", " + owned + "}\n",
		},
		"configmap ending in a number": {
			resource: "configmaps",
			body:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v4-0, " + ns + "}\n",
		},
		"installer service account": {
			resource: "serviceaccounts", drop: true,
			body: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: installer-sa, " + ns + "}\n",
		},
		"guard service account": {
			resource: "serviceaccounts", drop: true,
			body: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: guard-sa, " + ns + ", labels: {app: guard}}\n",
		},
		"service account named guard-sa of another app": {
			resource: "serviceaccounts",
			body:     "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: guard-sa, " + ns + "}\n",
		},
		"installer cluster-admin binding": {
			group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", drop: true,
			body: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: 'system:openshift:operator:openshift-kube-scheduler-installer'}\n" +
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, namespace: openshift-kube-scheduler, name: installer-sa}]\n",
		},
		"binding named like the installer's that binds another subject": {
			group: "rbac.authorization.k8s.io", resource: "clusterrolebindings",
			body: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: 'system:openshift:operator:openshift-kube-scheduler-installer'}\n" +
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, namespace: openshift-kube-scheduler, name: scheduler}]\n",
		},
		"prune controller deletes a revision": {
			resource: "configmaps", action: contract.ActionDelete, name: "revision-status-3", drop: true,
		},
		"delete of a configmap ending in a number": {
			resource: "configmaps", action: contract.ActionDelete, name: "config-3",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var m contract.Mutation
			if c.action == contract.ActionDelete {
				m = contract.Mutation{Class: contract.ClassManagement}
				m.Metadata.Action = contract.ActionDelete
				m.Metadata.SetIdentity(contract.Identity{Group: c.group, Version: "v1", Resource: c.resource, Namespace: "openshift-kube-scheduler", Name: c.name})
			} else {
				m = scopeMutation(t, c.group, c.resource, c.body)
			}
			out := &contract.OutputDir{Mutations: []contract.Mutation{m}}
			e := scopeEngine().Plan(out).Entries[0]
			want := routing.Apply
			if c.drop {
				want = routing.Dropped
			}
			if e.Disposition != want {
				t.Fatalf("%s by %s (%s), want %s", e.Disposition, e.Rule, e.Reason, want)
			}
			if c.drop && (e.Rule != nodemachinery.Rule || e.Reason == "") {
				t.Errorf("rule %q reason %q, want %s and a reason", e.Rule, e.Reason, nodemachinery.Rule)
			}
			if !c.drop && e.Rule == nodemachinery.Rule {
				t.Errorf("placed by %s", e.Rule)
			}
			if d := translate.Standalone("op", nil).Plan(out).Entries[0].Disposition; d != routing.Apply {
				t.Errorf("standalone: %s, want apply", d)
			}
		})
	}
}
