package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/transform"
)

// attackerOperator is the operator the attacks write as: the configuration names no such
// operator, so it gets the default policy.
const attackerOperator = "attacker"

// serverState is every object a cluster lists, by resource and namespace/name, with its uid
// and resourceVersion.
type serverState map[string]string

// churn are the resources the servers change on their own, whatever anyone writes:
// coordination.k8s.io leases (the API servers' identity leases, renewed every few seconds)
// and events (the API servers record their own asynchronously).
var churn = []schema.GroupResource{
	{Group: "coordination.k8s.io", Resource: "leases"},
	{Resource: "events"},
	{Group: "events.k8s.io", Resource: "events"},
}

// listAll lists every listable resource that cfg's server serves (discovery, preferred
// versions), in every namespace, except churn. (The first list of each CRD's resource takes
// the API server about a second, so the first snapshot of a test binary takes minutes.)
func listAll(t *testing.T, cfg *rest.Config) serverState {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatalf("discovery: %v", err)
	}
	_, dyn := clients(t, cfg)
	state := serverState{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") || slices.Contains(churn, schema.GroupResource{Group: gv.Group, Resource: r.Name}) {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list %s: %v", gv.WithResource(r.Name), err)
			}
			for _, o := range items.Items {
				key := schema.GroupResource{Group: gv.Group, Resource: r.Name}.String() + " " + o.GetNamespace() + "/" + o.GetName()
				state[key] = string(o.GetUID()) + "@" + o.GetResourceVersion()
			}
		}
	}
	return state
}

// bothServers snapshots the management and the guest cluster.
func bothServers(t *testing.T) map[string]serverState {
	t.Helper()
	return map[string]serverState{
		cluster.Management: listAll(t, hosted.Config(cluster.Management)),
		cluster.Guest:      listAll(t, hosted.Config(cluster.Guest)),
	}
}

// changed returns, per cluster, the keys of objects created, deleted or changed between two
// snapshots.
func changed(before, after map[string]serverState) map[string][]string {
	out := map[string][]string{}
	for c := range before {
		var diff []string
		for k, v := range after[c] {
			if before[c][k] != v {
				diff = append(diff, k)
			}
		}
		for k := range before[c] {
			if _, ok := after[c][k]; !ok {
				diff = append(diff, k)
			}
		}
		if len(diff) > 0 {
			slices.Sort(diff)
			out[c] = diff
		}
	}
	return out
}

// attack is one row of the attacker table: what an operator writes, and what happens.
type attack struct {
	name string
	// config is the configuration file; "" is examples/hosted.yaml, the default policy.
	config string
	// mutations are written to the output directory; declared says whether output-resources
	// declaring every one of them is passed (--output-resources).
	mutations []contract.Mutation
	declared  bool
	// declaredOnly are declared in the output-resources (with declared) but not written.
	declaredOnly []contract.Mutation
	// refused lists parts of the error, which names the field; nil means the plan is applied
	// (stripped or rewritten), and check looks at what landed.
	refused []string
	check   func(t *testing.T, landed map[string]*unstructured.Unstructured)
	// dropped is the rule that drops every mutation: nothing is applied, nothing changes.
	dropped string
	// after checks the clusters once the attack was refused.
	after func(t *testing.T)
	// seed is what the operator wrote in an earlier run: applied, and left live, before the
	// servers are listed (seedLive).
	seed []contract.Mutation
}

