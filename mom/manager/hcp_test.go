package manager

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/topology"
)

// TestHostedControlPlaneChanged: the profile is replaced, and every operator runs, only when
// what it reads of the HostedControlPlane changes; one that cannot be read refuses the runs
// until it can.
func TestHostedControlPlaneChanged(t *testing.T) {
	cfg, err := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n  hosted: {namespace: clusters-a, hostedControlPlane: a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	object := func(doc string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte("apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedControlPlane\nmetadata: {namespace: clusters-a, name: a}\n"+doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	annotated := func(u *unstructured.Unstructured, k, v string) *unstructured.Unstructured {
		u.SetAnnotations(map[string]string{k: v})
		return u
	}
	m := &Manager{topo: topo, log: logr.Discard(), ops: map[string]*operatorState{"op": {Operator: Operator{Name: "op"}}}}
	first, err := hosted.ParseHostedControlPlane(object("spec: {controllerAvailabilityPolicy: HighlyAvailable}"))
	if err != nil {
		t.Fatal(err)
	}
	if m.profile, err = m.newProfile(first); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name    string
		object  *unstructured.Unstructured // nil: deleted
		changed bool
		policy  string // of the profile after the step
		refused string // in the runs' error after the step; "" when they plan
	}{
		{"the same spec", object("spec: {controllerAvailabilityPolicy: HighlyAvailable}"), false, hosted.HighlyAvailable, ""},
		{"only the status changed", object("spec: {controllerAvailabilityPolicy: HighlyAvailable}\nstatus: {ready: true}"), false, hosted.HighlyAvailable, ""},
		{"the availability policy changed", object("spec: {controllerAvailabilityPolicy: SingleReplica}"), true, hosted.SingleReplica, ""},
		{"a priority class override", annotated(object("spec: {controllerAvailabilityPolicy: SingleReplica}"), hosted.AnnotationAPICriticalPriority, "x"), true, hosted.SingleReplica, ""},
		{"a node selector of the wrong type", object("spec: {controllerAvailabilityPolicy: HighlyAvailable, nodeSelector: [a]}"), true, hosted.SingleReplica, "spec.nodeSelector"},
		{"the same wrong node selector", object("spec: {controllerAvailabilityPolicy: HighlyAvailable, nodeSelector: [a]}"), false, hosted.SingleReplica, "spec.nodeSelector"},
		{"mended", object("spec: {controllerAvailabilityPolicy: HighlyAvailable}"), true, hosted.HighlyAvailable, ""},
		{"deleted", nil, true, hosted.HighlyAvailable, "the HostedControlPlane clusters-a/a was deleted"},
		{"created again", object("spec: {}"), true, hosted.HighlyAvailable, ""},
		{"a proxy", object("spec: {configuration: {proxy: {httpsProxy: 'http://proxy:3128'}}}"), true, hosted.HighlyAvailable, ""},
		{"the proxy's trusted CA", object("spec: {configuration: {proxy: {httpsProxy: 'http://proxy:3128', trustedCA: {name: proxy-ca}}}}"), true, hosted.HighlyAvailable, ""},
		{"an additional trust bundle", object("spec: {additionalTrustBundle: {name: user-ca-bundle}, configuration: {proxy: {httpsProxy: 'http://proxy:3128', trustedCA: {name: proxy-ca}}}}"), true, hosted.HighlyAvailable, ""},
		{"a CIDR that does not parse", object("spec: {networking: {serviceNetwork: [{cidr: x}]}}"), true, hosted.HighlyAvailable, "spec.networking.serviceNetwork"},
	} {
		if got := m.hostedControlPlaneChanged(step.object); got != step.changed {
			t.Errorf("%s: changed = %t, want %t", step.name, got, step.changed)
		}
		p := m.currentProfile()
		if p.hcp.AvailabilityPolicy != step.policy {
			t.Errorf("%s: the profile reads %s, want %s", step.name, p.hcp.AvailabilityPolicy, step.policy)
		}
		if _, ok := p.engines["op"]; !ok {
			t.Errorf("%s: no engine for the operator", step.name)
		}
		err := p.refusal()
		switch {
		case step.refused == "" && err != nil:
			t.Errorf("%s: runs refused: %v", step.name, err)
		case step.refused != "" && (err == nil || !strings.Contains(err.Error(), step.refused)):
			t.Errorf("%s: runs refused with %v, want an error with %q", step.name, err, step.refused)
		}
	}
}
