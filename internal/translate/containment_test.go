package translate_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/podsecurity"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// TestContainment: with the default policy, what a hostile or standalone-minded output asks
// for on the shared management cluster is either made safe by a named transform or refused
// with the field named; RBAC for users and groups lands on the guest.
func TestContainment(t *testing.T) {
	const hcp = "clusters-example"
	engine := func(mode policy.PodSecurityMode) translate.Engine {
		return profileEngine(hcp, &policy.Policy{PodSecurity: mode})
	}
	workload := func(spec string) contract.Mutation {
		return deploymentMutation("openshift-authentication", "oauth-openshift", "oauth", spec)
	}
	privileged := workload("      hostPID: true\n      hostNetwork: true\n      nodeName: master-0\n" +
		"      containers:\n      - name: oauth\n        image: oauth\n        ports: [{containerPort: 6443, hostPort: 6443}]\n" +
		"        securityContext: {privileged: true, runAsUser: 0, capabilities: {add: [SYS_ADMIN]}}\n")
	compliant := workload("      containers:\n      - name: oauth\n        image: oauth\n")
	// What asks the management cluster's container runtime for more: a handler of its
	// choosing, a host device, no IRQ balancing on its CPUs.
	runtime := workload("      runtimeClassName: performance-attacker\n      containers:\n      - name: oauth\n        image: oauth\n")
	runtime.Body = []byte(strings.Replace(string(runtime.Body), "metadata: {labels: {app: oauth}}",
		"metadata: {labels: {app: oauth}, annotations: {io.kubernetes.cri-o.Devices: /dev/fuse, irq-load-balancing.crio.io: disable, kept: x}}", 1))
	binding := func(kind, subject string) contract.Mutation {
		return policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", "rolebindings", "openshift-config-managed", "reader",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: reader, namespace: openshift-config-managed}\n"+
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\nsubjects:\n- {kind: "+kind+", name: \""+subject+"\", namespace: openshift-config-managed}\n")
	}
	readerRole := role("openshift-config-managed", "reader", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n")
	adminBinding := policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", "rolebindings", "openshift-authentication", "all",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: all, namespace: openshift-authentication}\n"+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects:\n- {kind: Group, name: \"system:unauthenticated\"}\n")

	tests := []struct {
		name      string
		mode      policy.PodSecurityMode
		mutations []contract.Mutation
		// want maps a source name to its rule (a rejected entry: its rule and part of its reason).
		want       map[string]string
		wantReason map[string]string
		wantGuest  []string
	}{
		{"strip: a privileged standalone workload becomes restricted", policy.PodSecurityStrip, []contract.Mutation{privileged},
			map[string]string{"oauth-openshift": "hosted/management"}, nil, nil},
		{"reject: the same workload is refused, the field named", policy.PodSecurityReject, []contract.Mutation{privileged},
			map[string]string{"oauth-openshift": policy.RulePodSecurity}, map[string]string{"oauth-openshift": "host"}, nil},
		{"reject: a compliant-after-defaults workload passes", policy.PodSecurityReject, []contract.Mutation{compliant},
			map[string]string{"oauth-openshift": "hosted/management"}, nil, nil},
		{"strip: the runtime class and the runtime's annotations go", policy.PodSecurityStrip, []contract.Mutation{runtime},
			map[string]string{"oauth-openshift": "hosted/management"}, nil, nil},
		{"reject: the workload asking for a runtime class is refused, the field named", policy.PodSecurityReject, []contract.Mutation{runtime},
			map[string]string{"oauth-openshift": policy.RulePodSecurity}, map[string]string{"oauth-openshift": "runtimeClassName"}, nil},
		{"a binding of guest users and its Role land on the guest", policy.PodSecurityStrip, []contract.Mutation{readerRole, binding("Group", "system:authenticated")},
			map[string]string{"reader": translate.RuleGuestSubjects}, nil, []string{"reader", "reader"}},
		{"a service account binding stays on management", policy.PodSecurityStrip, []contract.Mutation{readerRole, binding("ServiceAccount", "oauth")},
			map[string]string{"reader": "hosted/management"}, nil, nil},
		{"cluster-admin for the unauthenticated is refused", policy.PodSecurityStrip, []contract.Mutation{adminBinding},
			map[string]string{"all": policy.RuleRBACContainment}, map[string]string{"all": "cluster-admin"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := engine(tc.mode).Plan(&contract.OutputDir{Mutations: tc.mutations})
			var guest []string
			for _, e := range p.Entries {
				if want, ok := tc.want[e.Source.Name]; ok && e.Rule != want {
					t.Errorf("%s: rule %s (%s: %s), want %s", e.Source, e.Rule, e.Disposition, e.Reason, want)
				}
				if part, ok := tc.wantReason[e.Source.Name]; ok && (e.Disposition != routing.Rejected || !strings.Contains(e.Reason, part)) {
					t.Errorf("%s: %s, reason %q; want rejected naming %q", e.Source, e.Disposition, e.Reason, part)
				}
				if e.Target.Cluster == routing.ClusterGuest {
					guest = append(guest, e.Source.Name)
				}
				if e.Disposition != routing.Apply || e.Source.Resource != "deployments" {
					continue
				}
				spec := e.Object.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				annotations, _ := e.Object.Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
				for k := range annotations {
					if podsecurity.IsRuntimeAnnotation(k) {
						t.Errorf("the management pod template keeps the annotation %s", k)
					}
				}
				if string(tc.mutations[0].Body) == string(runtime.Body) && annotations["kept"] != "x" {
					t.Errorf("an annotation for no runtime went: %v", annotations)
				}
				for _, f := range []string{"hostPID", "hostNetwork", "nodeName", "runtimeClassName"} {
					if _, has := spec[f]; has {
						t.Errorf("the management pod template keeps %s", f)
					}
				}
				sc := spec["containers"].([]any)[0].(map[string]any)["securityContext"].(map[string]any)
				if sc["privileged"] == true || sc["allowPrivilegeEscalation"] != false {
					t.Errorf("container securityContext %v: want unprivileged, no escalation", sc)
				}
			}
			if strings.Join(guest, ",") != strings.Join(tc.wantGuest, ",") {
				t.Errorf("on the guest: %v, want %v", guest, tc.wantGuest)
			}
		})
	}
}