// TestAttackerTable writes, with the default configuration, what issue 15 found uncontained
// (its "It is not contained" paragraph), through `topolayer apply` against the real
// management and guest API servers. Each attack is refused with the field named in the error,
// and neither server changes (every listable resource, listed before and after); where the
// default strips (Pod Security) or rewrites (a volume's data source, ownerReferences), what
// lands is contained, checked on the live object, and is all that changed.
func TestAttackerTable(t *testing.T) {
	bin := binary(t, "topolayer")
	hcp := hosted.HostedControlPlane()
	ns := "openshift-attacker-" + uniqueSuffix(t)
	mgmtCS, mgmt := clients(t, hosted.Config(cluster.Management))
	guestCS, _ := clients(t, hosted.Config(cluster.Guest))
	kubeDir := writeKubeconfigs(t, hosted)

	// The HCP's own service account, whose token the operator must never get.
	if _, err := mgmtCS.CoreV1().ServiceAccounts(hcp.Namespace).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "control-plane-operator"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// What a HyperShift management cluster has: the control plane's priority class (bare Pods
	// are admitted only when the class they name exists).
	if _, err := mgmtCS.SchedulingV1().PriorityClasses().Create(t.Context(), &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "hypershift-control-plane"}, Value: 100000000,
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	live, err := mgmt.Resource(hypershift.HostedControlPlaneGVR()).Namespace(hcp.Namespace).Get(t.Context(), hcp.HostedControlPlane, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	reject := writeConfig(t, "reject.yaml", func(c map[string]any) { policyOf(c)["podSecurity"] = "reject" })
	listsAll := writeConfig(t, "lists-privileged.yaml", func(c map[string]any) {
		p := policyOf(c)
		ops, _ := p["operators"].([]any)
		p["operators"] = append(ops, map[string]any{"name": attackerOperator, "privileged": []any{
			map[string]any{"group": "apiextensions.k8s.io", "resource": "customresourcedefinitions"},
			map[string]any{"group": "admissionregistration.k8s.io", "resource": "validatingwebhookconfigurations"},
			map[string]any{"group": "apiregistration.k8s.io", "resource": "apiservices"},
		}})
	})
	renames := writeConfig(t, "renames.yaml", func(c map[string]any) {
		c["transforms"] = map[string]any{"patches": []any{map[string]any{
			"name": "rename", "match": map[string]any{"resource": "configmaps"}, "strategicMerge": "metadata: {name: pull-secret}\n",
		}}}
	})

	// HyperShift's own serving certificate, applied by the control-plane-operator, and a
	// configuration that aliases the attacker's serving-cert onto it and adopts what that
	// field manager applied (as the shipped CAO example does): the alias lets the operator
	// read HyperShift's object, and neither a Delete nor an Apply through it may land (apply
	// never runs the command).
	hcpCert := "oauth-server-crt-" + uniqueSuffix(t)
	if _, err := mgmtCS.CoreV1().Secrets(hcp.Namespace).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: hcpCert}, Data: map[string][]byte{"tls.crt": []byte("hypershift's")},
	}, metav1.CreateOptions{FieldManager: "control-plane-operator"}); err != nil {
		t.Fatal(err)
	}
	aliases := writeConfig(t, "aliases.yaml", func(c map[string]any) {
		c["namespaces"] = map[string]any{"aliases": []any{map[string]any{"resource": "secrets", "namespace": ns, "name": "serving-cert", "hostedName": hcpCert}}}
		ops, _ := c["operators"].([]any)
		c["operators"] = append(ops, map[string]any{"name": attackerOperator, "command": []any{"attacker"}, "adopt": map[string]any{"fieldManagers": []any{"control-plane-operator"}}})
	})
	aliasDelete := mutation(contract.ClassManagement, contract.ActionDelete, "/v1/secrets", ns, "serving-cert", "apiVersion: v1\nkind: DeleteOptions\n")
	aliasApply := mutation(contract.ClassManagement, contract.ActionApply, "/v1/secrets", ns, "serving-cert",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: serving-cert, namespace: "+ns+"}\ndata: {tls.crt: YXR0YWNrZXIncw==}\n")

	hostile := "      hostPID: true\n      hostNetwork: true\n      hostIPC: true\n      nodeName: master-0\n      runtimeClassName: performance-attacker\n" +
		"      volumes: [{name: root, hostPath: {path: /}}]\n" +
		"      containers:\n      - name: x\n        image: registry.example/x:1\n        volumeMounts: [{name: root, mountPath: /host}]\n" +
		"        securityContext: {privileged: true, runAsUser: 0, capabilities: {add: [SYS_ADMIN]}}\n"
	indent := func(s, by string) string {
		return strings.TrimSuffix(by+strings.ReplaceAll(s, "\n", "\n"+by), by)
	}
	podOnNode := mutation(contract.ClassManagement, contract.ActionApply, "/v1/pods", ns, "root",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: root, namespace: "+ns+"}\nspec:\n"+indent(strings.ReplaceAll(hostile, "      ", ""), "  "))
	pod := mutation(contract.ClassManagement, contract.ActionApply, "/v1/pods", ns, "root",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: root, namespace: "+ns+"}\nspec:\n"+indent(strings.ReplaceAll(strings.Replace(hostile, "      nodeName: master-0\n", "", 1), "      ", ""), "  "))
	workload := func(gvr, kind, name, extra string) contract.Mutation {
		return mutation(contract.ClassManagement, contract.ActionApply, gvr, ns, name,
			"apiVersion: "+strings.Join(strings.Split(gvr, "/")[:2], "/")+"\nkind: "+kind+"\nmetadata: {name: "+name+", namespace: "+ns+"}\n"+
				"spec:\n"+extra+"  template:\n    metadata: {labels: {app: "+name+"}}\n    spec:\n"+hostile)
	}
	deployment := workload("apps/v1/deployments", "Deployment", "root-deploy", "  selector: {matchLabels: {app: root-deploy}}\n")
	daemonSet := workload("apps/v1/daemonsets", "DaemonSet", "root-ds", "  selector: {matchLabels: {app: root-ds}}\n")
	job := workload("batch/v1/jobs", "Job", "root-job", "")
	job.Body = []byte(strings.Replace(string(job.Body), "    spec:\n", "    spec:\n      restartPolicy: Never\n", 1))

	rbac := func(class contract.Class, resource, kind, namespace, name, subject string) contract.Mutation {
		meta := "{name: " + name + "}"
		if namespace != "" {
			meta = "{name: " + name + ", namespace: " + namespace + "}"
		}
		return mutation(class, contract.ActionApply, "rbac.authorization.k8s.io/v1/"+resource, namespace, name,
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: "+kind+"\nmetadata: "+meta+"\n"+
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n"+
				"subjects:\n- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: \""+subject+"\"}\n")
	}
	webhook := mutation(contract.ClassUserWorkload, contract.ActionApply, "admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "", "deny-all",
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: deny-all}\nwebhooks:\n"+
			"- name: deny.attacker.example\n  failurePolicy: Fail\n  sideEffects: None\n  admissionReviewVersions: [v1]\n"+
			"  clientConfig: {url: \"https://attacker.example/deny\"}\n"+
			"  rules: [{apiGroups: [\"*\"], apiVersions: [\"*\"], operations: [\"*\"], resources: [\"*/*\"], scope: \"*\"}]\n")
	crd := mutation(contract.ClassUserWorkload, contract.ActionApply, "apiextensions.k8s.io/v1/customresourcedefinitions", "", "widgets.attacker.example",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.attacker.example}\n"+
			"spec:\n  group: attacker.example\n  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}\n  scope: Namespaced\n"+
			"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n")
	apiService := mutation(contract.ClassUserWorkload, contract.ActionApply, "apiregistration.k8s.io/v1/apiservices", "", "v1.attacker.example",
		"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.attacker.example}\n"+
			"spec: {group: attacker.example, version: v1, groupPriorityMinimum: 1000, versionPriority: 15, service: {namespace: default, name: attacker}}\n")
	token := mutation(contract.ClassManagement, contract.ActionApply, "/v1/secrets", ns, "cpo-token",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: cpo-token, namespace: "+ns+", annotations: {kubernetes.io/service-account.name: control-plane-operator}}\n"+
			"type: kubernetes.io/service-account-token\n")
	claim := func(name, source string) contract.Mutation {
		return mutation(contract.ClassManagement, contract.ActionApply, "/v1/persistentvolumeclaims", ns, name,
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: "+name+", namespace: "+ns+"}\n"+
				"spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n  "+source+"\n")
	}
	owned := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", ns, "owned",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  namespace: "+ns+"\n  ownerReferences:\n"+
			"  - {apiVersion: hypershift.openshift.io/v1beta1, kind: HostedControlPlane, name: "+hcp.HostedControlPlane+", uid: "+string(live.GetUID())+", blockOwnerDeletion: true, controller: true}\n"+
			"data: {a: b}\n")
	plain := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", ns, "settings",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "+ns+"}\ndata: {a: b}\n")

	plainObj := func(gvr, kind, name, rest string) contract.Mutation {
		return mutation(contract.ClassManagement, contract.ActionApply, gvr, ns, name,
			"apiVersion: "+strings.TrimPrefix(strings.Join(strings.Split(gvr, "/")[:2], "/"), "/")+"\nkind: "+kind+"\nmetadata: {name: "+name+", namespace: "+ns+"}\n"+rest)
	}
	// A privileged guest account that is not the operator's (the installer's, say).
	if _, err := guestCS.CoreV1().ServiceAccounts("kube-system").Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "e2e-privileged-admin"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	privilegedAccount := mutation(contract.ClassUserWorkload, contract.ActionApply, "/v1/serviceaccounts", "kube-system", "e2e-privileged-admin",
		"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: e2e-privileged-admin, namespace: kube-system}\n")
	foreignToken := mutation(contract.ClassUserWorkload, contract.ActionApply, "/v1/secrets", "kube-system", "admin-token",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: admin-token, namespace: kube-system, annotations: {kubernetes.io/service-account.name: e2e-privileged-admin}}\ntype: kubernetes.io/service-account-token\n")
	sameWriter := func(m contract.Mutation) contract.Mutation {
		m.Metadata.ControllerInstanceName, m.Metadata.FieldManager = "attacker", "attacker"
		return m
	}
	svc := func(name, spec string) contract.Mutation {
		return plainObj("/v1/services", "Service", name, "spec: {"+spec+"}\n")
	}
	endpoints := plainObj("/v1/endpoints", "Endpoints", "kube-apiserver", "subsets: [{addresses: [{ip: 192.0.2.1}], ports: [{port: 6443}]}]\n")
	endpointSlice := mutation(contract.ClassManagement, contract.ActionApply, "discovery.k8s.io/v1/endpointslices", ns, "kube-apiserver-extra",
		"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: kube-apiserver-extra, namespace: "+ns+", labels: {kubernetes.io/service-name: kube-apiserver}}\n"+
			"addressType: IPv4\nendpoints: [{addresses: [192.0.2.1]}]\nports: [{port: 6443}]\n")
	labelledPod := func(name, labels string) contract.Mutation {
		return mutation(contract.ClassManagement, contract.ActionApply, "/v1/pods", ns, name,
			"apiVersion: v1\nkind: Pod\nmetadata: {name: "+name+", namespace: "+ns+", labels: {"+labels+"}}\nspec: {containers: [{name: c, image: registry.example/x:1}]}\n")
	}
	quiet := "      containers:\n      - name: x\n        image: registry.example/x:1\n"
	named := func(name string) contract.Mutation {
		return mutation(contract.ClassManagement, contract.ActionApply, "apps/v1/deployments", ns, name,
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "+name+", namespace: "+ns+"}\n"+
				"spec:\n  selector: {matchLabels: {x: "+name+"}}\n  template:\n    metadata: {labels: {x: "+name+"}}\n    spec:\n"+quiet)
	}
	etcdLookalike := mutation(contract.ClassManagement, contract.ActionApply, "apps/v1/deployments", ns, "etcd-lookalike",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: etcd-lookalike, namespace: "+ns+"}\n"+
			"spec:\n  selector: {matchLabels: {app: etcd}}\n  template:\n    metadata: {labels: {app: etcd}}\n    spec:\n"+quiet)
	scaled := func(replicas int) contract.Mutation {
		m := named("many")
		m.Body = []byte(strings.Replace(string(m.Body), "spec:\n", "spec:\n  replicas: "+strconv.Itoa(replicas)+"\n", 1))
		return m
	}
	replicationController := plainObj("/v1/replicationcontrollers", "ReplicationController", "root-rc",
		"spec:\n  replicas: 1\n  selector: {app: root-rc}\n  template:\n    metadata: {labels: {app: root-rc}}\n    spec:\n"+hostile)
	podTemplate := plainObj("/v1/podtemplates", "PodTemplate", "root-template",
		"template:\n  metadata: {labels: {app: root-template}}\n  spec:\n"+indent(strings.ReplaceAll(hostile, "      ", ""), "    "))
	diskFiller := named("disk-filler")
	diskFiller.Body = []byte(strings.Replace(string(diskFiller.Body), "    spec:\n", "    spec:\n      volumes: [{name: fill, emptyDir: {sizeLimit: 1Ti}}]\n", 1))
	volume := func(name, v string) contract.Mutation {
		m := named(name)
		m.Body = []byte(strings.Replace(string(m.Body), "    spec:\n", "    spec:\n      volumes: ["+v+"]\n", 1))
		return m
	}
	inlineCSI := volume("cloud-secrets", "{name: cloud, csi: {driver: secrets-store.csi.k8s.io, readOnly: true, volumeAttributes: {secretProviderClass: management-cloud}}}")
	ephemeralClaim := volume("big-claim", "{name: big, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Ti}}}}}}")
	projected := named("token-reader")
	projected.Body = []byte(strings.Replace(string(projected.Body), "    spec:\n", "    spec:\n      volumes: [{name: token, projected: {sources: [{serviceAccountToken: {path: token}}]}}]\n", 1))

	// Issue 26 item 2: a custom resource kind whose spec embeds a pod template, served by the
	// management cluster, and configurations that allow it (and the built-in pod-bearing kinds
	// the allow-list refuses) for the attacker: the pod-spec checks alone stop what follows.
	gadgets := schema.GroupVersionResource{Group: "podspec.attacker.example", Version: "v1", Resource: "gadgets"}
	gadgetCRD := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": gadgets.GroupResource().String()},
		"spec": map[string]any{"group": gadgets.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
	crds := mgmt.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(t.Context(), gadgetCRD, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The management server is shared by the package's tests (TestEveryCRDEstablished counts
	// its CRDs): the kind goes with the test, its objects with it.
	t.Cleanup(func() {
		ctx := context.Background()
		if err := crds.Delete(ctx, gadgetCRD.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the gadgets CRD: %v", err)
			return
		}
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := crds.Get(ctx, gadgetCRD.GetName(), metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		}); err != nil {
			t.Errorf("the gadgets CRD is still there a minute after its deletion: %v", err)
		}
	})
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := mgmt.Resource(gadgets).Namespace(hcp.Namespace).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the gadgets CRD is not served: %v", err)
	}
	podSpecKinds := func(name string, reject bool) string {
		return writeConfig(t, name, func(c map[string]any) {
			p := policyOf(c)
			if reject {
				p["podSecurity"] = "reject"
			}
			ops, _ := p["operators"].([]any)
			p["operators"] = append(ops, map[string]any{"name": attackerOperator, "management": map[string]any{"kinds": []any{
				map[string]any{"group": "", "resource": "replicationcontrollers"},
				map[string]any{"group": "", "resource": "podtemplates"},
				map[string]any{"group": "apps", "resource": "replicasets"},
				map[string]any{"group": gadgets.Group, "resource": gadgets.Resource},
			}}})
		})
	}
	podSpecKindsReject, podSpecKindsStrip := podSpecKinds("pod-spec-kinds-reject.yaml", true), podSpecKinds("pod-spec-kinds-strip.yaml", false)
	replicaSet := workload("apps/v1/replicasets", "ReplicaSet", "root-rs", "  selector: {matchLabels: {app: root-rs}}\n")
	gadget := func(name, spec string) contract.Mutation {
		return plainObj(gadgets.Group+"/v1/gadgets", "Gadget", name, "spec:\n  replicas: 1\n  template:\n    metadata: {labels: {app: "+name+"}}\n    spec:\n"+spec)
	}
	tokenVolume := "      volumes: [{name: token, projected: {sources: [{serviceAccountToken: {path: token}}]}}]\n"
	tokenPod := plainObj("/v1/pods", "Pod", "token-pod", "spec:\n"+indent(strings.ReplaceAll(tokenVolume+quiet, "      ", ""), "  "))

	secretPatch := func(patchType, body string) contract.Mutation {
		m := mutation(contract.ClassManagement, contract.ActionPatch, "/v1/secrets", ns, "settings-secret", body)
		m.Metadata.PatchType = patchType
		return m
	}
	aggregated := mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/clusterroles", "", "attacker-aggregated",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: attacker-aggregated, labels: {rbac.authorization.k8s.io/aggregate-to-admin: \"true\"}}\n"+
			"rules:\n- {apiGroups: [\"\"], resources: [secrets], verbs: [get, list]}\n- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}\n")
	guestNS := "default"
	secretReader := mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/roles", guestNS, "secret-reader",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: secret-reader, namespace: "+guestNS+"}\n"+
			"rules:\n- {apiGroups: [\"\"], resources: [secrets], verbs: [get, list]}\n- {apiGroups: [\"\"], resources: [pods/exec], verbs: [create]}\n")
	guestBinding := func(name, roleKind, role, subjectKind, subject string) contract.Mutation {
		subjectNS := ""
		if subjectKind == "ServiceAccount" {
			subjectNS = ", namespace: " + guestNS
		}
		resource, kind, meta := "clusterrolebindings", "ClusterRoleBinding", "{name: "+name+"}"
		namespace := ""
		if roleKind == "Role" {
			resource, kind, meta, namespace = "rolebindings", "RoleBinding", "{name: "+name+", namespace: "+guestNS+"}", guestNS
		}
		return mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/"+resource, namespace, name,
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: "+kind+"\nmetadata: "+meta+"\n"+
				"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: "+roleKind+", name: "+role+"}\n"+
				"subjects:\n- {kind: "+subjectKind+", name: \""+subject+"\""+subjectNS+"}\n")
	}
	globalDefault := mutation(contract.ClassUserWorkload, contract.ActionApply, "scheduling.k8s.io/v1/priorityclasses", "", "attacker-default",
		"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: attacker-default}\nvalue: 1000000000\nglobalDefault: true\n")

	freezeAll := mutation(contract.ClassManagement, contract.ActionApply, "policy/v1/poddisruptionbudgets", hcp.Namespace, "freeze-all",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: freeze-all, namespace: "+hcp.Namespace+"}\nspec: {maxUnavailable: 0, selector: {}}\n")
	openAll := mutation(contract.ClassManagement, contract.ActionApply, "networking.k8s.io/v1/networkpolicies", hcp.Namespace, "open-all",
		"apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: open-all, namespace: "+hcp.Namespace+"}\n"+
			"spec: {podSelector: {}, ingress: [{}], policyTypes: [Ingress]}\n")
	scopedToHCPNamespace := func(path ...string) func(t *testing.T, landed map[string]*unstructured.Unstructured) {
		return func(t *testing.T, landed map[string]*unstructured.Unstructured) {
			if len(landed) == 0 {
				t.Fatal("nothing landed")
			}
			for key, obj := range landed {
				labels, _, _ := unstructured.NestedStringMap(obj.Object, path...)
				if labels["topolayer.dev/namespace"] != hcp.Namespace {
					t.Errorf("%s selects %v: not only the operator's pods of its simulated namespace %s", key, labels, hcp.Namespace)
				}
				t.Logf("%s landed selecting %v", key, labels)
			}
		}
	}
	restricted := func(t *testing.T, landed map[string]*unstructured.Unstructured) {
		t.Helper()
		for key, obj := range landed {
			meta, spec := podOf(t, obj)
			if meta == nil {
				continue
			}
			evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
			if err != nil {
				t.Fatal(err)
			}
			agg := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, meta, spec))
			if !agg.Allowed {
				t.Errorf("%s as it landed violates Pod Security restricted: %s", key, agg.ForbiddenDetail())
			}
			hostPaths := slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.HostPath != nil })
			if spec.NodeName != "" || hostPaths || spec.RuntimeClassName != nil {
				t.Errorf("%s kept nodeName %q, a runtime class %v or a hostPath volume: %v", key, spec.NodeName, spec.RuntimeClassName, spec.Volumes)
			}
			t.Logf("%s landed restricted: hostPID %v hostNetwork %v hostIPC %v, securityContext %+v", key, spec.HostPID, spec.HostNetwork, spec.HostIPC, spec.Containers[0].SecurityContext)
		}
	}
	hostileFields := []string{"hostNetwork=true", "hostPID=true", "hostIPC=true", "securityContext.privileged=true", `"SYS_ADMIN"`, `restricted volume type "hostPath"`, "nodeName"}

	attacks := []attack{
		{name: "a Management Pod bound to a node: privileged, host namespaces, SYS_ADMIN, hostPath /", mutations: []contract.Mutation{podOnNode}, declared: true, dropped: "hosted/drop-standalone-node"},
		{name: "a Management Pod: privileged, host namespaces, SYS_ADMIN, hostPath /; strip", mutations: []contract.Mutation{pod}, declared: true, check: restricted},
		{name: "the Pod with podSecurity reject", config: reject, mutations: []contract.Mutation{pod}, declared: true,
			refused: append([]string{"spec violates Pod Security \"restricted\""}, slices.DeleteFunc(slices.Clone(hostileFields), func(f string) bool { return f == "nodeName" })...)},
		{name: "a privileged Deployment; strip", mutations: []contract.Mutation{deployment}, declared: true, check: restricted},
		{name: "the Deployment with podSecurity reject", config: reject, mutations: []contract.Mutation{deployment}, declared: true, refused: append([]string{"spec.template.spec violates Pod Security \"restricted\""}, hostileFields...)},
		// A DaemonSet runs on every node of the shared management cluster: no HCP runs one.
		{name: "a privileged DaemonSet", mutations: []contract.Mutation{daemonSet}, declared: true, refused: []string{"policy/management-kind", "daemonsets.apps is not on the management cluster's allow-list"}},
		{name: "the DaemonSet with podSecurity reject", config: reject, mutations: []contract.Mutation{daemonSet}, declared: true, refused: []string{"daemonsets.apps is not on the management cluster's allow-list"}},
		{name: "a privileged Job; strip", mutations: []contract.Mutation{job}, declared: true, check: restricted},
		{name: "the Job with podSecurity reject", config: reject, mutations: []contract.Mutation{job}, declared: true, refused: append([]string{"spec.template.spec violates Pod Security \"restricted\""}, hostileFields...)},
		{name: "a RoleBinding of cluster-admin to system:unauthenticated in the HCP namespace",
			mutations: []contract.Mutation{rbac(contract.ClassManagement, "rolebindings", "RoleBinding", ns, "anonymous-admin", "system:unauthenticated")}, declared: true,
			refused: []string{"subjects[0] (Group system:unauthenticated)", "ClusterRole cluster-admin"},
			after: func(t *testing.T) {
				for _, user := range []struct {
					name   string
					groups []string
				}{{"system:anonymous", []string{"system:unauthenticated"}}, {"someone", []string{"system:authenticated"}}} {
					sar, err := mgmtCS.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
						User: user.name, Groups: user.groups, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: hcp.Namespace, Verb: "get", Resource: "secrets"},
					}}, metav1.CreateOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if sar.Status.Allowed {
						t.Errorf("%s may read the HCP's secrets", user.name)
					}
				}
			}},
		{name: "a ClusterRoleBinding of cluster-admin to system:authenticated on the guest",
			mutations: []contract.Mutation{rbac(contract.ClassUserWorkload, "clusterrolebindings", "ClusterRoleBinding", "", "everyone-admin", "system:authenticated")}, declared: true,
			refused: []string{"subjects[0] (Group system:authenticated)", "ClusterRole cluster-admin, which grants everything"}},
		{name: "a declared ValidatingWebhookConfiguration, failurePolicy Fail on */*, for the guest",
			mutations: []contract.Mutation{webhook}, declared: true,
			refused: []string{"validatingwebhookconfigurations.admissionregistration.k8s.io is privileged", "policy.operators[].privileged", "declarations are not enough"},
			after: func(t *testing.T) {
				// Every later guest write is still admitted.
				if _, err := guestCS.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-webhook"}},
					metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Errorf("a guest write after the refused webhook: %v", err)
				}
			}},
		{name: "privileged objects with --output-resources omitted, even where the configuration lists them", config: listsAll,
			mutations: []contract.Mutation{crd, webhook, apiService}, declared: false,
			refused: []string{"customresourcedefinitions.apiextensions.k8s.io is privileged", "apiservices.apiregistration.k8s.io is privileged", "the operator has no output-resources"}},
		{name: "privileged objects with --output-resources omitted, default configuration",
			mutations: []contract.Mutation{crd, webhook, apiService}, declared: false,
			refused: []string{"the configuration does not list it"}},
		{name: "a service-account-token Secret naming the control-plane-operator's account",
			mutations: []contract.Mutation{token}, declared: true,
			refused: []string{"metadata.annotations[kubernetes.io/service-account.name]", "control-plane-operator, which is not the operator's"}},
		{name: "a claim cloning the HCP's etcd volume from the HCP namespace",
			mutations: []contract.Mutation{claim("clone", "dataSourceRef: {kind: PersistentVolumeClaim, name: data-etcd-0, namespace: "+hcp.Namespace+"}")}, declared: true,
			refused: []string{"spec.dataSourceRef: clones from namespace " + hcp.Namespace}},
		{name: "a claim cloning a snapshot, whose names topolayer cannot map",
			mutations: []contract.Mutation{claim("restore", "dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: etcd-backup}")}, declared: true,
			refused: []string{"spec.dataSource: clones a VolumeSnapshot.snapshot.storage.k8s.io"}},
		{name: "a claim cloning data-etcd-0 by name: it clones its own simulated namespace's",
			mutations: []contract.Mutation{claim("copy", "dataSource: {kind: PersistentVolumeClaim, name: data-etcd-0}")}, declared: true,
			check: func(t *testing.T, landed map[string]*unstructured.Unstructured) {
				for key, obj := range landed {
					if got, _, _ := unstructured.NestedString(obj.Object, "spec", "dataSource", "name"); got != ns+"--data-etcd-0" {
						t.Errorf("%s clones %q, want %q", key, got, ns+"--data-etcd-0")
					}
				}
			}},
		{name: "operator-supplied ownerReferences: the HostedControlPlane, blocking its deletion",
			mutations: []contract.Mutation{owned}, declared: true,
			check: func(t *testing.T, landed map[string]*unstructured.Unstructured) {
				for key, obj := range landed {
					for _, r := range obj.GetOwnerReferences() {
						if r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
							t.Errorf("%s: the operator's ownerReference %+v landed", key, r)
						}
					}
					t.Logf("%s: ownerReferences as landed: the management target's own %v", key, obj.GetOwnerReferences())
				}
			}},
		{name: "asks to the management cluster's own service-ca and network operators: a serving certificate for a Service, its service CA and trust bundle in a ConfigMap",
			mutations: []contract.Mutation{
				// Headless: a cluster IP would be a change of its own (an IPAddress).
				mutation(contract.ClassManagement, contract.ActionApply, "/v1/services", ns, "signed",
					"apiVersion: v1\nkind: Service\nmetadata: {name: signed, namespace: "+ns+", annotations: {service.beta.openshift.io/serving-cert-secret-name: signed-cert}}\nspec: {clusterIP: None, ports: [{port: 443}]}\n"),
				mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", ns, "bundles",
					"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bundles, namespace: "+ns+", labels: {config.openshift.io/inject-trusted-cabundle: \"true\"}, annotations: {service.alpha.openshift.io/inject-cabundle: \"true\"}}\n"),
			}, declared: true,
			check: func(t *testing.T, landed map[string]*unstructured.Unstructured) {
				if len(landed) != 2 {
					t.Errorf("%d objects landed, want the Service and the ConfigMap", len(landed))
				}
				for key, obj := range landed {
					for _, k := range hypershift.ServiceCARequestAnnotations() {
						if v, ok := obj.GetAnnotations()[k]; ok {
							t.Errorf("%s: annotation %s=%q landed on the management cluster", key, k, v)
						}
					}
					if v, ok := obj.GetLabels()[hypershift.LabelInjectTrustedCABundle]; ok {
						t.Errorf("%s: label %s=%q landed on the management cluster", key, hypershift.LabelInjectTrustedCABundle, v)
					}
					if _, _, ok := transform.Withheld(obj.GetAnnotations()); !ok {
						t.Errorf("%s: no record of what was withheld: %v", key, obj.GetAnnotations())
					}
				}
			}},
		{name: "a Delete through an alias of HyperShift's serving certificate, its field manager adopted", config: aliases,
			mutations: []contract.Mutation{aliasDelete}, declared: true, refused: []string{"policy/read-only", "secrets " + hcpCert + " is the environment's own object"}},
		{name: "an Apply through the same alias", config: aliases,
			mutations: []contract.Mutation{aliasApply}, declared: true, refused: []string{"policy/read-only", "may not write (Apply)"}},
		{name: "a configuration patch renaming objects to an HCP one after planning", config: renames,
			mutations: []contract.Mutation{plain}, declared: true,
			refused: []string{"transforms.patches[0].strategicMerge", "the patch touches metadata.name"},
			after: func(t *testing.T) {
				_, stderr, err := cliRun(t, bin, "validate", "--config", renames)
				if err == nil || !strings.Contains(stderr, "transforms.patches[0].strategicMerge") {
					t.Errorf("topolayer validate: %v, %s; want the patch refused, its field named", err, stderr)
				}
			}},
		// Containment by allow-list (issue 26): what is not known safe in the HCP namespace is
		// refused, by kind, by field, by label, on the object as it would be written.
		{name: "Endpoints joining HyperShift's kube-apiserver Service", mutations: []contract.Mutation{endpoints}, declared: true,
			refused: []string{"policy/management-kind", "endpoints is not on the management cluster's allow-list"}},
		{name: "an EndpointSlice labelled kubernetes.io/service-name: kube-apiserver", mutations: []contract.Mutation{endpointSlice}, declared: true,
			refused: []string{"policy/management-kind", "endpointslices.discovery.k8s.io"}},
		{name: "a Pod labelled app: kube-apiserver (an endpoint of HyperShift's API Service)", mutations: []contract.Mutation{labelledPod("kas", "app: kube-apiserver")}, declared: true,
			refused: []string{"policy/reserved-labels", "metadata.labels[app]: app=kube-apiserver is reserved"}},
		{name: "a Pod labelled as HyperShift's etcd component (admitted by its NetworkPolicy)", mutations: []contract.Mutation{labelledPod("etcd-peer", "app: etcd")}, declared: true,
			refused: []string{"policy/reserved-labels", "app=etcd is reserved"}},
		{name: "a Pod with a hypershift.openshift.io/ label", mutations: []contract.Mutation{labelledPod("kas-access", "hypershift.openshift.io/need-management-kas-access: \"true\"")}, declared: true,
			refused: []string{"policy/reserved-labels", "hypershift.openshift.io/need-management-kas-access"}},
		{name: "a Deployment whose pods are labelled app: etcd", mutations: []contract.Mutation{etcdLookalike}, declared: true,
			refused: []string{"policy/reserved-labels", "app=etcd is reserved"}},
		{name: "a Deployment named etcd (the profile's component label would be HyperShift's)", mutations: []contract.Mutation{named("etcd")}, declared: true,
			refused: []string{"policy/reserved-labels", "hypershift.openshift.io/control-plane-component=etcd is reserved"}},
		{name: "a NodePort Service selecting app: etcd", mutations: []contract.Mutation{svc("etcd-nodeport", "type: NodePort, selector: {app: etcd}, ports: [{port: 2379}]")}, declared: true,
			refused: []string{"policy/management-fields", "spec.type: NodePort"}},
		{name: "a LoadBalancer Service", mutations: []contract.Mutation{svc("lb", "type: LoadBalancer, ports: [{port: 443}]")}, declared: true,
			refused: []string{"policy/management-fields", "spec.type: LoadBalancer"}},
		{name: "an ExternalName Service", mutations: []contract.Mutation{svc("ext", "type: ExternalName, externalName: attacker.example")}, declared: true,
			refused: []string{"policy/management-fields", "spec.type: ExternalName"}},
		{name: "a Service with externalIPs", mutations: []contract.Mutation{svc("external-ips", "externalIPs: [192.0.2.10], ports: [{port: 443}]")}, declared: true,
			refused: []string{"policy/management-fields", "spec.externalIPs"}},
		{name: "a Service with a fixed node port", mutations: []contract.Mutation{svc("fixed-node-port", "ports: [{port: 443, nodePort: 30443}]")}, declared: true,
			refused: []string{"policy/management-fields", "spec.ports[0].nodePort"}},
		{name: "a Service with a fixed cluster IP", mutations: []contract.Mutation{svc("fixed-ip", "clusterIP: 10.0.0.200, ports: [{port: 443}]")}, declared: true,
			refused: []string{"policy/management-fields", "spec.clusterIP: 10.0.0.200"}},
		{name: "a ResourceQuota refusing HyperShift's own pods", mutations: []contract.Mutation{plainObj("/v1/resourcequotas", "ResourceQuota", "no-pods", "spec: {hard: {pods: \"0\"}}\n")}, declared: true,
			refused: []string{"policy/management-kind", "resourcequotas"}},
		{name: "a LimitRange refusing HyperShift's own pods", mutations: []contract.Mutation{plainObj("/v1/limitranges", "LimitRange", "tiny", "spec: {limits: [{type: Container, max: {memory: 1Mi}}]}\n")}, declared: true,
			refused: []string{"policy/management-kind", "limitranges"}},
		{name: "a claim binding another tenant's volume by volumeName", mutations: []contract.Mutation{claim("steal", "volumeName: pv-clusters-other-etcd-0")}, declared: true,
			refused: []string{"policy/management-fields", "spec.volumeName"}},
		{name: "a PersistentVolumeClaim of 10Ti", mutations: []contract.Mutation{mutation(contract.ClassManagement, contract.ActionApply, "/v1/persistentvolumeclaims", ns, "hoard",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: hoard, namespace: "+ns+"}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 10Ti}}\n")}, declared: true,
			refused: []string{"policy/management-fields", "spec.resources.requests.storage: 10Ti is over the management cluster's bound of 8Gi for one claim"}},
		{name: "a patch growing a claim the plan creates earlier to 10Ti", mutations: []contract.Mutation{claim("grown", ""),
			patchOf(claim("grown", ""), contract.PatchTypeMerge, `{"spec":{"resources":{"requests":{"storage":"10Ti"}}}}`)}, declared: true,
			refused: []string{"policy/management-fields", "spec.resources.requests.storage: 10Ti", "writes earlier in the plan"}},
		{name: "a Deployment of 100,000 replicas", mutations: []contract.Mutation{scaled(100000)}, declared: true,
			refused: []string{"policy/management-fields", "spec.replicas: 100000 is over the management cluster's bound of 3"}},
		{name: "a Deployment filling its node's disk through a scratch volume of 1Ti", mutations: []contract.Mutation{diskFiller}, declared: true,
			refused: []string{"policy/management-fields", "emptyDir sizeLimits add up to 1Ti, over the management cluster's bound of 2Gi"}},
		{name: "an inline CSI volume of the management cluster's secrets-store driver", mutations: []contract.Mutation{inlineCSI}, declared: true,
			refused: []string{"policy/management-fields", "spec.template.spec.volumes[0].csi: a pod on the shared management cluster may mount configMap, secret, downwardAPI, projected, emptyDir and persistentVolumeClaim volumes"}},
		{name: "a generic ephemeral volume of 10Ti", mutations: []contract.Mutation{ephemeralClaim}, declared: true,
			refused: []string{"policy/management-fields", "spec.template.spec.volumes[0].ephemeral: "}},
		{name: "a patch making a Deployment's root filesystem writable without a limit", mutations: []contract.Mutation{named("writable-root"),
			patchOf(named("writable-root"), contract.PatchTypeStrategicMerge, `{"spec":{"template":{"spec":{"containers":[{"name":"x","resources":{"limits":{"ephemeral-storage":null}},"securityContext":{"readOnlyRootFilesystem":false}}]}}}}`)}, declared: true,
			refused: []string{"policy/management-fields", "spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem: not true, and no container of the pod sets a positive resources.limits.ephemeral-storage", "writes earlier in the plan"}},
		{name: "an Ingress claiming another tenant's host", mutations: []contract.Mutation{plainObj("networking.k8s.io/v1/ingresses", "Ingress", "steal-host", "spec: {rules: [{host: console.clusters-other.example}]}\n")}, declared: true,
			refused: []string{"policy/management-kind", "ingresses.networking.k8s.io"}},
		{name: "a second HostedControlPlane", mutations: []contract.Mutation{plainObj("hypershift.openshift.io/v1beta1/hostedcontrolplanes", "HostedControlPlane", "second", "spec: {}\n")}, declared: true,
			refused: []string{"policy/management-kind", "hostedcontrolplanes.hypershift.openshift.io"}},
		{name: "a privileged ReplicationController (hostPID, hostNetwork, SYS_ADMIN, hostPath /)", mutations: []contract.Mutation{replicationController}, declared: true,
			refused: []string{"policy/management-kind", "replicationcontrollers"}},
		{name: "a PodTemplate with host namespaces", mutations: []contract.Mutation{podTemplate}, declared: true,
			refused: []string{"policy/management-kind", "podtemplates"}},
		{name: "a projected service-account token: the management API as the renamed account", mutations: []contract.Mutation{projected}, declared: true,
			refused: []string{"policy/management-fields", "spec.template.spec.volumes[0].projected.sources[0].serviceAccountToken"}},
		// Objects whose standalone namespace is the HCP namespace itself are scoped like any
		// simulated namespace: they select only the operator's pods there, never HyperShift's.
		{name: "a PDB with maxUnavailable 0 over every pod, written in the HCP namespace", mutations: []contract.Mutation{freezeAll}, declared: true, check: scopedToHCPNamespace("spec", "selector", "matchLabels")},
		{name: "a NetworkPolicy opening every pod, written in the HCP namespace", mutations: []contract.Mutation{openAll}, declared: true, check: scopedToHCPNamespace("spec", "podSelector", "matchLabels")},
		// The patch spellings: a patch is judged by the fields the API server will change.
		{name: "a JSON patch spelling the token annotation kubernetes.io~1service-account.name", mutations: []contract.Mutation{secretPatch(contract.PatchTypeJSON,
			`[{"op":"add","path":"/metadata/annotations/kubernetes.io~1service-account.name","value":"control-plane-operator"},{"op":"add","path":"/type","value":"kubernetes.io/service-account-token"}]`)}, declared: true,
			refused: []string{"policy/service-account-token", "however the patch spells it"}},
		{name: "a merge patch spelling the token annotation with an escaped slash", mutations: []contract.Mutation{secretPatch(contract.PatchTypeMerge,
			`{"metadata":{"annotations":{"kubernetes.io\/service-account.name":"control-plane-operator"}},"type":"kubernetes.io/service-account-token"}`)}, declared: true,
			refused: []string{"policy/service-account-token", "however the patch spells it"}},
		// The guest is not weakened by default.
		{name: "a ClusterRole aggregated into admin granting secrets and escalate, on the guest", mutations: []contract.Mutation{aggregated}, declared: true,
			refused: []string{"policy/privileged-object", "rbac.authorization.k8s.io/aggregate-to-admin adds its rules to a default role"}},
		{name: "system:authenticated bound to reading secrets and exec, on the guest", mutations: []contract.Mutation{secretReader, guestBinding("everyone-reads-secrets", "Role", "secret-reader", "Group", "system:authenticated")}, declared: true,
			refused: []string{"policy/rbac-containment", "grants get,list on secrets"}},
		{name: "cluster-admin bound to a named user, on the guest", mutations: []contract.Mutation{guestBinding("alice-admin", "ClusterRole", "cluster-admin", "User", "alice")}, declared: true,
			refused: []string{"policy/rbac-containment", "a named user or a namespace's default service account with everything"}},
		{name: "cluster-admin bound to default/default, on the guest", mutations: []contract.Mutation{guestBinding("default-admin", "ClusterRole", "cluster-admin", "ServiceAccount", "default")}, declared: true,
			refused: []string{"policy/rbac-containment", "a named user or a namespace's default service account with everything"}},
		{name: "a global-default PriorityClass on the guest", mutations: []contract.Mutation{globalDefault}, declared: true,
			refused: []string{"policy/privileged-object", "globalDefault: every pod without a priority class would get it"}},
		// A token Secret for a privileged guest account the operator merely declares.
		{name: "a token Secret for a guest account the operator only declares", mutations: []contract.Mutation{foreignToken}, declared: true,
			declaredOnly: []contract.Mutation{privilegedAccount},
			refused:      []string{"policy/service-account-token", "service account kube-system/e2e-privileged-admin on the guest cluster is not operator", "declaring an account is not owning it"}},
		// Faults (issue 26 item 7): two files for one object are refused with both names.
		{name: "two files writing one object, as one writer, with two bodies", mutations: []contract.Mutation{
			sameWriter(plainObj("/v1/configmaps", "ConfigMap", "twice", "data: {mode: harmless}\n")),
			sameWriter(plainObj("/v1/configmaps", "ConfigMap", "twice", "data: {mode: hostile}\n"))}, declared: true,
			refused: []string{"duplicate-write", "is written twice in this output by controller attacker (field manager attacker)", "-body-twice.yaml and Management/Apply/"}},
		// A patch is judged by the object it makes, whatever its spelling (issue 26, item 3): of a
		// live object, on what the server's dry-run returns; of an object the plan writes
		// earlier, on that entry's object, offline.
		{name: "a merge patch of a live ConfigMap in the HCP namespace setting app: kube-apiserver",
			seed:      []contract.Mutation{plainObj("/v1/configmaps", "ConfigMap", "live-settings", "data: {a: b}\n")},
			mutations: []contract.Mutation{patchOf(plainObj("/v1/configmaps", "ConfigMap", "live-settings", ""), contract.PatchTypeMerge, `{"metadata":{"labels":{"app":"kube-apiserver"}}}`)}, declared: true,
			refused: []string{"policy/reserved-labels", "metadata.labels[app]: app=kube-apiserver is reserved", "what the server says it makes of the live object"}},
		{name: "a JSON patch turning a live Service into NodePort",
			seed:      []contract.Mutation{svc("live-web", "ports: [{port: 443}]")},
			mutations: []contract.Mutation{patchOf(svc("live-web", ""), contract.PatchTypeJSON, `[{"op":"replace","path":"/spec/type","value":"NodePort"}]`)}, declared: true,
			refused: []string{"policy/management-fields", "spec.type: NodePort", "what the server says it makes of the live object"}},
		{name: "a strategic-merge patch adding externalIPs to a live Service",
			seed:      []contract.Mutation{svc("live-ips", "ports: [{port: 443}]")},
			mutations: []contract.Mutation{patchOf(svc("live-ips", ""), contract.PatchTypeStrategicMerge, `{"spec":{"externalIPs":["192.0.2.10"]}}`)}, declared: true,
			refused: []string{"policy/management-fields", "spec.externalIPs"}},
		{name: "a patch, with an escaped slash, of a ConfigMap the plan creates earlier, setting a hypershift.openshift.io/ label",
			mutations: []contract.Mutation{
				mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", ns, "new-settings", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new-settings, namespace: "+ns+"}\ndata: {a: b}\n"),
				patchOf(plainObj("/v1/configmaps", "ConfigMap", "new-settings", ""), contract.PatchTypeMerge, `{"metadata":{"labels":{"hypershift.openshift.io\/need-management-kas-access":"true"}}}`),
			}, declared: true,
			refused: []string{"policy/reserved-labels", "hypershift.openshift.io/need-management-kas-access", "writes earlier in the plan"}},
		{name: "a harmless JSON patch of a live ConfigMap's data lands",
			seed:      []contract.Mutation{plainObj("/v1/configmaps", "ConfigMap", "live-data", "data: {a: b}\n")},
			mutations: []contract.Mutation{patchOf(plainObj("/v1/configmaps", "ConfigMap", "live-data", ""), contract.PatchTypeJSON, `[{"op":"replace","path":"/data/a","value":"c"}]`)}, declared: true,
			check: func(t *testing.T, landed map[string]*unstructured.Unstructured) {
				if len(landed) != 1 {
					t.Fatalf("landed %v, want the patched ConfigMap", landed)
				}
				for key, obj := range landed {
					if got, _, _ := unstructured.NestedString(obj.Object, "data", "a"); got != "c" {
						t.Errorf("%s: data.a is %q, want the patch's c", key, got)
					}
				}
			}},
		{name: "a harmless merge patch of a live Service's ports lands (its server-assigned cluster IP is not the operator's)",
			seed:      []contract.Mutation{svc("live-ports", "ports: [{port: 443}]")},
			mutations: []contract.Mutation{patchOf(svc("live-ports", ""), contract.PatchTypeMerge, `{"spec":{"ports":[{"port":8443}]}}`)}, declared: true,
			check: func(t *testing.T, landed map[string]*unstructured.Unstructured) {
				for key, obj := range landed {
					if typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); typ != "ClusterIP" {
						t.Errorf("%s: spec.type %q, want ClusterIP", key, typ)
					}
				}
			}},
		// Issue 26 item 2: every pod-bearing object, its pod specs found by translate/podspec
		// (built-in kinds by their paths, custom resources by a PodSpec's shape), not by a list
		// of kinds. The configuration allows these kinds on the management cluster, so the
		// pod-spec checks are what stop them.
		{name: "a privileged ReplicationController, its kind allowed", config: podSpecKindsReject, mutations: []contract.Mutation{replicationController}, declared: true,
			refused: []string{"policy/pod-security", "spec.template.spec violates Pod Security \"restricted\"", "host namespaces", "privileged"}},
		{name: "a privileged PodTemplate, its kind allowed", config: podSpecKindsReject, mutations: []contract.Mutation{podTemplate}, declared: true,
			refused: []string{"policy/pod-security", "template.spec violates Pod Security \"restricted\"", "restricted volume types"}},
		{name: "a privileged ReplicaSet, its kind allowed", config: podSpecKindsReject, mutations: []contract.Mutation{replicaSet}, declared: true,
			refused: []string{"policy/pod-security", "spec.template.spec violates Pod Security \"restricted\"", "host namespaces"}},
		{name: "a custom resource embedding a privileged pod template that mounts a projected service-account token", config: podSpecKindsReject,
			mutations: []contract.Mutation{gadget("root-gadget", strings.Replace(hostile, "volumes: [", "volumes: [{name: token, projected: {sources: [{serviceAccountToken: {path: token}}]}}, ", 1))}, declared: true,
			refused: []string{"policy/management-fields", "spec.template.spec.volumes[0].projected.sources[0].serviceAccountToken"}},
		{name: "a custom resource embedding a privileged pod template", config: podSpecKindsReject, mutations: []contract.Mutation{gadget("root-gadget", hostile)}, declared: true,
			refused: []string{"policy/pod-security", "spec.template.spec violates Pod Security \"restricted\"", "host namespaces", "spec.template.spec.nodeName"}},
		{name: "a custom resource embedding a privileged pod template, stripped by default", config: podSpecKindsStrip,
			mutations: []contract.Mutation{gadget("stripped-gadget", strings.Replace(hostile, "      nodeName: master-0\n", "", 1))}, declared: true,
			check: func(t *testing.T, landed map[string]*unstructured.Unstructured) {
				if len(landed) != 1 {
					t.Fatalf("landed %d objects, want the gadget", len(landed))
				}
				for key, obj := range landed {
					spec, _, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec")
					var tmpl corev1.PodTemplateSpec
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"spec": spec}, &tmpl); err != nil {
						t.Fatal(err)
					}
					eval, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
					if err != nil {
						t.Fatal(err)
					}
					res := psapolicy.AggregateCheckResults(eval.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &tmpl.ObjectMeta, &tmpl.Spec))
					if !res.Allowed {
						t.Errorf("%s: landed pod template is not restricted: %s", key, res.ForbiddenDetail())
					}
					if tmpl.Spec.AutomountServiceAccountToken == nil || *tmpl.Spec.AutomountServiceAccountToken {
						t.Errorf("%s: the pod template mounts a management API token", key)
					}
				}
			}},
		{name: "a Pod mounting a projected service-account token on the management cluster", mutations: []contract.Mutation{tokenPod}, declared: true,
			refused: []string{"policy/management-fields", "spec.volumes[0].projected.sources[0].serviceAccountToken"}},
	}

	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			from := filepath.Join(t.TempDir(), "out")
			if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: a.mutations}, contract.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			config := a.config
			if config == "" {
				config = filepath.Join("..", "examples", "hosted.yaml")
			}
			sources := []string{"--config", config, "--from", from, "--operator", attackerOperator, "-o", "json"}
			if a.declared {
				sources = append(sources, "--output-resources", declarations(t, append(slices.Clone(a.mutations), a.declaredOnly...)))
			}
			args := append(append([]string{"apply"}, sources...), hostedKubeconfigFlags(kubeDir)...)

			if len(a.seed) > 0 {
				seedLive(t, bin, kubeDir, a.seed)
			}
			before := bothServers(t)
			start := time.Now()
			stdout, stderr, err := cliRun(t, bin, args...)
			t.Logf("topolayer apply took %s", time.Since(start).Round(time.Millisecond))
			after := bothServers(t)
			diff := changed(before, after)

			if a.refused != nil {
				if err == nil {
					t.Fatalf("applied:\n%s", stdout)
				}
				for _, part := range a.refused {
					// A plan refused whole says why on stderr; an entry refused when applied,
					// in its result on stdout.
					if !strings.Contains(stderr+stdout, part) {
						t.Errorf("the error does not name %q:\n%s%s", part, stdout, stderr)
					}
				}
				t.Logf("refused: %s", strings.TrimSpace(stderr))
				if len(diff) > 0 {
					t.Errorf("the servers changed: %v", diff)
				}
				if a.after != nil {
					a.after(t)
				}
				return
			}

			if err != nil {
				t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
			}
			if a.dropped != "" {
				if strings.TrimSpace(stdout) != "[]" || len(diff) > 0 {
					t.Errorf("applied %s, the servers changed by %v; want nothing", stdout, diff)
				}
				plan, stderr, err := cliRun(t, bin, append([]string{"plan"}, sources...)...)
				if err != nil || !strings.Contains(plan, a.dropped) {
					t.Errorf("plan: %v %s; want every mutation dropped by %s:\n%s", err, stderr, a.dropped, plan)
				}
				return
			}
			// What may change: the objects applied (the attack's, contained), and what the
			// operand's guest identity brings (hosted/guest-identity: its namespace, service
			// account and their RBAC on the guest; its kubeconfig Secret on management).
			landed := map[string]*unstructured.Unstructured{}
			want := map[string][]string{}
			for _, r := range parseApply(t, stdout) {
				if r.Cluster == cluster.Guest || !isSource(a.mutations, r.Source) {
					gr, rest, _ := strings.Cut(r.Target, "/")
					if !guestIdentityKinds[gr] {
						t.Fatalf("%s landed on %s as %s", r.Source, r.Cluster, r.Target)
					}
					if r.Status == "applied" {
						ns, name, found := strings.Cut(rest, "/")
						if !found {
							ns, name = "", rest
						}
						want[r.Cluster] = append(want[r.Cluster], gr+" "+ns+"/"+name)
					}
					continue
				}
				if r.Cluster != cluster.Management {
					t.Fatalf("%s landed on %s", r.Source, r.Cluster)
				}
				id := targetIdentity(t, a.mutations, r)
				obj, err := resourceOf(mgmt, id).Get(t.Context(), id.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				landed[r.Cluster+":"+id.String()] = obj
				want[r.Cluster] = append(want[r.Cluster], id.GroupResource().String()+" "+id.Namespace+"/"+id.Name)
				t.Cleanup(func() {
					zero := int64(0)
					if err := resourceOf(mgmt, id).Delete(context.Background(), id.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
						t.Errorf("clean up %s: %v", id, err)
					}
				})
			}
			for _, k := range diff[cluster.Management] {
				if strings.HasPrefix(k, "secrets "+hcp.Namespace+"/guest-kubeconfig.") && !slices.Contains(want[cluster.Management], k) {
					want[cluster.Management] = append(want[cluster.Management], k)
				}
			}
			for _, c := range []string{cluster.Management, cluster.Guest} {
				slices.Sort(want[c])
				if got := diff[c]; !slices.Equal(got, want[c]) {
					t.Errorf("%s changed by %v, want only %v", c, got, want[c])
				}
			}
			a.check(t, landed)
		})
	}
}

