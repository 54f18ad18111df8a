package translate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// TestGuestIdentity: an operand placed on the management cluster acts on the guest as its
// standalone service account (guestidentity.Rule): its pods mount the guest
// kubeconfig and no management token, the account exists on the guest (and, renamed and
// tokenless, on the management cluster for the pods to run as), and its RBAC follows it to
// the guest, unless the configuration says the operand needs the management API.
func TestGuestIdentity(t *testing.T) {
	const hcp = "clusters-example"
	deployment := func(sa string) contract.Mutation {
		saField := ""
		if sa != "" {
			saField = "      serviceAccountName: " + sa + "\n"
		}
		return deploymentMutation("demo", "web", "web", saField+`      initContainers: [{name: init, image: busybox}]
      containers:
      - name: web
        image: web
        env: [{name: KUBECONFIG, value: /standalone/kubeconfig}]
`)
	}
	pod := policyMutation(contract.ActionCreate, "", "pods", "demo", "once", "apiVersion: v1\nkind: Pod\nmetadata: {name: once, namespace: demo}\nspec:\n  containers: [{name: c, image: c}]\n")
	sa := policyMutation(contract.ActionApply, "", "serviceaccounts", "demo", "web", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: demo, labels: {app: web}}\n")
	ns := policyMutation(contract.ActionCreate, "", "namespaces", "", "demo", "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n")
	webRole := role("demo", "web", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n")
	webBinding := policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", "rolebindings", "demo", "web",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: web, namespace: demo}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web}\nsubjects: [{kind: ServiceAccount, name: web, namespace: demo}]\n")
	webCR := clusterRole("web-reader", "rules: [{apiGroups: [\"\"], resources: [namespaces], verbs: [get]}]\n")
	webCRB := policyMutation(contract.ActionCreate, "rbac.authorization.k8s.io", "clusterrolebindings", "", "web-reader",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: web-reader}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: web-reader}\nsubjects: [{kind: ServiceAccount, name: web, namespace: demo}]\n")
	other := role("demo", "operator", "- {apiGroups: [\"\"], resources: [secrets], verbs: [get]}\n")

	type placement struct{ Rule, Cluster, Target string }
	tests := []struct {
		name          string
		managementAPI []routing.Match
		mutations     []contract.Mutation
		want          map[string]placement // by source; the service account may be on both clusters
		identities    []plans.GuestServiceAccount
	}{
		{
			name:      "the operator writes the account and its RBAC: all of it follows to the guest",
			mutations: []contract.Mutation{ns, deployment("web"), sa, webRole, webBinding, webCR, webCRB, other},
			want: map[string]placement{
				"deployments.apps demo/web":                                {"hosted/management", "management", "clusters-example/demo--web"},
				"serviceaccounts demo/web@guest":                           {guestidentity.Rule, "guest", "demo/web"},
				"serviceaccounts demo/web@management":                      {guestidentity.Rule, "management", "clusters-example/demo--web"},
				"roles.rbac.authorization.k8s.io demo/web":                 {guestidentity.Rule, "guest", "demo/web"},
				"rolebindings.rbac.authorization.k8s.io demo/web":          {guestidentity.Rule, "guest", "demo/web"},
				"clusterroles.rbac.authorization.k8s.io web-reader":        {guestidentity.Rule, "guest", "web-reader"},
				"clusterrolebindings.rbac.authorization.k8s.io web-reader": {guestidentity.Rule, "guest", "web-reader"},
				"roles.rbac.authorization.k8s.io demo/operator":            {"hosted/management", "management", "clusters-example/demo--operator"},
				"namespaces demo":                                          {plans.RuleGuestNamespace, "guest", "demo"},
			},
			identities: []plans.GuestServiceAccount{{Namespace: "demo", Name: "web", Secret: "guest-kubeconfig.demo.web",
				Workloads: []contract.Identity{{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "demo", Name: "web"}}}},
		},
		{
			name:      "a bare Pod without serviceAccountName acts as default, which topolayer writes on both clusters",
			mutations: []contract.Mutation{pod},
			want: map[string]placement{
				"pods demo/once":                          {"hosted/management", "management", "clusters-example/demo--once"},
				"serviceaccounts demo/default@guest":      {guestidentity.Rule, "guest", "demo/default"},
				"serviceaccounts demo/default@management": {guestidentity.Rule, "management", "clusters-example/demo--default"},
				// The account's namespace, which the operator neither writes nor declares.
				"namespaces demo": {plans.RuleGuestNamespace, "guest", "demo"},
			},
			identities: []plans.GuestServiceAccount{{Namespace: "demo", Name: "default", Secret: "guest-kubeconfig.demo.default",
				Workloads: []contract.Identity{{Version: "v1", Resource: "pods", Namespace: "demo", Name: "once"}}}},
		},
		{
			name:      "RBAC written in a run without the workload still follows its service account",
			mutations: []contract.Mutation{sa, webRole, webBinding, other},
			want: map[string]placement{
				"serviceaccounts demo/web@guest":                  {guestidentity.Rule, "guest", "demo/web"},
				"serviceaccounts demo/web@management":             {guestidentity.Rule, "management", "clusters-example/demo--web"},
				"roles.rbac.authorization.k8s.io demo/web":        {guestidentity.Rule, "guest", "demo/web"},
				"rolebindings.rbac.authorization.k8s.io demo/web": {guestidentity.Rule, "guest", "demo/web"},
				"roles.rbac.authorization.k8s.io demo/operator":   {"hosted/management", "management", "clusters-example/demo--operator"},
				"namespaces demo":                                 {plans.RuleGuestNamespace, "guest", "demo"},
			},
		},
		{
			name:          "a service account selected as needing the management API keeps its RBAC there, in any run",
			managementAPI: []routing.Match{{Resource: "serviceaccounts", Namespace: "demo", Name: "web"}},
			mutations:     []contract.Mutation{deployment("web"), sa, webRole, webBinding},
			want: map[string]placement{
				"deployments.apps demo/web":                       {"hosted/management", "management", "clusters-example/demo--web"},
				"serviceaccounts demo/web":                        {"hosted/management", "management", "clusters-example/demo--web"},
				"roles.rbac.authorization.k8s.io demo/web":        {"hosted/management", "management", "clusters-example/demo--web"},
				"rolebindings.rbac.authorization.k8s.io demo/web": {"hosted/management", "management", "clusters-example/demo--web"},
			},
		},
		{
			name:          "an operand that needs the management API keeps its account and RBAC there",
			managementAPI: []routing.Match{{Resource: "deployments", Name: "web"}},
			mutations:     []contract.Mutation{deployment("web"), sa, webRole, webBinding},
			want: map[string]placement{
				"deployments.apps demo/web":                       {"hosted/management", "management", "clusters-example/demo--web"},
				"serviceaccounts demo/web":                        {"hosted/management", "management", "clusters-example/demo--web"},
				"roles.rbac.authorization.k8s.io demo/web":        {"hosted/management", "management", "clusters-example/demo--web"},
				"rolebindings.rbac.authorization.k8s.io demo/web": {"hosted/management", "management", "clusters-example/demo--web"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := guestIdentityEngine(hcp, tc.managementAPI)
			p := e.Plan(&contract.OutputDir{Mutations: tc.mutations})
			if p.Summary.Rejected > 0 {
				t.Fatalf("rejected: %+v", p.Rejected())
			}
			got := map[string]placement{}
			clusters := map[string][]string{}
			for _, en := range p.Entries {
				if en.Disposition == routing.Apply {
					clusters[en.Source.String()] = append(clusters[en.Source.String()], en.Target.Cluster)
				}
			}
			for _, en := range p.Entries {
				if en.Disposition != routing.Apply {
					continue
				}
				k := en.Source.String()
				if len(clusters[k]) > 1 {
					k += "@" + en.Target.Cluster
				}
				target := en.Target.Name
				if en.Target.Namespace != "" {
					target = en.Target.Namespace + "/" + target
				}
				got[k] = placement{en.Rule, en.Target.Cluster, target}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.identities, p.GuestIdentities); diff != "" {
				t.Errorf("guest identities (-want +got):\n%s", diff)
			}
			for _, en := range p.Entries {
				if en.Object == nil {
					continue
				}
				switch {
				case en.Source.Resource == "deployments" || en.Source.Resource == "pods":
					checkPodIdentity(t, en, len(tc.identities) > 0)
				case en.Source.Resource == "serviceaccounts" && en.Rule == guestidentity.Rule:
					automount, found, _ := unstructured.NestedBool(en.Object.Object, "automountServiceAccountToken")
					if tokenless := found && !automount; tokenless != (en.Target.Cluster == routing.ClusterManagement) {
						t.Errorf("%s on %s: automountServiceAccountToken %v (set %v); want false on the management cluster only", en.Source, en.Target.Cluster, automount, found)
					}
					if en.Target.Cluster == routing.ClusterManagement && !slices.ContainsFunc(en.Changes, func(c plans.Change) bool {
						return c.By == guestidentity.Rule && c.Path == "/automountServiceAccountToken"
					}) {
						t.Errorf("%s: no change recorded for automountServiceAccountToken: %+v", en.Source, en.Changes)
					}
				}
			}
		})
	}
}

