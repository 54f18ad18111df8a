package podspec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
)

func specs(sites []Site) []string {
	var out []string
	for _, s := range sites {
		t := "-"
		if m, ok := s.Metadata(); ok {
			t = m.String()
		}
		out = append(out, s.Spec.String()+" "+t)
	}
	slices.Sort(out)
	return out
}

func TestFind(t *testing.T) {
	cr := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	for name, tc := range map[string]struct {
		gk   schema.GroupKind
		body string
		want []string
	}{
		"pod":                         {schema.GroupKind{Kind: "Pod"}, "spec: {}", []string{"spec metadata"}},
		"pod template":                {schema.GroupKind{Kind: "PodTemplate"}, "{}", []string{"template.spec template.metadata"}},
		"replication controller":      {schema.GroupKind{Kind: "ReplicationController"}, "{}", []string{"spec.template.spec spec.template.metadata"}},
		"cronjob":                     {schema.GroupKind{Group: "batch", Kind: "CronJob"}, "{}", []string{"spec.jobTemplate.spec.template.spec spec.jobTemplate.spec.template.metadata"}},
		"built-in kind, not searched": {schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, "spec: {containers: [{name: a, image: b}]}", nil},
		"core kind, not searched":     {schema.GroupKind{Kind: "ConfigMap"}, "data: {}\nspec: {containers: [{name: a, image: b}]}", nil},
		"custom resource template":    {cr, "spec:\n  template:\n    spec:\n      containers: [{name: a, image: b}]", []string{"spec.template.spec spec.template.metadata"}},
		"custom resource list": {cr, "spec:\n  jobs:\n  - podSpec:\n      initContainers: [{name: a, image: b}]\n  - template: {spec: {containers: [{name: c, image: d}]}}",
			[]string{"spec.jobs[0].podSpec -", "spec.jobs[1].template.spec spec.jobs[1].template.metadata"}},
		"custom resource, no image":     {cr, "spec: {containers: [{name: a}]}", nil},
		"custom resource, not mappings": {cr, "spec: {containers: [a], x: {containers: [{image: b}]}}", nil},
		"custom resource, image in one": {cr, "spec: {containers: [{name: a}, {name: b, image: c}]}", []string{"spec metadata"}},
		"custom resource, nested":       {cr, "spec: {containers: [{name: a, image: b, x: {spec: {containers: [{name: c, image: d}]}}}]}", []string{"spec metadata", "spec.containers[0].x.spec spec.containers[0].x.metadata"}},
	} {
		t.Run(name, func(t *testing.T) {
			var obj map[string]any
			if err := sigsyaml.Unmarshal([]byte(tc.body), &obj); err != nil {
				t.Fatal(err)
			}
			got, err := Find(tc.gk, obj)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(specs(got), tc.want) {
				t.Errorf("Find: got %q, want %q", specs(got), tc.want)
			}
			n, err := yaml.Parse(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			got, err = FindNode(tc.gk, n.YNode())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(specs(got), tc.want) {
				t.Errorf("FindNode: got %q, want %q", specs(got), tc.want)
			}
			for _, s := range got {
				if !s.Known && s.Spec.Node(n.YNode()) == nil {
					t.Errorf("%s: Node finds nothing", s.Spec)
				}
			}
		})
	}
}

func TestFindBounds(t *testing.T) {
	cr := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	deep := strings.Repeat("{a: ", MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	n, err := yaml.Parse(deep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FindNode(cr, n.YNode()); !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), "a.a.a") {
		t.Errorf("deep node: got %v", err)
	}
	var obj map[string]any
	if err := sigsyaml.Unmarshal([]byte(deep), &obj); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(cr, obj); !errors.Is(err, ErrTooComplex) {
		t.Errorf("deep object: got %v", err)
	}
	wide := make([]any, MaxValues)
	if _, err := Find(cr, map[string]any{"spec": wide}); !errors.Is(err, ErrTooComplex) {
		t.Errorf("wide object: got %v", err)
	}
	// Aliases count every time they are walked: a tree of repeated aliases is bounded too.
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e", "f", "g"} {
		laughs += l + ": &" + l + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = l
	}
	n, err = yaml.Parse(laughs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FindNode(cr, n.YNode()); !errors.Is(err, ErrTooComplex) {
		t.Errorf("aliases: got %v", err)
	}
}

// FuzzFind checks that the finder never panics, that the map and the node searches agree,
// and that every site it reports leads to a pod spec.
func FuzzFind(f *testing.F) {
	f.Add("spec:\n  template:\n    spec:\n      containers: [{name: a, image: b}]")
	f.Add("spec: {jobs: [{podSpec: {initContainers: [{name: a, image: b}]}}]}")
	f.Add("a: &a {containers: [{name: x, image: y}]}\nb: *a")
	f.Add("spec: {containers: [{name: a}, 3]}")
	f.Fuzz(func(t *testing.T, body string) {
		cr := schema.GroupKind{Group: "example.com", Kind: "Widget"}
		obj, err := contract.ParseObject([]byte(body))
		if err != nil {
			return // the engine refuses the body (duplicate keys, excessive aliasing)
		}
		n, err := yaml.Parse(body)
		if err != nil {
			return
		}
		nodeSites, nodeErr := FindNode(cr, n.YNode())
		for _, s := range nodeSites {
			if m := s.Spec.Node(n.YNode()); m == nil || m.Kind != yaml.MappingNode {
				t.Fatalf("%s: not a mapping", s.Spec)
			}
		}
		if strings.Contains(body, "*") || strings.Contains(body, "<<") {
			return // aliases and merge keys are expanded by the decoder
		}
		sites, err := Find(cr, obj)
		if (err == nil) != (nodeErr == nil) {
			return // the decoder's values differ in count from the nodes (nulls, documents)
		}
		if err == nil && !slices.Equal(specs(sites), specs(nodeSites)) {
			t.Fatalf("Find %q, FindNode %q", specs(sites), specs(nodeSites))
		}
		for _, s := range sites {
			if _, ok := s.Spec.Get(obj).(map[string]any); !ok {
				t.Fatalf("%s: not a mapping", s.Spec)
			}
		}
	})
}

// TestKnownPodBearing: a resource is pod-bearing when it is the lower-case plural of a
// known kind of the same group, spelled exactly so.
func TestKnownPodBearing(t *testing.T) {
	for _, tc := range []struct {
		group, resource string
		want            bool
	}{
		{"apps", "deployments", true}, {"", "pods", true}, {"batch", "cronjobs", true},
		{"", "replicationcontrollers", true}, {"apps", "replicasets", true},
		{"apps", "Deployments", false}, {"apps", "deployment", false}, {"", "deployments", false},
		{"apps", "deploymentss", false}, {"", "", false}, {"", "s", false}, {"", "configmaps", false},
	} {
		if got := KnownPodBearing(tc.group, tc.resource); got != tc.want {
			t.Errorf("KnownPodBearing(%q, %q) = %t, want %t", tc.group, tc.resource, got, tc.want)
		}
	}
}