// guestIdentityKinds are the resources hosted/guest-identity writes on the guest for an
// operand of the management cluster: its namespace, its service account, and their RBAC.
var guestIdentityKinds = map[string]bool{
	"namespaces": true, "serviceaccounts": true,
	"roles.rbac.authorization.k8s.io": true, "rolebindings.rbac.authorization.k8s.io": true,
	"clusterroles.rbac.authorization.k8s.io": true, "clusterrolebindings.rbac.authorization.k8s.io": true,
}

// isSource reports whether source (group-resource/namespace/name) is one of ms.
func isSource(ms []contract.Mutation, source string) bool {
	for _, m := range ms {
		id := m.Identity()
		if source == id.GroupResource().String()+"/"+id.Namespace+"/"+id.Name {
			return true
		}
	}
	return false
}

// targetIdentity returns the identity on its cluster of an apply result's object (results
// name objects as group-resource/namespace/name).
func targetIdentity(t *testing.T, ms []contract.Mutation, r cliApplyResult) contract.Identity {
	t.Helper()
	for _, m := range ms {
		id := m.Identity()
		gr := id.GroupResource().String()
		if r.Source != gr+"/"+id.Namespace+"/"+id.Name {
			continue
		}
		ns, name, ok := strings.Cut(strings.TrimPrefix(r.Target, gr+"/"), "/")
		if !ok {
			t.Fatalf("target %q is not %s/namespace/name", r.Target, gr)
		}
		id.Namespace, id.Name = ns, name
		return id
	}
	t.Fatalf("no mutation is the source %q", r.Source)
	return contract.Identity{}
}

