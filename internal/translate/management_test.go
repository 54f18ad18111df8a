package translate_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// TestManagementAllowList: with the hosted topology's allow-list (hosted.Containment), what a
// translated operand places in the HCP namespace is refused unless it is known safe — by kind,
// by field, by label — with the rule and the field named; the configuration widens it for one
// operator by name, and what the operator writes on the guest is not its business.
func TestManagementAllowList(t *testing.T) {
	const ns = attackerNamespace
	obj := attackerObject
	service := func(spec string) contract.Mutation {
		return obj("", "services", "Service", "svc", "spec: {ports: [{port: 443}], "+spec+"}\n")
	}
	deployment := func(name, labels, spec string) contract.Mutation {
		return obj("apps", "deployments", "Deployment", name, "spec:\n  selector: {matchLabels: {x: y}}\n"+spec+
			"  template:\n    metadata: {labels: {x: y"+labels+"}}\n    spec: {containers: [{name: c, image: i}]}\n")
	}
	pod := func(labels string) contract.Mutation {
		return policyMutation(contract.ActionApply, "", "pods", ns, "p",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "+ns+", labels: {"+labels+"}}\nspec: {containers: [{name: c, image: i}]}\n")
	}
	tokenPod := obj("", "pods", "Pod", "token", "spec:\n  containers: [{name: c, image: i}]\n"+
		"  volumes: [{name: t, projected: {sources: [{serviceAccountToken: {path: token, audience: https://kubernetes.default.svc}}]}}]\n")
	guest := obj("", "endpoints", "Endpoints", "on-the-guest", "subsets: []\n")
	guest.Class = contract.ClassUserWorkload
	// HyperShift's own serving certificate, which the attacker's serving-cert stands for.
	alias := "namespaces:\n  aliases:\n  - {resource: secrets, namespace: " + ns + ", name: serving-cert, hostedName: oauth-server-crt}\n"
	aliased := func(action contract.Action) contract.Mutation {
		m := obj("", "secrets", "Secret", "serving-cert", "data: {tls.crt: YQ==}\n")
		m.Metadata.Action = action
		if action == contract.ActionDelete {
			m.Body = []byte("apiVersion: v1\nkind: DeleteOptions\n")
		}
		return m
	}
	allowance := "policy:\n  operators:\n  - name: attacker\n    management:\n" +
		"      kinds: [{group: networking.k8s.io, resource: ingresses}]\n" +
		"      labels: [{key: app, value: kube-apiserver}]\n      maxReplicas: 5\n"

	tests := []struct {
		name     string
		config   string
		mutation contract.Mutation
		// rule is the rule that refuses it, and reason a part of its reason; "" lands.
		rule, reason string
	}{
		{"a ConfigMap lands", "", obj("", "configmaps", "ConfigMap", "c", "data: {a: b}\n"), "", ""},
		{"a ClusterIP Service lands", "", service("type: ClusterIP, selector: {app: x}"), "", ""},
		{"a headless Service lands", "", service("clusterIP: None"), "", ""},
		{"a Deployment of 3 lands", "", deployment("d", "", "  replicas: 3\n"), "", ""},
		{"Endpoints", "", obj("", "endpoints", "Endpoints", "kube-apiserver", "subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{port: 6443}]}]\n"), policy.RuleManagementKind, "endpoints is not on the management cluster's allow-list"},
		{"an EndpointSlice joining the HCP's API Service", "", obj("discovery.k8s.io", "endpointslices", "EndpointSlice", "kas",
			"addressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\n"), policy.RuleManagementKind, "endpointslices.discovery.k8s.io"},
		{"a ResourceQuota", "", obj("", "resourcequotas", "ResourceQuota", "q", "spec: {hard: {pods: \"0\"}}\n"), policy.RuleManagementKind, "resourcequotas"},
		{"a LimitRange", "", obj("", "limitranges", "LimitRange", "l", "spec: {limits: []}\n"), policy.RuleManagementKind, "limitranges"},
		{"a DaemonSet", "", obj("apps", "daemonsets", "DaemonSet", "ds", "spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}\n"), policy.RuleManagementKind, "daemonsets.apps"},
		{"a ReplicationController", "", obj("", "replicationcontrollers", "ReplicationController", "rc", "spec: {replicas: 1, template: {metadata: {labels: {a: b}}, spec: {hostPID: true, containers: [{name: c, image: i}]}}}\n"), policy.RuleManagementKind, "replicationcontrollers"},
		{"a PodTemplate", "", obj("", "podtemplates", "PodTemplate", "pt", "template: {spec: {hostNetwork: true, containers: [{name: c, image: i}]}}\n"), policy.RuleManagementKind, "podtemplates"},
		{"an Ingress claiming a host", "", obj("networking.k8s.io", "ingresses", "Ingress", "i", "spec: {rules: [{host: console.other-tenant.example}]}\n"), policy.RuleManagementKind, "ingresses.networking.k8s.io"},
		{"a second HostedControlPlane", "", obj("hypershift.openshift.io", "hostedcontrolplanes", "HostedControlPlane", "second", "spec: {}\n"), policy.RuleManagementKind, "hostedcontrolplanes.hypershift.openshift.io"},
		{"a NodePort Service", "", service("type: NodePort"), policy.RuleManagementFields, "spec.type: NodePort"},
		{"a LoadBalancer Service", "", service("type: LoadBalancer"), policy.RuleManagementFields, "spec.type: LoadBalancer"},
		{"an ExternalName Service", "", service("type: ExternalName, externalName: attacker.example"), policy.RuleManagementFields, "spec.type: ExternalName"},
		{"a Service with externalIPs", "", service("externalIPs: [192.0.2.1]"), policy.RuleManagementFields, "spec.externalIPs"},
		{"a Service with a fixed cluster IP", "", service("clusterIP: 10.96.0.1"), policy.RuleManagementFields, "spec.clusterIP: 10.96.0.1"},
		{"a fixed node port on a ClusterIP Service", "", obj("", "services", "Service", "svc", "spec: {ports: [{port: 443, nodePort: 30443}]}\n"), policy.RuleManagementFields, "spec.ports[0].nodePort"},
		{"a claim binding another tenant's volume", "", obj("", "persistentvolumeclaims", "PersistentVolumeClaim", "pvc",
			"spec: {volumeName: pv-of-another-tenant, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"), policy.RuleManagementFields, "spec.volumeName"},
		{"100,000 replicas", "", deployment("d", "", "  replicas: 100000\n"), policy.RuleManagementFields, "spec.replicas: 100000 is over the management cluster's bound of 3"},
		{"a projected management API token", "", tokenPod, policy.RuleManagementFields, "spec.volumes[0].projected.sources[0].serviceAccountToken"},
		{"a pod labelled app: kube-apiserver", "", pod("app: kube-apiserver"), policy.RuleReservedLabels, "app=kube-apiserver is reserved"},
		{"a pod template labelled app: etcd", "", deployment("d", ", app: etcd", ""), policy.RuleReservedLabels,
			"spec.template.metadata.labels[app]: app=etcd is reserved"},
		{"a workload named etcd: the profile's own label would name HyperShift's component", "", deployment("etcd", "", ""), policy.RuleReservedLabels,
			"hypershift.openshift.io/control-plane-component=etcd is reserved"},
		{"any hypershift.openshift.io/ label", "", pod("hypershift.openshift.io/need-management-kas-access: \"true\""), policy.RuleReservedLabels, "hypershift.openshift.io/need-management-kas-access"},
		{"the configuration allows an Ingress for this operator", allowance, obj("networking.k8s.io", "ingresses", "Ingress", "i", "spec: {}\n"), "", ""},
		{"the configuration allows app: kube-apiserver for this operator", allowance, pod("app: kube-apiserver"), "", ""},
		{"the configuration raises the bound", allowance, deployment("d", "", "  replicas: 5\n"), "", ""},
		{"on the guest, Endpoints are the guest's business", "", guest, "", ""},
		{"a Delete through an alias of HyperShift's own Secret", alias, aliased(contract.ActionDelete), policy.RuleReadOnly, "secrets oauth-server-crt is the environment's own object"},
		{"an Apply through an alias", alias, aliased(contract.ActionApply), policy.RuleReadOnly, "may not write (Apply)"},
		{"a Patch through an alias", alias, aliased(contract.ActionPatch), policy.RuleReadOnly, "may not write (Patch)"},
		{"a status write through an alias", alias, aliased(contract.ActionApplyStatus), policy.RuleReadOnly, "may not write (ApplyStatus)"},
		{"an Apply of another Secret beside the alias lands", alias, obj("", "secrets", "Secret", "other", "data: {a: YQ==}\n"), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n" +
				"  hosted: {namespace: clusters-example, hostedControlPlane: example}\n" + tc.config))
			if err != nil {
				t.Fatal(err)
			}
			engine, err := topology.Engine(cfg, "attacker", nil)
			if err != nil {
				t.Fatal(err)
			}
			plan := engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{tc.mutation}})
			var e *plans.Entry
			for i := range plan.Entries {
				if plan.Entries[i].Source.Name == tc.mutation.Identity().Name {
					e = &plan.Entries[i]
				}
			}
			if e == nil {
				t.Fatalf("no entry for %s in %+v", tc.mutation.Identity(), plan.Entries)
			}
			switch {
			case tc.rule == "" && e.Disposition != routing.Apply:
				t.Errorf("%s by %s: %s; want it applied", e.Disposition, e.Rule, e.Reason)
			case tc.rule != "" && (e.Disposition != routing.Rejected || e.Rule != tc.rule || !strings.Contains(e.Reason, tc.reason)):
				t.Errorf("%s by %s: %s; want rejected by %s naming %q", e.Disposition, e.Rule, e.Reason, tc.rule, tc.reason)
			}
		})
	}
}
