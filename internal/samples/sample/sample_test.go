package sample_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/samples/sample"
)

func TestDeclarationsAreValid(t *testing.T) {
	op, err := sample.New("")
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(op.CRDs) != 1 {
		t.Fatalf("%d CRDs", len(op.CRDs))
	}
	crd := op.CRDs[0].Spec
	if crd.Group != sample.SampleGVK().Group || crd.Names.Kind != sample.SampleGVK().Kind || crd.Scope != "Cluster" ||
		crd.Versions[0].Name != sample.SampleGVK().Version || crd.Versions[0].Subresources.Status == nil {
		t.Errorf("the shipped CRD does not describe %s, cluster-scoped, with a status subresource: %+v", sample.SampleGVK(), crd)
	}
}

func TestConditions(t *testing.T) {
	dep := func(specReplicas, updated, available int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec:       appsv1.DeploymentSpec{Replicas: &specReplicas},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: updated, AvailableReplicas: available},
		}
	}
	type summary struct{ Available, Progressing, Degraded string }
	tests := map[string]struct {
		managed bool
		dep     *appsv1.Deployment
		desired int32
		want    summary
	}{
		"unmanaged":        {managed: false, want: summary{"True Unmanaged", "False Unmanaged", "False Unmanaged"}},
		"no deployment":    {managed: true, desired: 1, want: summary{"False DeploymentMissing", "True DeploymentMissing", "False AsExpected"}},
		"rolled out":       {managed: true, dep: dep(2, 2, 2), desired: 2, want: summary{"True AsExpected", "False AsExpected", "False AsExpected"}},
		"scaling up":       {managed: true, dep: dep(1, 1, 1), desired: 3, want: summary{"True AsExpected", "True PodsUpdating", "False AsExpected"}},
		"no pod available": {managed: true, dep: dep(1, 0, 0), desired: 1, want: summary{"False NoPodsAvailable", "True PodsUpdating", "False AsExpected"}},
		"scaled to zero":   {managed: true, dep: dep(0, 0, 0), desired: 0, want: summary{"True AsExpected", "False AsExpected", "False AsExpected"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := map[configv1.ClusterStatusConditionType]string{}
			for _, c := range sample.Conditions(tc.managed, tc.dep, tc.desired) {
				got[c.Type] = string(c.Status) + " " + c.Reason
			}
			s := summary{got[configv1.OperatorAvailable], got[configv1.OperatorProgressing], got[configv1.OperatorDegraded]}
			if diff := cmp.Diff(tc.want, s); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// runSample runs the sample operator over an input directory made of files.
func runSample(t *testing.T, files map[string]string) (*contract.OutputDir, error) {
	t.Helper()
	in := t.TempDir()
	contracttest.WriteFiles(t, in, files)
	op, err := sample.New("")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := op.Run(context.Background(), in, out, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), nil); err != nil {
		return nil, err
	}
	return contract.ReadOutputDir(out, contract.ReadOptions{})
}

const samplePath = "cluster-scoped-resources/operator.topolayer.dev/samples/cluster.yaml"

func TestUnmanagedWritesOnlyStatus(t *testing.T) {
	out, err := runSample(t, map[string]string{samplePath: "apiVersion: operator.topolayer.dev/v1alpha1\nkind: Sample\nmetadata:\n  name: cluster\nspec:\n  managementState: Unmanaged\n"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range out.Mutations {
		got = append(got, string(m.Metadata.Action)+" "+m.Identity().String())
	}
	want := []string{
		"ApplyStatus clusteroperators.config.openshift.io sample",
		"ApplyStatus samples.operator.topolayer.dev cluster",
		"Create clusteroperators.config.openshift.io sample",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestInvalidReplicasFailTheWorkload(t *testing.T) {
	_, err := runSample(t, map[string]string{
		samplePath: "apiVersion: operator.topolayer.dev/v1alpha1\nkind: Sample\nmetadata:\n  name: cluster\n",
		"namespaces/openshift-config/core/configmaps/sample-settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sample-settings\n  namespace: openshift-config\ndata:\n  replicas: many\n",
	})
	for _, want := range []string{"sample-operator-Workload: controller failed", `configmap openshift-config/sample-settings: replicas: "many" is not a non-negative integer`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to contain %q", err, want)
		}
	}
}