// podOf returns the pod metadata and spec of a live Pod, Deployment, DaemonSet or Job; nil
// for other kinds.
func podOf(t *testing.T, obj *unstructured.Unstructured) (*metav1.ObjectMeta, *corev1.PodSpec) {
	t.Helper()
	decode := func(v any) {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, v); err != nil {
			t.Fatal(err)
		}
	}
	switch obj.GetKind() {
	case "Pod":
		var p corev1.Pod
		decode(&p)
		return &p.ObjectMeta, &p.Spec
	case "Deployment":
		var d appsv1.Deployment
		decode(&d)
		return &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec
	case "DaemonSet":
		var d appsv1.DaemonSet
		decode(&d)
		return &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec
	case "Job":
		var j batchv1.Job
		decode(&j)
		return &j.Spec.Template.ObjectMeta, &j.Spec.Template.Spec
	}
	return nil, nil
}

// declarations writes output-resources that declare every mutation by name, in its class,
// and returns the file.
func declarations(t *testing.T, ms []contract.Mutation) string {
	t.Helper()
	var out contract.OutputResources
	for _, m := range ms {
		id := m.Identity()
		l := out.ForClass(m.Class)
		l.ExactResources = append(l.ExactResources, contract.ExactResourceID{
			ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: id.Group, Version: id.Version, Resource: id.Resource},
			Namespace:              id.Namespace, Name: id.Name,
		})
	}
	return writeYAML(t, "output-resources.yaml", out)
}

