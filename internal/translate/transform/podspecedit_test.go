package transform

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/internal/yamlnode"

	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/yamlnodetest"
)

// podSpecCases are pod specs (YAML) the profile's pod spec edits meet; neutral says whether
// the strategic merge's walk changes nothing in them but the style of !!str scalars (then the
// edit is made directly, unless the patch meets a field of another kind: then, as elsewhere,
// the edit runs the strategic merge).
var podSpecCases = []struct {
	name, spec string
	neutral    bool
}{
	{"empty", `{}`, true},
	{"empty block", "{}\n", true},
	{"containers", "containers:\n- name: a\n  image: x\n", true},
	{"scheduling", "nodeSelector: {a: b}\ntolerations:\n- key: k\n  operator: Exists\naffinity:\n  nodeAffinity: {}\npriorityClassName: system-cluster-critical\ncontainers: [{name: a}]\n", true},
	{"null scheduling", "nodeSelector: null\ntolerations: null\naffinity: ~\npriorityClassName: null\n", true},
	{"empty scheduling", "nodeSelector: {}\ntolerations: []\naffinity: {}\n", true},
	{"quoted priority class", `{priorityClassName: "x", containers: [{name: a}]}`, true},
	{"single-quoted priority class", "priorityClassName: 'x'\n", true},
	{"literal priority class", "priorityClassName: |-\n  x\n", true},
	{"other pull secret", "imagePullSecrets:\n- name: other\n", true},
	{"same pull secret", "imagePullSecrets:\n- name: pull-secret\n", true},
	{"same pull secret quoted", "imagePullSecrets:\n- name: \"pull-secret\"\n  extra: x\n- name: b\n", true},
	{"pull secret after others", "imagePullSecrets:\n- name: a\n- name: pull-secret\n- name: z\n", true},
	{"empty pull secrets", "imagePullSecrets: []\ncontainers: [{name: a}]\n", true},
	{"null pull secrets", "imagePullSecrets: null\n", true},
	{"tilde pull secrets", "imagePullSecrets: ~\n", true},
	{"flow", `{containers: [{name: a, env: [{name: A, value: "true"}]}], tolerations: [{key: k}], imagePullSecrets: [{name: x}]}`, true},
	{"strings like other types", "containers:\n- name: a\n  args: [\"true\", \"1\", yes]\n  env:\n  - name: A\n    value: \"true\"\n  - name: B\n    value: \"1.5\"\n  - name: C\n    value: \"on\"\nhostname: \"null\"\n", true},
	{"ports", "containers:\n- name: a\n  ports:\n  - containerPort: 80\n  - containerPort: 443\n    name: https\n", true},
	{"ports with protocols", "containers:\n- name: a\n  ports:\n  - containerPort: 53\n    protocol: UDP\n  - containerPort: 53\n    protocol: TCP\n", true},
	{"ports with some protocols", "containers:\n- name: a\n  ports:\n  - containerPort: 53\n    protocol: UDP\n  - containerPort: 80\n", false},
	{"volumes", "volumes:\n- name: a\n  hostPath: {path: /x}\n- name: b\n  secret: {secretName: s, defaultMode: 420}\ncontainers:\n- name: a\n  volumeMounts:\n  - {name: a, mountPath: /a}\n  - {name: a, mountPath: /b, readOnly: true}\n", true},
	{"security context", "securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\ncontainers:\n- name: a\n  securityContext:\n    capabilities: {drop: [ALL], add: [NET_BIND_SERVICE, NET_BIND_SERVICE]}\n", true},
	{"duplicate env", "containers:\n- name: a\n  env:\n  - {name: A, value: x}\n  - {name: A, value: y}\n", false},
	{"duplicate containers", "containers:\n- name: a\n- name: a\n  image: x\n", false},
	{"unnamed pull secret", "imagePullSecrets:\n- name: a\n- {}\n", false},
	{"pull secret without name", "imagePullSecrets:\n- foo: a\n", false},
	{"empty container", "containers:\n- {}\n", false},
	{"null written as nothing", "hostname:\n", false},
	{"priority class mapping", "priorityClassName: {a: b}\n", true},
	{"tolerations mapping", "tolerations: {a: b}\n", true},
	{"tolerations scalar", "tolerations: x\n", true},
	{"pull secrets scalar", "imagePullSecrets: x\n", true},
	{"odd scheduling kinds", "nodeSelector: [a]\naffinity: x\n", true},
	{"comment", "containers: # the containers\n- name: a\n", false},
}

