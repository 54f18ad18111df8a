package e2e

import (
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/contract/contracttest"
	"github.com/topolayer/topolayer/contract/corpus"
	"github.com/topolayer/topolayer/e2e/cluster"
	"github.com/topolayer/topolayer/topology"
)

// TestTranslatedOAuthDeploymentAccepted: the oauth-openshift Deployment of the CAO corpus,
// translated for the hosted control plane (renamed references, the hypershift profile, the
// mounts of removed host-path volumes gone), is accepted by the real management API server.
// The corpus Deployment has an empty image (the operator ran without its image
// environment: the field is absent), which no server accepts; the test fills that one field
// and nothing else.
// Server-side dry run: nothing is stored.
func TestTranslatedOAuthDeploymentAccepted(t *testing.T) {
	var c corpus.Case
	for _, cc := range corpus.CAOCases(t) {
		if strings.HasSuffix(cc.Name, "/oauth-server-creation-minimal") {
			c = cc
		}
	}
	out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.OutputResources)
	if err != nil {
		t.Fatal(err)
	}
	declared, err := contract.ParseOutputResources(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("../examples/hosted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := topology.Engine(cfg, c.Operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	plan := engine.Plan(out)
	var body []byte
	for _, e := range plan.Entries {
		if e.Source.Resource == "deployments" && e.Mutation != nil {
			body = contracttest.Bytes(t, e.Mutation)
		}
	}
	if body == nil {
		t.Fatal("no translated Deployment in the plan")
	}
	var obj map[string]any
	if err := yaml.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for i := range containers {
		if ct, ok := containers[i].(map[string]any); ok && (ct["image"] == nil || ct["image"] == "") {
			ct["image"] = "registry.example/oauth-server:test"
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	_, dyn := clients(t, hosted.Config(cluster.Management))
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	// Server-side apply with dry-run: the server validates the object whether or not another
	// test of this package has already written it, and stores nothing.
	created, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Apply(t.Context(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "topolayer-e2e", Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("the management API server refuses the translated Deployment: %v", err)
	}
	if created.GetNamespace() != "clusters-example" || created.GetName() != "openshift-authentication--oauth-openshift" {
		t.Fatalf("accepted as %s/%s", created.GetNamespace(), created.GetName())
	}
}