// writeConfig writes examples/hosted.yaml changed by edit into a file of the test's own.
func writeConfig(t *testing.T, name string, edit func(map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", "hosted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	return writeYAML(t, name, c)
}

// policyOf returns the policy section of a configuration, creating it.
func policyOf(c map[string]any) map[string]any {
	p, ok := c["policy"].(map[string]any)
	if !ok {
		p = map[string]any{}
		c["policy"] = p
	}
	return p
}

// TestAttackerCrossRunRBAC: RBAC is checked on the state the guest will hold, not on one plan.
// Run 1 binds system:authenticated to a harmless Role it writes (contained: the role's rules
// are read); run 2 widens that Role to '*' on '*' (contained on its own: it binds nothing).
// Together any authenticated user could do anything: run 2 is refused before anything is
// written, naming the live binding, and no authenticated user gains a permission.
func TestAttackerCrossRunRBAC(t *testing.T) {
	bin := binary(t, "topolayer")
	kubeDir := writeKubeconfigs(t, hosted)
	guestCS, _ := clients(t, hosted.Config(cluster.Guest))
	suffix := uniqueSuffix(t)
	role := func(rules string) contract.Mutation {
		return mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/roles", "default", "reader-"+suffix,
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader-"+suffix+", namespace: default}\nrules:\n"+rules)
	}
	binding := mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/rolebindings", "default", "everyone-"+suffix,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: everyone-"+suffix+", namespace: default}\n"+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader-"+suffix+"}\n"+
			"subjects:\n- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: \"system:authenticated\"}\n")
	apply := func(ms ...contract.Mutation) (string, string, error) {
		from := filepath.Join(t.TempDir(), "out")
		if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"apply", "--config", filepath.Join("..", "examples", "hosted.yaml"), "--from", from, "--operator", attackerOperator,
			"--output-resources", declarations(t, ms), "-o", "json"}, hostedKubeconfigFlags(kubeDir)...)
		return cliRun(t, bin, args...)
	}
	t.Cleanup(func() {
		_ = guestCS.RbacV1().RoleBindings("default").Delete(context.Background(), "everyone-"+suffix, metav1.DeleteOptions{})
		_ = guestCS.RbacV1().Roles("default").Delete(context.Background(), "reader-"+suffix, metav1.DeleteOptions{})
	})
	can := func(verb, resource string) bool {
		sar, err := guestCS.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "someone", Groups: []string{"system:authenticated"}, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: verb, Resource: resource},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}

	if stdout, stderr, err := apply(role("- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n"), binding); err != nil {
		t.Fatalf("run 1 (a reader role bound to system:authenticated): %v\n%s%s", err, stdout, stderr)
	}
	if !can("get", "configmaps") || can("get", "secrets") {
		t.Fatalf("after run 1 an authenticated user may get configmaps %v, secrets %v; want true, false", can("get", "configmaps"), can("get", "secrets"))
	}
	before := bothServers(t)
	stdout, stderr, err := apply(role("- {apiGroups: [\"*\"], resources: [\"*\"], verbs: [\"*\"]}\n"))
	after := bothServers(t)
	if err == nil {
		t.Fatalf("run 2 widened the bound role:\n%s", stdout)
	}
	for _, part := range []string{"policy/rbac-containment", "default/everyone-" + suffix, "Group system:authenticated", "'*'"} {
		if !strings.Contains(stderr, part) {
			t.Errorf("run 2's error does not name %q:\n%s", part, stderr)
		}
	}
	if diff := changed(before, after); len(diff) > 0 {
		t.Errorf("run 2 changed the servers: %v", diff)
	}
	if can("get", "secrets") || can("delete", "pods") {
		t.Error("after run 2 an authenticated user may read secrets or delete pods")
	}
	t.Logf("run 2 refused: %s", strings.TrimSpace(stderr))
}