// guestIdentityEngine is the hosted engine of the HCP namespace hcp with the guest identity
// rule, whose operands selected by managementAPI keep the management API.
func guestIdentityEngine(hcp string, managementAPI []routing.Match) translate.Engine {
	return translate.Engine{
		Topology: plans.TopologyHosted, Operator: "op",
		Router: &routing.Table{Rules: routing.HostedDefaults(routing.ConvertClusterRBAC)},
		Names:  namespaces.Hosted{Namespace: hcp}, Stages: translate.HostedStages(), HCPNamespace: hcp, HostedControlPlane: "example",
		GuestIdentity: &translate.GuestIdentity{ManagementAPI: managementAPI},
	}
}

// checkPodIdentity checks the pod template of a workload entry: with a guest identity, no
// token, its renamed service account, and the kubeconfig mounted in every container with
// KUBECONFIG set, each change recorded; without, none of it.
func checkPodIdentity(t *testing.T, en plans.Entry, guest bool) {
	t.Helper()
	spec := en.Object.Object["spec"].(map[string]any)
	if tmpl, ok := spec["template"].(map[string]any); ok {
		spec = tmpl["spec"].(map[string]any)
	}
	_, mounted := volumeNamed(spec["volumes"], guestidentity.KubeconfigVolume)
	if !guest {
		if mounted || spec["automountServiceAccountToken"] != nil {
			t.Errorf("%s: needs the management API, yet its pods lose the token: %v", en.Source, spec)
		}
		return
	}
	if spec["automountServiceAccountToken"] != false {
		t.Errorf("%s: automountServiceAccountToken %v, want false", en.Source, spec["automountServiceAccountToken"])
	}
	if sa, _ := spec["serviceAccountName"].(string); sa != fmt.Sprintf("demo--%s", map[bool]string{true: "web", false: "default"}[en.Source.Resource == "deployments"]) {
		t.Errorf("%s: serviceAccountName %q", en.Source, sa)
	}
	if !mounted {
		t.Errorf("%s: no volume %s", en.Source, guestidentity.KubeconfigVolume)
	}
	for _, list := range []string{"initContainers", "containers"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			c := c.(map[string]any)
			if _, ok := volumeNamed(c["volumeMounts"], guestidentity.KubeconfigVolume); !ok {
				t.Errorf("%s: %s %v does not mount the kubeconfig", en.Source, list, c["name"])
			}
			env, ok := volumeNamed(c["env"], guestidentity.KubeconfigEnv)
			if want := guestidentity.KubeconfigMountPath + "/" + guestidentity.KubeconfigKey; !ok || env["value"] != want {
				t.Errorf("%s: %s %v: KUBECONFIG %v, want %s", en.Source, list, c["name"], env, want)
			}
		}
	}
	if !slices.ContainsFunc(en.Changes, func(c plans.Change) bool { return c.By == guestidentity.Rule }) {
		t.Errorf("%s: no change attributed to %s", en.Source, guestidentity.Rule)
	}
}