// podSpecObjects are the objects a pod spec of podSpecCases is put in: its kind, the path of
// its pod template, and the object's YAML around it (POD_SPEC stands for the spec).
var podSpecObjects = []struct {
	name, resource, yaml string
}{
	{"deployment", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: n\n  labels: {app: a}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata:\n      labels: {app: a}\n    spec: POD_SPEC\n"},
	{"cronjob", "cronjobs", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: n}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec: POD_SPEC\n"},
	{"pod", "pods", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, finalizers: []}\nspec: POD_SPEC\n"},
}

// podSpecShapes are objects whose pod template is missing or odd, with whether the walk is
// neutral on them.
var podSpecShapes = []struct {
	name, resource, yaml string
	neutral              bool
}{
	{"deployment without template", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n", true},
	{"deployment without spec", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", true},
	{"deployment with null template", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: null\n", true},
	{"deployment with empty template", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: {}\n", true},
	{"deployment with null pod spec", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec: ~\n", true},
	{"deployment with scalar template", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: x\n", true},
	{"cronjob without job template", "cronjobs", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {schedule: x}\n", true},
	{"pod without spec", "pods", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", true},
	{"pod with finalizers", "pods", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, finalizers: [a]}\nspec: {}\n", false},
	{"embedded object", "deployments", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  x: {apiVersion: v1, kind: Pod}\n", false},
}

// podSpecEdits are the profile's pod spec edits, by name.
func podSpecEdits(path []string) map[string]map[string]any {
	scheduling := func(ns string) map[string]any {
		return map[string]any{
			"priorityClassName": "hypershift-control-plane",
			"tolerations": []any{
				map[string]any{"key": "hypershift.openshift.io/control-plane", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
				map[string]any{"key": "hypershift.openshift.io/cluster", "operator": "Equal", "value": ns, "effect": "NoSchedule"},
			},
		}
	}
	return map[string]map[string]any{
		"drop-standalone-scheduling":   {"nodeSelector": nil, "tolerations": nil, "affinity": nil, "priorityClassName": nil},
		"control-plane-scheduling":     scheduling("clusters-example"),
		"control-plane-scheduling/yes": scheduling("yes"),
		"pull-secret":                  {"imagePullSecrets": []any{map[string]any{"name": "pull-secret"}}},
	}
}

// TestPodSpecEditMatchesStrategicMerge proves the profile's pod spec edits equal kustomize's
// strategic merge of the same patches (the oracle), on parsed objects and on the trees the
// engine builds from unstructured objects: the same nodes (kind, tag, value, style but the
// style of a !!str scalar, order), the same object and the same JSON; and that each object
// takes the direct edit when the walk is neutral on it.
func TestPodSpecEditMatchesStrategicMerge(t *testing.T) {
	type object struct {
		name, resource, yaml string
		neutral              bool
	}
	var objects []object
	for _, o := range podSpecObjects {
		for _, c := range podSpecCases {
			at := strings.Index(o.yaml, "POD_SPEC")
			line := o.yaml[strings.LastIndex(o.yaml[:at], "\n")+1 : at]
			depth := (len(line) - len(strings.TrimLeft(line, " "))) / 2
			objects = append(objects, object{o.name + "/" + c.name, o.resource, strings.Replace(o.yaml, "POD_SPEC", indent(c.spec, depth), 1), c.neutral})
		}
	}
	for _, s := range podSpecShapes {
		objects = append(objects, object{s.name, s.resource, s.yaml, s.neutral})
	}
	for _, o := range objects {
		path := podTemplatePath(o.resource)
		parsed, err := yaml.Parse(o.yaml)
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		trees := map[string]*yaml.RNode{"parsed": parsed}
		if m, err := contract.NodeObject(parsed.YNode()); err == nil {
			trees["tree"] = yamlnode.TreeOf(m)
		}
		for _, form := range []string{"parsed", "tree"} {
			tree := trees[form]
			if tree == nil {
				continue
			}
			// A tree has no comments and writes a null as null: neutral where the parse is not
			// for those only.
			neutral := o.neutral || (form == "tree" && (strings.Contains(o.name, "comment") || strings.Contains(o.name, "nothing")))
			for _, name := range slices.Sorted(maps.Keys(podSpecEdits(path))) {
				spec := podSpecEdits(path)[name]
				t.Run(fmt.Sprintf("%s/%s/%s", o.name, form, name), func(t *testing.T) {
					edit, err := newPodSpecEdit(path, spec)
					if err != nil {
						t.Fatal(err)
					}
					patch, err := podSpecPatch(path, spec)
					if err != nil {
						t.Fatal(err)
					}
					want, wantErr := patchstrategicmerge.Filter{Patch: patch}.Filter([]*yaml.RNode{tree.Copy()})
					if got := smpNeutral(tree.YNode()); got != neutral {
						t.Errorf("smpNeutral = %v, want %v", got, neutral)
					}
					got, gotErr := edit.Filter([]*yaml.RNode{tree.Copy()})
					if (gotErr != nil) != (wantErr != nil) {
						t.Fatalf("error %v, the strategic merge's %v", gotErr, wantErr)
					}
					if wantErr != nil {
						return
					}
					if direct := edit.edit(tree.Copy().YNode()); direct != neutral {
						t.Errorf("made directly: %v, want %v", direct, neutral)
					}
					if diff := yamlnodetest.NodeDiff(want[0].YNode(), got[0].YNode(), ""); diff != "" {
						t.Errorf("%s\ngot:\n%s\nthe strategic merge:\n%s", diff, got[0].MustString(), want[0].MustString())
					}
					wantObj, err1 := contract.NodeObject(want[0].YNode())
					gotObj, err2 := contract.NodeObject(got[0].YNode())
					if err1 != nil || err2 != nil || !reflect.DeepEqual(gotObj, wantObj) {
						t.Errorf("object %v (%v), the strategic merge's %v (%v)", gotObj, err2, wantObj, err1)
					}
					wantJSON, err1 := yamlnodetest.ObjectJSON(want[0])
					gotJSON, err2 := yamlnodetest.ObjectJSON(got[0])
					if err1 != nil || err2 != nil || !bytes.Equal(gotJSON, wantJSON) {
						t.Errorf("JSON %s (%v), the strategic merge's %s (%v)", gotJSON, err2, wantJSON, err1)
					}
				})
			}
		}
	}
}

// indent indents every line of a YAML block after the first by n levels; a flow value stays
// on its line.
func indent(s string, n int) string {
	s = strings.TrimSuffix(s, "\n")
	if !strings.Contains(s, "\n") && strings.HasPrefix(s, "{") {
		return s
	}
	pad := strings.Repeat("  ", n+1)
	return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// TestSMPNeutralUntaggedScalars: an untagged plain scalar YAML 1.1 reads as another type is
// one the strategic merge's walk quotes (it becomes a string), so the walk is not neutral.
func TestSMPNeutralUntaggedScalars(t *testing.T) {
	for _, c := range []struct {
		value   string
		neutral bool
	}{{"clusters-example", true}, {"RuntimeDefault", true}, {"true", false}, {"1", false}, {"yes", false}, {"null", false}} {
		obj := yaml.MustParse("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    metadata:\n      labels: {}\n")
		labels := obj.YNode().Content[7].Content[1].Content[1].Content[1]
		labels.Content = append(labels.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "k"}, &yaml.Node{Kind: yaml.ScalarNode, Value: c.value})
		if got := smpNeutral(obj.YNode()); got != c.neutral {
			t.Errorf("%q: smpNeutral = %v, want %v", c.value, got, c.neutral)
		}
		edit, err := newPodSpecEdit(podTemplatePath("deployments"), map[string]any{"imagePullSecrets": []any{map[string]any{"name": "pull-secret"}}})
		if err != nil {
			t.Fatal(err)
		}
		patch, _ := podSpecPatch(podTemplatePath("deployments"), map[string]any{"imagePullSecrets": []any{map[string]any{"name": "pull-secret"}}})
		want, err1 := patchstrategicmerge.Filter{Patch: patch}.Filter([]*yaml.RNode{obj.Copy()})
		got, err2 := edit.Filter([]*yaml.RNode{obj.Copy()})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if d := yamlnodetest.NodeDiff(want[0].YNode(), got[0].YNode(), ""); d != "" {
			t.Errorf("%q: %s", c.value, d)
		}
	}
}

// podTemplatePath returns where a workload kind's pod template is.
func podTemplatePath(resource string) []string {
	if resource == "cronjobs" {
		return []string{"spec", "jobTemplate", "spec", "template"}
	}
	if resource == "pods" {
		return []string{}
	}
	return []string{"spec", "template"}
}