// patchOf returns the Patch of m's object (its class and identity), of patchType, with body.
func patchOf(m contract.Mutation, patchType, body string) contract.Mutation {
	m.Metadata.Action, m.Metadata.PatchType, m.Body = contract.ActionPatch, patchType, []byte(body)
	return m
}

// seedLive applies ms as the attacker operator, with the default configuration, through
// `topolayer apply`: what its earlier run left live, which the attack then patches. The
// objects are deleted when the test ends.
func seedLive(t *testing.T, bin, kubeDir string, ms []contract.Mutation) {
	t.Helper()
	from := filepath.Join(t.TempDir(), "seed")
	if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"apply", "--config", filepath.Join("..", "examples", "hosted.yaml"), "--from", from, "--operator", attackerOperator, "-o", "json",
		"--output-resources", declarations(t, ms)}, hostedKubeconfigFlags(kubeDir)...)
	stdout, stderr, err := cliRun(t, bin, args...)
	if err != nil {
		t.Fatalf("seed: apply: %v\n%s%s", err, stdout, stderr)
	}
	_, mgmt := clients(t, hosted.Config(cluster.Management))
	for _, r := range parseApply(t, stdout) {
		if r.Cluster != cluster.Management || !isSource(ms, r.Source) {
			continue
		}
		id := targetIdentity(t, ms, r)
		t.Cleanup(func() {
			if err := resourceOf(mgmt, id).Delete(context.Background(), id.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("clean up the seed %s: %v", id, err)
			}
		})
	}
}

