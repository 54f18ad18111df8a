package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
)

// guestToken creates, on the guest, a ServiceAccount kube-system/name bound to cluster-admin
// and returns a kubeconfig of the guest with a token of it: what HyperShift's
// service-network-admin-kubeconfig is to the control plane's components. Deleting the
// ServiceAccount revokes the token.
func guestToken(t *testing.T, guest kubernetes.Interface, name string) []byte {
	t.Helper()
	ctx := t.Context()
	if _, err := guest.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: name}},
	}
	if _, err := guest.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = guest.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = guest.CoreV1().ServiceAccounts("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	tr, err := guest.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin := hosted.Config(cluster.Guest)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["guest"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["guest"] = &clientcmdapi.Context{Cluster: "guest", AuthInfo: "admin"}
	kc.CurrentContext = "guest"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHostedEmbeddingLateGuest runs examples/hosted-embedding as it runs in a hosted control
// plane that is still coming up: started with no guest kubeconfig Secret, its operators
// wait (status Waiting, no run); it converges within 30s of the Secret's creation, and again
// within 30s of the Secret's replacement by one with another token (the old token is then
// revoked, and a change on the guest still lands); a CRD created on the guest after the start
// gets its watch within 30s, and the operator that reads its kind runs; with
// --component-status, the ControlPlaneComponent of the sample operand's Deployment (named
// oauth-openshift with --component-name) turns Available once the Deployment has rolled
// out. No run fails and no hot loop is reported throughout (from the metrics).
func TestHostedEmbeddingLateGuest(t *testing.T) {
	h := newHostedSample(t)
	ctx := t.Context()
	sfx := uniqueSuffix(t)
	removePlaced(t, h.hcpNS)
	secretName := manager.DefaultGuestKubeconfigSecret
	deleteSecret := func() {
		err := h.mgmtCS.CoreV1().Secrets(h.hcpNS).Delete(context.Background(), secretName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
	deleteSecret()
	t.Cleanup(deleteSecret)
	ensureNamespace(t, h.guestCS, "openshift-config")
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sample-settings", Namespace: "openshift-config"}, Data: map[string]string{"replicas": "2", "message": "late"}}
	if _, err := h.guestCS.CoreV1().ConfigMaps("openshift-config").Create(ctx, settings, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The sample operator also reads a Widget the guest does not serve yet (a supplement of
	// its inputs): its CRD is created after the start.
	widgets := schema.GroupVersionResource{Group: "late" + sfx + ".e2e.topolayer.dev", Version: "v1", Resource: "widgets"}
	cfgFile := demoConfig(t, "hosted-demo.yaml", func(cfg *config.TopologyConfig) {
		for i := range cfg.Operators {
			if cfg.Operators[i].Name == sampleOp {
				cfg.Operators[i].Supplements.Inputs = &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{{
					ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: widgets.Group, Version: widgets.Version, Resource: widgets.Resource},
					Namespace:              "openshift-config", Name: "cluster",
				}}}}
			}
		}
	})
	p := startProcess(t, binary(t, "hosted-embedding"), "--config", cfgFile, "--in-process",
		"--management-kubeconfig", cluster.KubeconfigFile(h.kubeDir, cluster.Management),
		"--component-status", "--component-name", "sample=oauth-openshift")

	// failures counts what must never happen: failed or rejected runs, hot loops.
	failures := func() float64 {
		f := p.metrics(t)
		return sum(f, "topolayer_operator_runs_total", map[string]string{"result": manager.ResultFailed}) +
			sum(f, "topolayer_operator_runs_total", map[string]string{"result": manager.ResultRejected}) +
			sum(f, "topolayer_scheduler_hot_loops_total", nil)
	}
	runsOf := func(op, trigger, result string) float64 {
		return sum(p.metrics(t), "topolayer_operator_runs_total", map[string]string{"operator": op, "trigger": trigger, "result": result})
	}
	statusResult := func(op string) string {
		cm, err := h.mgmtCS.CoreV1().ConfigMaps(h.hcpNS).Get(ctx, manager.StatusName(op), metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.Data["result"]
	}

	// No guest: the operators wait, and say so.
	eventually(t, "the status objects say Waiting", func(context.Context) (bool, error) {
		return statusResult(sampleOp) == manager.ResultWaiting && statusResult(auditOp) == manager.ResultWaiting, nil
	})
	time.Sleep(3 * time.Second)
	if f := p.metrics(t); sum(f, "topolayer_operator_runs_total", nil) != 0 {
		t.Fatalf("%v runs without a guest, want none", sum(f, "topolayer_operator_runs_total", nil))
	}
	cm, _ := h.mgmtCS.CoreV1().ConfigMaps(h.hcpNS).Get(ctx, manager.StatusName(sampleOp), metav1.GetOptions{})
	var waiting manager.RunRecord
	if err := yaml.Unmarshal([]byte(cm.Data["status.yaml"]), &waiting); err != nil {
		t.Fatal(err)
	}
	t.Logf("without a guest, the status of %s says %s: %s", sampleOp, waiting.Result, waiting.Message)

	// The Secret appears: the guest side starts, both operators converge.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: h.hcpNS},
		Data: map[string][]byte{manager.DefaultGuestKubeconfigKey: guestToken(t, h.guestCS, "topolayer-e2e-a-"+sfx)}}
	t0 := time.Now()
	if _, err := h.mgmtCS.CoreV1().Secrets(h.hcpNS).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both operators converged after the Secret's creation", func(context.Context) (bool, error) {
		if runsOf(sampleOp, manager.TriggerStart, manager.ResultSucceeded) < 1 || runsOf(auditOp, manager.TriggerStart, manager.ResultSucceeded) < 1 {
			return false, nil
		}
		d, err := h.mgmtCS.AppsV1().Deployments(h.hcpNS).Get(ctx, "openshift-sample--sample", metav1.GetOptions{})
		return err == nil && ptr.Deref(d.Spec.Replicas, 0) == 2, err
	})
	first := time.Since(t0)
	settle(t, p, sampleOp, auditOp)
	t.Logf("converged %s after the guest kubeconfig Secret's creation (idle after %s)", first.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))

	// The Secret is replaced with another token: the guest side restarts and every operator
	// runs over the new connection.
	secret.Data[manager.DefaultGuestKubeconfigKey] = guestToken(t, h.guestCS, "topolayer-e2e-b-"+sfx)
	t1 := time.Now()
	if _, err := h.mgmtCS.CoreV1().Secrets(h.hcpNS).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both operators converged after the Secret's rotation", func(context.Context) (bool, error) {
		f := p.metrics(t)
		return sum(f, "topolayer_cluster_connections_total", map[string]string{"cluster": cluster.Guest}) == 2 &&
			runsOf(sampleOp, manager.TriggerConnect, manager.ResultSucceeded) >= 1 && runsOf(auditOp, manager.TriggerConnect, manager.ResultSucceeded) >= 1, nil
	})
	second := time.Since(t1)
	settle(t, p, sampleOp, auditOp)
	t.Logf("converged %s after the Secret's rotation (idle after %s)", second.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
	// The old token revoked, a change on the guest lands: the new connection reads and writes.
	if err := h.guestCS.CoreV1().ServiceAccounts("kube-system").Delete(ctx, "topolayer-e2e-a-"+sfx, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// (The message, not the replicas: the hypershift profile sizes the Deployment by the
	// HostedControlPlane, whatever the operator writes.)
	settings.Data["message"] = "over the new connection"
	if _, err := h.guestCS.CoreV1().ConfigMaps("openshift-config").Update(ctx, settings, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a change on the guest lands over the new connection", func(context.Context) (bool, error) {
		cm, err := h.mgmtCS.CoreV1().ConfigMaps(h.hcpNS).Get(ctx, "openshift-sample--sample-config", metav1.GetOptions{})
		return err == nil && cm.Data["message"] == "over the new connection", err
	})

	// A CRD created after the start: its kind is watched, the operator that reads it runs.
	before := runsOf(sampleOp, manager.TriggerChange, manager.ResultSucceeded)
	ext, err := apiextensionsclient.NewForConfig(hosted.Config(cluster.Guest))
	if err != nil {
		t.Fatal(err)
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: widgets.Resource + "." + widgets.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgets.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	t2 := time.Now()
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	eventually(t, "the late kind watched and its operator run", func(context.Context) (bool, error) {
		f := p.metrics(t)
		return sum(f, "topolayer_cluster_late_watches_total", map[string]string{"cluster": cluster.Guest}) >= 1 &&
			runsOf(sampleOp, manager.TriggerChange, manager.ResultSucceeded) > before, nil
	})
	t.Logf("the CRD created after the start was watched and %s ran %s after its creation", sampleOp, time.Since(t2).Round(time.Millisecond))
	// The watch works: a Widget created now runs the operator again.
	settle(t, p, sampleOp, auditOp)
	before = runsOf(sampleOp, manager.TriggerChange, manager.ResultSucceeded)
	_, dyn := clients(t, hosted.Config(cluster.Guest))
	widget := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": "large"}}}
	widget.SetGroupVersionKind(widgets.GroupVersion().WithKind("Widget"))
	widget.SetNamespace("openshift-config")
	widget.SetName("cluster")
	t3 := time.Now()
	if _, err := dyn.Resource(widgets).Namespace("openshift-config").Create(ctx, widget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Widget's creation runs its operator", func(context.Context) (bool, error) {
		return runsOf(sampleOp, manager.TriggerChange, manager.ResultSucceeded) > before, nil
	})
	t.Logf("a Widget created ran %s %s later", sampleOp, time.Since(t3).Round(time.Millisecond))

	// The ControlPlaneComponent of the placed Deployment: not Available while no pod runs (no
	// kubelet here); Available once the Deployment has rolled out.
	_, mgmtDyn := clients(t, hosted.Config(cluster.Management))
	cpcs := mgmtDyn.Resource(hypershift.ControlPlaneComponentGVR()).Namespace(h.hcpNS)
	t.Cleanup(func() { _ = cpcs.Delete(context.Background(), "oauth-openshift", metav1.DeleteOptions{}) })
	condition := func(cpc *unstructured.Unstructured, typ string) (status, reason, message string) {
		conds, _, _ := unstructured.NestedSlice(cpc.Object, "status", "conditions")
		for _, c := range conds {
			m := c.(map[string]any)
			if m["type"] == typ {
				return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
			}
		}
		return "", "", ""
	}
	eventually(t, "the ControlPlaneComponent oauth-openshift, not Available", func(ctx context.Context) (bool, error) {
		cpc, err := cpcs.Get(ctx, "oauth-openshift", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s, _, _ := condition(cpc, hypershift.ComponentAvailable)
		return s == string(metav1.ConditionFalse), nil
	})
	// A kubelet-less rollout: the Deployment's status set through its status subresource
	// as the deployment controller writes it once every pod of the current generation is
	// ready and available (observedGeneration, replica counts, Available and Progressing
	// conditions).
	d, err := h.mgmtCS.AppsV1().Deployments(h.hcpNS).Get(ctx, "openshift-sample--sample", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rolledOut(d)
	t4 := time.Now()
	if _, err := h.mgmtCS.AppsV1().Deployments(h.hcpNS).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cpc *unstructured.Unstructured
	eventually(t, "the ControlPlaneComponent oauth-openshift Available", func(ctx context.Context) (bool, error) {
		var err error
		if cpc, err = cpcs.Get(ctx, "oauth-openshift", metav1.GetOptions{}); err != nil {
			return false, err
		}
		s, _, _ := condition(cpc, hypershift.ComponentAvailable)
		return s == string(metav1.ConditionTrue), nil
	})
	as, ar, am := condition(cpc, hypershift.ComponentAvailable)
	rs, rr, rm := condition(cpc, hypershift.ComponentRolloutComplete)
	version, _, _ := unstructured.NestedString(cpc.Object, "status", "version")
	resources, _, _ := unstructured.NestedSlice(cpc.Object, "status", "resources")
	t.Logf("ControlPlaneComponent oauth-openshift %s after the rollout: Available=%s (%s: %s), RolloutComplete=%s (%s: %s), version %q, resources %v",
		time.Since(t4).Round(time.Millisecond), as, ar, am, rs, rr, rm, version, resources)
	if owners := cpc.GetOwnerReferences(); len(owners) != 1 || owners[0].Kind != hypershift.HostedControlPlaneGVK().Kind {
		t.Errorf("ownerReferences %v, want the HostedControlPlane", owners)
	}

	if n := failures(); n != 0 {
		t.Errorf("%v failed or rejected runs and hot loops, want none", n)
	}
	f := p.metrics(t)
	t.Logf("metrics: runs %v (start %v, connect %v, change %v, own-writes %v), failed+rejected+hot loops %v, guest connections %v, connect failures %v, late watches %v",
		sum(f, "topolayer_operator_runs_total", nil),
		sum(f, "topolayer_operator_runs_total", map[string]string{"trigger": manager.TriggerStart}),
		sum(f, "topolayer_operator_runs_total", map[string]string{"trigger": manager.TriggerConnect}),
		sum(f, "topolayer_operator_runs_total", map[string]string{"trigger": manager.TriggerChange}),
		sum(f, "topolayer_operator_runs_total", map[string]string{"trigger": manager.TriggerOwnWrites}),
		failures(),
		sum(f, "topolayer_cluster_connections_total", nil),
		sum(f, "topolayer_cluster_connect_failures_total", nil),
		sum(f, "topolayer_cluster_late_watches_total", nil))
	for what, d := range map[string]time.Duration{"the Secret's creation": first, "the Secret's rotation": second} {
		if d > 30*time.Second {
			t.Errorf("converged %s after %s, want within 30s", d, what)
		}
	}
}

// rolledOut sets d's status as the deployment controller leaves it once every replica of
// its current generation is updated, ready and available: what a kubelet-less environment
// must write in its place.
func rolledOut(d *appsv1.Deployment) {
	n := ptr.Deref(d.Spec.Replicas, 1)
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: "ReplicaSet has successfully progressed.", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
}
