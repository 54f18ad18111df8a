package e2e

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/topology"
)

// TestCLIPlanLiveDryRunCAO runs the live dry-run of `topolayer plan --diff` for the CAO case
// oauth-server-creation-minimal (a Deployment and an Event created, the status of the
// operator's CR applied) on a hosted control plane of its own: before apply every created
// object says create and the status write says change (the CR exists, without that status);
// after apply every entry says unchanged; after a user scales the Deployment with kubectl,
// exactly that entry says change, with a diff of replicas; no dry-run writes anything.
func TestCLIPlanLiveDryRunCAO(t *testing.T) {
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set", corpus.EnvVar)
	}
	c := caoCase(t, "oauth-server-creation-minimal")
	out, declared := readCase(t, c)
	ms := withImages(t, out.Mutations)
	from := filepath.Join(t.TempDir(), "out")
	if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, cfgFile := ownHostedControlPlane(t, "cao")
	hcpNS := cfg.Topology.Hosted.Namespace
	engine, err := topology.Engine(cfg, c.Operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	kubeDir := writeKubeconfigs(t, hosted)
	f := &cliFixture{config: cfgFile, operator: c.Operator, extra: []string{"--output-resources", c.OutputResources},
		from: from, kubeDir: kubeDir, mutations: ms, plan: engine.Plan(&contract.OutputDir{Mutations: ms})}

	// The environment: the operator's CR, written once through topolayer.
	_, mdyn := clients(t, hosted.Config(cluster.Management))
	authID := contract.Identity{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"}
	auth := object(t, "apiVersion: operator.openshift.io.shadow.topolayer.dev/v1\nkind: Authentication\nmetadata: {name: cluster}\nspec: {managementState: Managed}\n")
	auth.SetNamespace(hcpNS)
	auth.SetAnnotations(namespaces.SourceAnnotations(authID))
	auth.SetLabels(map[string]string{namespaces.LabelOperator: c.Operator})
	if _, err := mdyn.Resource(shadowOperatorV1.WithResource("authentications")).Namespace(hcpNS).Create(t.Context(), auth, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	bin := cliBinary(t)
	// An entry in a namespace an earlier entry of the plan creates (the guest namespace of the
	// oauth server's guest identity) cannot be asked of the server while that namespace is
	// missing: it is valid, no more. Once the namespace is there (an earlier test of the
	// package, or the apply below, made it), the entry is asked like any other.
	inCreatedNamespace := func(target string) bool {
		for _, e := range f.plan.Entries {
			if e.Mutation != nil && e.Target.IsNamespace() && strings.HasPrefix(target, e.Target.Cluster+":") && strings.Contains(target, "/"+e.Target.Name+"/") {
				cs, _ := clients(t, hosted.Config(e.Target.Cluster))
				_, err := cs.CoreV1().Namespaces().Get(t.Context(), e.Target.Name, metav1.GetOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					t.Fatal(err)
				}
				return apierrors.IsNotFound(err)
			}
		}
		return false
	}
	// What an earlier test of the package left in a namespace that is already there.
	leftBefore := map[string]bool{}
	for _, e := range f.plan.Entries {
		if e.Mutation != nil && e.Target.Cluster == cluster.Guest && e.Target.Namespace != "" {
			cs, dyn := clients(t, hosted.Config(e.Target.Cluster))
			if _, err := cs.CoreV1().Namespaces().Get(t.Context(), e.Target.Namespace, metav1.GetOptions{}); err != nil {
				continue
			}
			if _, err := resourceOf(dyn, e.Target.Identity).Get(t.Context(), e.Target.Name, metav1.GetOptions{}); err == nil {
				leftBefore[e.Target.Cluster+":"+e.Target.Identity.GroupResource().String()+"/"+e.Target.Namespace+"/"+e.Target.Name] = true
			}
		}
	}
	var deployment string
	for target, l := range livePlan(t, bin, f) {
		want := "create"
		if strings.Contains(target, "authentications") {
			want = "change"
		}
		if inCreatedNamespace(target) {
			want = "valid"
		}
		if leftBefore[target] && l.Result == "unchanged" {
			want = l.Result // an earlier test of the package left it as the plan would write it
		}
		if strings.HasPrefix(target, cluster.Guest+":namespaces/") && l.Result == "unchanged" {
			want = l.Result // the guest may have it already (an earlier test made it)
		}
		if strings.Contains(target, "deployments") {
			deployment = strings.TrimPrefix(target, cluster.Management+":deployments.apps/"+hcpNS+"/")
		}
		if l.Result != want {
			t.Errorf("before apply: %s: %s (%s), want %s", target, l.Result, l.Reason, want)
		}
	}
	if stdout, stderr, err := cliRun(t, bin, f.args("apply")...); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	for target, l := range livePlan(t, bin, f) {
		if want := cmp.Or(map[bool]string{true: "valid"}[inCreatedNamespace(target)], "unchanged"); l.Result != want || l.Diff != "" {
			t.Errorf("after apply: %s: %s %s, want %s, diff:\n%s", target, l.Result, l.Reason, want, l.Diff)
		}
	}

	// A user scales the Deployment.
	if deployment == "" {
		t.Fatal("no Deployment entry in the live plan")
	}
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		cmd := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Management),
			"-n", hcpNS, "scale", "deployment", deployment, "--replicas=5")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl scale: %v\n%s", err, out)
		}
	} else {
		t.Logf("kubectl is not on PATH: scaling with client-go")
		cs, _ := clients(t, hosted.Config(cluster.Management))
		if _, err := cs.AppsV1().Deployments(hcpNS).Patch(t.Context(), deployment, types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := resourceVersions(f.objects(t))
	for target, l := range livePlan(t, bin, f) {
		want := "unchanged"
		if inCreatedNamespace(target) {
			want = "valid"
		}
		if strings.Contains(target, "deployments") {
			want = "change"
			if !strings.Contains(l.Diff, "-  replicas: 5") {
				t.Errorf("after the edit: %s: diff:\n%s", target, l.Diff)
			}
		}
		if l.Result != want {
			t.Errorf("after the edit: %s: %s (%s), want %s", target, l.Result, l.Reason, want)
		}
	}
	if after := resourceVersions(f.objects(t)); !equalMaps(before, after) {
		t.Errorf("the dry-runs changed the objects: resourceVersions %v -> %v", before, after)
	}
}