// TestAttackerRBACUnion: RBAC is judged on the union of what the guest holds and what the
// plan writes, resolved as the RBAC authorizer resolves it (aggregated ClusterRoles
// included): a plan that lets a broad subject do what it cannot do today is refused, also
// when the role it binds or widens was written by an earlier run or by the guest's
// administrator. Each case creates what the guest holds (held), then runs topolayer apply
// once per run; a refused run changes neither server, and at the end no broad subject can do
// what the case names (cannot, asked of the guest with SubjectAccessReviews).
func TestAttackerRBACUnion(t *testing.T) {
	bin := binary(t, "topolayer")
	kubeDir := writeKubeconfigs(t, hosted)
	guestCS, guestDyn := clients(t, hosted.Config(cluster.Guest))
	sfx := uniqueSuffix(t)
	plurals := map[string]string{"Role": "roles", "ClusterRole": "clusterroles", "RoleBinding": "rolebindings", "ClusterRoleBinding": "clusterrolebindings"}
	// object is an RBAC object of the user-workload class; rest follows its metadata.
	object := func(kind, ns, name, labels, rest string) contract.Mutation {
		meta := "{name: " + name
		if ns != "" {
			meta += ", namespace: " + ns
		}
		if labels != "" {
			meta += ", labels: {" + labels + "}"
		}
		return mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/"+plurals[kind], ns, name,
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: "+kind+"\nmetadata: "+meta+"}\n"+rest)
	}
	binding := func(kind, ns, name, roleKind, role, subject string) contract.Mutation {
		return object(kind, ns, name, "", "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: "+roleKind+", name: "+role+"}\nsubjects: ["+subject+"]\n")
	}
	group := func(name string) string {
		return "{apiGroup: rbac.authorization.k8s.io, kind: Group, name: \"" + name + "\"}"
	}
	type access struct {
		user                      string
		groups                    []string
		namespace, verb, resource string
	}
	authenticated := func(verb, resource string) access {
		return access{"someone", []string{"system:authenticated"}, "default", verb, resource}
	}
	defaultAccount := func(verb, resource string) access {
		return access{"system:serviceaccount:default:default", []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}, "default", verb, resource}
	}
	type run struct {
		mutations []contract.Mutation
		refused   []string // nil: applied
	}
	for _, tc := range []struct {
		name   string
		held   []contract.Mutation // created on the guest before the runs, as its administrator would
		runs   []run
		cannot []access
	}{
		{name: "run 1 binds system:authenticated to a ClusterRole reading configmaps, run 2 widens it to deleting pods",
			runs: []run{
				{mutations: []contract.Mutation{
					object("ClusterRole", "", "reader-"+sfx, "", "rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n"),
					binding("ClusterRoleBinding", "", "reader-"+sfx, "ClusterRole", "reader-"+sfx, group("system:authenticated"))}},
				{mutations: []contract.Mutation{object("ClusterRole", "", "reader-"+sfx, "", "rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}, {apiGroups: [\"\"], resources: [pods], verbs: [delete]}]\n")},
					refused: []string{"policy/rbac-containment", "Group system:authenticated would gain {verbs: [delete], apiGroups: [\"\"], resources: [pods]} cluster-wide",
						"ClusterRoleBinding reader-" + sfx + " (held by the cluster)"}},
			},
			cannot: []access{authenticated("delete", "pods")}},
		{name: "run 1 writes a ClusterRole reading secrets bound to nobody, run 2 binds system:serviceaccounts to it",
			runs: []run{
				{mutations: []contract.Mutation{object("ClusterRole", "", "secrets-"+sfx, "", "rules: [{apiGroups: [\"\"], resources: [secrets], verbs: [get, list]}]\n")}},
				{mutations: []contract.Mutation{binding("ClusterRoleBinding", "", "every-account-"+sfx, "ClusterRole", "secrets-"+sfx, group("system:serviceaccounts"))},
					refused: []string{"policy/rbac-containment", "Group system:serviceaccounts", "ClusterRole secrets-" + sfx}},
			},
			cannot: []access{defaultAccount("get", "secrets")}},
		{name: "a ClusterRole whose aggregationRule picks up a held role reading secrets, bound to system:authenticated",
			held: []contract.Mutation{object("ClusterRole", "", "held-secrets-"+sfx, "attacker.example/pick-"+sfx+": \"true\"", "rules: [{apiGroups: [\"\"], resources: [secrets], verbs: [get]}]\n")},
			runs: []run{{mutations: []contract.Mutation{
				object("ClusterRole", "", "picker-"+sfx, "", "aggregationRule: {clusterRoleSelectors: [{matchLabels: {attacker.example/pick-"+sfx+": \"true\"}}]}\n"),
				binding("ClusterRoleBinding", "", "picker-"+sfx, "ClusterRole", "picker-"+sfx, group("system:authenticated"))},
				refused: []string{"policy/rbac-containment", "Group system:authenticated", "aggregated"}}},
			cannot: []access{authenticated("get", "secrets")}},
		{name: "a ClusterRole labelled for a held aggregated role that system:authenticated holds",
			held: []contract.Mutation{
				object("ClusterRole", "", "everyone-"+sfx, "", "aggregationRule: {clusterRoleSelectors: [{matchLabels: {attacker.example/everyone-"+sfx+": \"true\"}}]}\n"),
				binding("ClusterRoleBinding", "", "everyone-"+sfx, "ClusterRole", "everyone-"+sfx, group("system:authenticated"))},
			runs: []run{{mutations: []contract.Mutation{object("ClusterRole", "", "more-"+sfx, "attacker.example/everyone-"+sfx+": \"true\"", "rules: [{apiGroups: [\"\"], resources: [secrets], verbs: [get]}]\n")},
				refused: []string{"policy/rbac-containment", "Group system:authenticated would gain {verbs: [get], apiGroups: [\"\"], resources: [secrets]} cluster-wide",
					"ClusterRole everyone-" + sfx + " (held by the cluster), which aggregates it from ClusterRole more-" + sfx + " (entry 0 of this plan)"}}},
			cannot: []access{authenticated("get", "secrets")}},
		{name: "a RoleBinding of system:authenticated to the guest's edit ClusterRole in default",
			runs: []run{{mutations: []contract.Mutation{binding("RoleBinding", "default", "everyone-edits-"+sfx, "ClusterRole", "edit", group("system:authenticated"))},
				refused: []string{"policy/rbac-containment", "Group system:authenticated", "ClusterRole edit"}}},
			cannot: []access{authenticated("create", "secrets"), authenticated("delete", "pods")}},
		{name: "system:authenticated bound to a written ClusterRole whose rules it holds already (its own access reviews)",
			runs: []run{{mutations: []contract.Mutation{
				object("ClusterRole", "", "reviews-"+sfx, "", "rules: [{apiGroups: [authorization.k8s.io], resources: [selfsubjectaccessreviews], verbs: [create]}]\n"),
				binding("ClusterRoleBinding", "", "reviews-"+sfx, "ClusterRole", "reviews-"+sfx, group("system:authenticated"))}}}},
		{name: "a namespace's default service account bound to a written Role reading configmaps",
			runs: []run{{mutations: []contract.Mutation{
				object("Role", "default", "cm-"+sfx, "", "rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n"),
				binding("RoleBinding", "default", "cm-"+sfx, "Role", "cm-"+sfx, "{kind: ServiceAccount, name: default, namespace: default}")},
				refused: []string{"policy/rbac-containment", "ServiceAccount default/default would gain {verbs: [get], apiGroups: [\"\"], resources: [configmaps]} in namespace default",
					"RoleBinding default/cm-" + sfx + " (entry ", "binds ServiceAccount default to Role default/cm-" + sfx}}},
			cannot: []access{defaultAccount("get", "configmaps")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var all []contract.Mutation
			for _, r := range tc.runs {
				all = append(all, r.mutations...)
			}
			t.Cleanup(func() {
				for _, m := range append(all, tc.held...) {
					id := m.Identity()
					if err := resourceOf(guestDyn, id).Delete(context.Background(), id.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
						t.Errorf("clean up %s: %v", id, err)
					}
				}
			})
			for _, m := range tc.held {
				var u unstructured.Unstructured
				if err := yaml.Unmarshal(m.Body, &u.Object); err != nil {
					t.Fatal(err)
				}
				id := m.Identity()
				if _, err := resourceOf(guestDyn, id).Create(t.Context(), &u, metav1.CreateOptions{}); err != nil {
					t.Fatalf("hold %s: %v", id, err)
				}
			}
			for i, r := range tc.runs {
				from := filepath.Join(t.TempDir(), "out")
				if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: r.mutations}, contract.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				args := append([]string{"apply", "--config", filepath.Join("..", "examples", "hosted.yaml"), "--from", from, "--operator", attackerOperator,
					"--output-resources", declarations(t, r.mutations), "-o", "json"}, hostedKubeconfigFlags(kubeDir)...)
				if r.refused == nil {
					if stdout, stderr, err := cliRun(t, bin, args...); err != nil {
						t.Fatalf("run %d: %v\n%s%s", i+1, err, stdout, stderr)
					}
					for _, m := range r.mutations {
						if id := m.Identity(); func() error {
							_, err := resourceOf(guestDyn, id).Get(t.Context(), id.Name, metav1.GetOptions{})
							return err
						}() != nil {
							t.Fatalf("run %d was applied, and the guest does not hold %s", i+1, id)
						}
					}
					continue
				}
				before := bothServers(t)
				stdout, stderr, err := cliRun(t, bin, args...)
				after := bothServers(t)
				if err == nil {
					t.Fatalf("run %d applied:\n%s", i+1, stdout)
				}
				for _, part := range r.refused {
					if !strings.Contains(stderr, part) {
						t.Errorf("run %d's error does not name %q:\n%s", i+1, part, stderr)
					}
				}
				if diff := changed(before, after); len(diff) > 0 {
					t.Errorf("run %d changed the servers: %v", i+1, diff)
				}
				t.Logf("run %d refused: %s", i+1, strings.TrimSpace(stderr))
			}
			for _, a := range tc.cannot {
				sar, err := guestCS.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: a.user, Groups: a.groups, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.namespace, Verb: a.verb, Resource: a.resource},
				}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if sar.Status.Allowed {
					t.Errorf("%s %v may %s %s in %s", a.user, a.groups, a.verb, a.resource, a.namespace)
				}
			}
		})
	}
}