// volumeNamed returns the element of a list of named maps with that name.
func volumeNamed(list any, name string) (map[string]any, bool) {
	items, _ := list.([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["name"] == name {
			return m, true
		}
	}
	return nil, false
}

// TestGuestKubeconfigSecretName: the Secret's name is not an encoded name and fits a Secret.
func TestGuestKubeconfigSecretName(t *testing.T) {
	h := namespaces.Hosted{Namespace: "clusters-example"}
	long := string(make([]byte, 0))
	for len(long) < 250 {
		long += "abcdefghij"
	}
	for _, tc := range []struct{ ns, sa string }{{"demo", "web"}, {"a--b", "c--d"}, {"demo", long}} {
		name := guestidentity.SecretName(tc.ns, tc.sa)
		if len(name) > 253 {
			t.Errorf("%s/%s: %q is %d characters long", tc.ns, tc.sa, name, len(name))
		}
		id := contract.Identity{Version: "v1", Resource: "secrets", Namespace: "clusters-example", Name: name}
		if src, err := h.ToSource(routing.ClusterManagement, id, nil); err == nil {
			t.Errorf("%s/%s: %q maps back to the standalone secret %s: it could collide with a renamed one", tc.ns, tc.sa, name, src)
		}
	}
}

// TestGuestIdentityTokenSecret: a token Secret of a guest identity would be a management
// API identity on the management cluster: it is not written, and the pods acting as the
// account do not mount it; an operand that needs the management API keeps both. A token
// Secret of an account that is not the operator's is still refused.
func TestGuestIdentityTokenSecret(t *testing.T) {
	const hcp = "clusters-example"
	deployment := deploymentMutation("demo", "web", "web", `      serviceAccountName: web
      volumes: [{name: token, secret: {secretName: web-token}}, {name: config, configMap: {name: web}}]
      containers:
      - name: web
        image: web
        volumeMounts: [{name: token, mountPath: /var/run/secrets/web}, {name: config, mountPath: /etc/web}]
`)
	sa := policyMutation(contract.ActionApply, "", "serviceaccounts", "demo", "web", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: demo}\n")
	token := func(name, account string) contract.Mutation {
		return policyMutation(contract.ActionApply, "", "secrets", "demo", name,
			"apiVersion: v1\nkind: Secret\nmetadata: {name: "+name+", namespace: demo, annotations: {kubernetes.io/service-account.name: "+account+"}}\ntype: kubernetes.io/service-account-token\n")
	}
	tests := []struct {
		name          string
		managementAPI []routing.Match
		mutations     []contract.Mutation
		want          map[string]string // source name of the Secret: disposition and rule
		mounted       bool              // the Deployment still mounts the token Secret
	}{
		{"a guest identity's token: not written, not mounted", nil, []contract.Mutation{deployment, sa, token("web-token", "web")},
			map[string]string{"web-token": "dropped " + guestidentity.Rule}, false},
		{"an operand that needs the management API keeps its token", []routing.Match{{Resource: "deployments", Name: "web"}}, []contract.Mutation{deployment, sa, token("web-token", "web")},
			map[string]string{"web-token": "apply hosted/management"}, true},
		{"another account's token is refused, not dropped", nil, []contract.Mutation{deployment, sa, token("web-token", "web"), token("cpo-token", "control-plane-operator")},
			map[string]string{"web-token": "dropped " + guestidentity.Rule, "cpo-token": "rejected " + policy.RuleServiceAccountToken}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := guestIdentityEngine(hcp, tc.managementAPI)
			p := e.Plan(&contract.OutputDir{Mutations: tc.mutations})
			got := map[string]string{}
			for _, en := range p.Entries {
				switch {
				case en.Source.Resource == "secrets":
					got[en.Source.Name] = string(en.Disposition) + " " + en.Rule
				case en.Source.Resource == "deployments" && en.Object != nil:
					volumes, _, _ := unstructured.NestedSlice(en.Object.Object, "spec", "template", "spec", "volumes")
					containers, _, _ := unstructured.NestedSlice(en.Object.Object, "spec", "template", "spec", "containers")
					_, volume := volumeNamed(volumes, "token")
					_, mount := volumeNamed(containers[0].(map[string]any)["volumeMounts"], "token")
					if volume != tc.mounted || mount != tc.mounted {
						t.Errorf("token volume %v, mount %v; want %v: %v", volume, mount, tc.mounted, volumes)
					}
					if _, ok := volumeNamed(volumes, "config"); !ok {
						t.Errorf("the config volume went too: %v", volumes)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("token Secrets (-want +got):\n%s", diff)
			}
		})
	}
}
