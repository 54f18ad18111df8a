package e2e

import (
	"context"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/samples/sample"
)

// sampleDefaultsOutput is the sample operator's output for a fresh cluster: its expected
// output in the upstream test format, what `topolayer test` checks it against.
var sampleDefaultsOutput = filepath.Join("..", "examples", "sample-operators", "tests", "sample-operator", "defaults", "expected-output")

// sampleOperandAllowed is what the sample operator's standalone RBAC grants its operand's
// service account: the Role in openshift-sample and the ClusterRole system:openshift:sample.
var sampleOperandAllowed = [][]string{
	{"create", "configmaps", "-n", sample.OperandNamespace},
	{"patch", "configmap/" + sample.OperandStatusName, "-n", sample.OperandNamespace},
	{"get", "configmap/" + sample.ConfigMapName, "-n", sample.OperandNamespace},
	{"list", "samples.operator.topolayer.dev"},
}

// TestHostedOperandActsAsItsGuestIdentity is the kubelet-less pod check of the sample
// operator's Deployment placed in the HCP namespace by `topolayer apply`: its pod, set up
// from the management server as a kubelet would, is the guest service account
// openshift-sample/sample to kubectl (whoami, and can-i for its standalone RBAC, now on the
// guest), its credentials are refused by the management server, and the operand binary run
// as the pod writes its ConfigMap on the guest.
func TestHostedOperandActsAsItsGuestIdentity(t *testing.T) {
	kubectl := kubectlBinary(t)
	bin := binary(t, "topolayer")
	guestCfg, mgmtCfg := hosted.Config(cluster.Guest), hosted.Config(cluster.Management)
	cfgFile := configWith(t, "hosted.yaml", func(c *config.TopologyConfig) {
		// The guest API server as the management cluster's pods reach it: here, the test's.
		c.Topology.Hosted.GuestIdentity.Server = guestCfg.Host
	})
	kubeDir := writeKubeconfigs(t, hosted)
	stdout, stderr, err := cliRun(t, bin, append([]string{"apply", "--config", cfgFile, "--from", sampleDefaultsOutput, "--operator", sample.Name},
		hostedKubeconfigFlags(kubeDir)...)...)
	if err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("apply:\n%s%s", stdout, stderr)

	hcpNS := hosted.HostedControlPlane().Namespace
	mgmtCS, _ := clients(t, mgmtCfg)
	guestCS, _ := clients(t, guestCfg)
	dep, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(t.Context(), "openshift-sample--sample", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := materialize(t, mgmtCS, mgmtCfg, hcpNS, dep.Name+"-0", dep.Spec.Template.Spec, sample.OperandName)
	if len(p.missing) > 0 {
		t.Errorf("a kubelet would not start the pod: missing %v", p.missing)
	}
	if p.inCluster != "" {
		t.Errorf("the pod mounts a token of the management API server (automountServiceAccountToken %v)", dep.Spec.Template.Spec.AutomountServiceAccountToken)
	}
	p.check(t, kubectl, podExpectation{
		user:      "system:serviceaccount:" + sample.OperandNamespace + ":" + sample.OperandName,
		allowed:   sampleOperandAllowed,
		refusedOn: mgmtCfg,
	})
	runSampleOperand(t, p, dep, guestCS, "the guest")
	if _, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), sample.OperandStatusName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the operand's ConfigMap is on the management cluster too: %v", err)
	}
}

// TestStandaloneOperandActsAsItsServiceAccount is the same pod check on one cluster: the pod
// mounts its service account's token (materialized as a kubeconfig, see materialize), acts
// as openshift-sample/sample there, and the operand's write lands there.
func TestStandaloneOperandActsAsItsServiceAccount(t *testing.T) {
	kubectl := kubectlBinary(t)
	bin := binary(t, "topolayer")
	cfg := standalone.Config(cluster.Single)
	kubeDir := writeKubeconfigs(t, standalone)
	stdout, stderr, err := cliRun(t, bin, "apply", "--config", filepath.Join("..", "examples", "standalone.yaml"), "--from", sampleDefaultsOutput,
		"--operator", sample.Name, "--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single))
	if err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	cs, _ := clients(t, cfg)
	dep, err := cs.AppsV1().Deployments(sample.OperandNamespace).Get(t.Context(), sample.OperandName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := materialize(t, cs, cfg, sample.OperandNamespace, dep.Name+"-0", dep.Spec.Template.Spec, sample.OperandName)
	if p.inCluster == "" {
		t.Error("the standalone pod mounts no service account token")
	}
	p.check(t, kubectl, podExpectation{user: "system:serviceaccount:" + sample.OperandNamespace + ":" + sample.OperandName, allowed: sampleOperandAllowed})
	runSampleOperand(t, p, dep, cs, "the one cluster")
}

// runSampleOperand runs the operand's command as the pod, with the binary of this module
// of that name, until its ConfigMap is on the cluster of cs with the pod's message.
func runSampleOperand(t *testing.T, p *pod, dep *appsv1.Deployment, cs kubernetes.Interface, where string) {
	t.Helper()
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Command) == 0 || filepath.Base(c.Command[0]) != sample.OperandCommand {
		t.Fatalf("the operand container runs %v, not %s", c.Command, sample.OperandCommand)
	}
	_ = cs.CoreV1().ConfigMaps(sample.OperandNamespace).Delete(t.Context(), sample.OperandStatusName, metav1.DeleteOptions{})
	p.runOperand(t, binary(t, sample.OperandCommand), append(c.Command[1:], c.Args...), func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps(sample.OperandNamespace).Get(ctx, sample.OperandStatusName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return cm.Data["message"] == sample.DefaultMessage, nil
	})
	t.Logf("the operand's ConfigMap %s/%s landed on %s", sample.OperandNamespace, sample.OperandStatusName, where)
}
