package translate

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/internal/yamlnodetest"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestPlainString: what plainString proves a string, YAML 1.1 reads as a string.
func TestPlainString(t *testing.T) {
	values := []string{"", "a", "ab", "v1", "apps/v1", "clusters-example", "RuntimeDefault", "x.y_z-1/2", "ns1",
		"1", "1.5", "-1", "+1", ".5", ".inf", ".NaN", "0x1f", "0o7", "1_000", "1:20", "2001-12-14", "1e3", "~", "<<", "=",
		"a b", "a: b", "a#b", "#a", "[a]", "{a: b}", "a,b", "!a", "&a", "*a", "|", ">", "%a", "@a", "`a", "'a'", "\"a\""}
	for _, w := range []string{"y", "yes", "n", "no", "true", "false", "on", "off", "null"} {
		values = append(values, w, strings.ToUpper(w), strings.ToUpper(w[:1])+w[1:], w+"x", "x"+w)
	}
	for _, v := range values {
		nonString := yaml.IsValueNonString(v)
		if yamlnode.PlainString(v) && nonString {
			t.Errorf("plainString(%q) but YAML 1.1 reads it as another type", v)
		}
		if got := nonStringNode(v); got != nonString {
			t.Errorf("nonString(%q) = %v, IsValueNonString %v", v, got, nonString)
		}
	}
}

func nonStringNode(v string) bool {
	return yamlnode.NonString(&yaml.Node{Kind: yaml.ScalarNode, Value: v})
}

// TestSetHelpersMatchKyaml: setString, setMetadataString, lookupCreate and lookup give what
// kyaml's SetMapField, SetAnnotation, SetLabel, LookupCreate and Lookup give, on objects of
// many shapes.
func TestSetHelpersMatchKyaml(t *testing.T) {
	objects := []string{
		"apiVersion: v1\nkind: ConfigMap\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: \"b\"}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'a'\n  annotations: {}\n  labels: {x: y}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: {}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: {k: \"1\"}\n  labels: {k: old}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: null\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: null\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: x\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: [a]\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    metadata:\n      labels: {k: old, a: b}\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template: {}\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template: null\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    metadata: x\n",
	}
	values := []string{"v", "true", "1", "yes", "a\nb", "clusters-example", ""}
	for _, src := range objects {
		for _, field := range []string{"annotations", "labels"} {
			obj := yaml.MustParse(src)
			got, gotOK := yamlnode.MetadataString(obj, field, "k")
			want, wantOK := yamlnode.StringAt(obj, "metadata", field, "k")
			if got != want || gotOK != wantOK {
				t.Errorf("%q: metadataString %s: %q %v, fieldOf %q %v", src, field, got, gotOK, want, wantOK)
			}
		}
		for _, v := range values {
			for _, c := range []struct {
				name  string
				kyaml func(*yaml.RNode) error
				ours  func(*yaml.RNode) error
			}{
				{"annotation", func(o *yaml.RNode) error { return o.PipeE(yaml.SetAnnotation("k", v)) },
					func(o *yaml.RNode) error {
						return yamlnode.SetMetadataString(o, "annotations", "k", v)
					}},
				{"label", func(o *yaml.RNode) error { return o.PipeE(yaml.SetLabel("k", v)) },
					func(o *yaml.RNode) error { return yamlnode.SetMetadataString(o, "labels", "k", v) }},
				{"annotations at once, one twice", func(o *yaml.RNode) error {
					for _, kv := range [][2]string{{"k", v}, {"new", "x"}, {"k", v + "2"}, {"other", v}} {
						if err := o.PipeE(yaml.SetAnnotation(kv[0], kv[1])); err != nil {
							return err
						}
					}
					return nil
				}, func(o *yaml.RNode) error {
					return yamlnode.SetMetadataStrings(o, "annotations", []string{"k", "new", "k", "other"}, []string{v, "x", v + "2", v})
				}},
				{"labels at once", func(o *yaml.RNode) error {
					if err := o.PipeE(yaml.SetLabel("k", v)); err != nil {
						return err
					}
					return o.PipeE(yaml.SetLabel("a", v))
				}, func(o *yaml.RNode) error {
					return yamlnode.SetMetadataStrings(o, "labels", []string{"k", "a"}, []string{v, v})
				}},
				{"name", func(o *yaml.RNode) error { return o.SetName(v) },
					func(o *yaml.RNode) error {
						return yamlnode.SetString(o, &yaml.Node{Kind: yaml.ScalarNode, Value: v}, "metadata", "name")
					}},
				{"generateName", func(o *yaml.RNode) error {
					meta, err := o.Pipe(yaml.LookupCreate(yaml.MappingNode, "metadata"))
					if err != nil {
						return err
					}
					return meta.PipeE(yaml.SetField("generateName", yaml.NewStringRNode(v)))
				}, func(o *yaml.RNode) error {
					return yamlnode.SetString(o, yaml.NewStringRNode(v).YNode(), "metadata", "generateName")
				}},
				{"template label", func(o *yaml.RNode) error {
					labels, err := o.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "template", "metadata", "labels"))
					if err != nil {
						return err
					}
					return labels.PipeE(yaml.SetField("k", yaml.NewStringRNode(v)))
				}, func(o *yaml.RNode) error {
					return yamlnode.SetString(o, yaml.NewStringRNode(v).YNode(), "spec", "template", "metadata", "labels", "k")
				}},
				{"apiVersion", func(o *yaml.RNode) error { return o.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(v))) },
					func(o *yaml.RNode) error { return yamlnode.SetString(o, yaml.NewStringRNode(v).YNode(), "apiVersion") }},
				{"new field", func(o *yaml.RNode) error { return o.PipeE(yaml.SetField("new", yaml.NewStringRNode(v))) },
					func(o *yaml.RNode) error { return yamlnode.SetString(o, yaml.NewStringRNode(v).YNode(), "new") }},
			} {
				t.Run(fmt.Sprintf("%s/%q/%q", c.name, src, v), func(t *testing.T) {
					want, got := yaml.MustParse(src), yaml.MustParse(src)
					wantErr, gotErr := c.kyaml(want), c.ours(got)
					if (wantErr != nil) != (gotErr != nil) {
						t.Fatalf("error %v, kyaml's %v", gotErr, wantErr)
					}
					if d := yamlnodetest.NodeDiffExact(want.YNode(), got.YNode(), ""); d != "" {
						t.Errorf("%s\ngot:\n%s\nkyaml:\n%s", d, got.MustString(), want.MustString())
					}
				})
			}
		}
		for _, path := range [][]string{{"metadata"}, {"metadata", "labels"}, {"spec", "template", "metadata"}, {"metadata", "labels", "0"}, {}} {
			want, got := yaml.MustParse(src), yaml.MustParse(src)
			_, wantErr := want.Pipe(yaml.LookupCreate(yaml.MappingNode, path...))
			_, gotErr := yamlnode.LookupCreate(got, path...)
			if (wantErr != nil) != (gotErr != nil) {
				t.Errorf("lookupCreate(%q, %q): error %v, kyaml's %v", src, path, gotErr, wantErr)
			}
			if d := yamlnodetest.NodeDiffExact(want.YNode(), got.YNode(), ""); d != "" {
				t.Errorf("lookupCreate(%q, %q): %s", src, path, d)
			}
		}
		for _, path := range [][]string{{"metadata"}, {"metadata", "name"}, {"metadata", "annotations", "k"}, {"metadata", "labels", "0"}, {"metadata", "x", "y"}, {}} {
			o := yaml.MustParse(src)
			want, wantErr := o.Pipe(yaml.Lookup(path...))
			got, gotErr := yamlnode.Lookup(o, path...)
			if (wantErr != nil) != (gotErr != nil) || (want == nil) != (got == nil) || (want != nil && want.YNode() != got.YNode()) {
				t.Errorf("lookup(%q, %q) = %v, %v; kyaml %v, %v", src, path, got, gotErr, want, wantErr)
			}
		}
	}
}

// TestBareServiceAccountTree: the tree, body and object serviceAccountWork builds for a bare
// service account are what the parse of its YAML (the names quoted as Go quotes them) gave.
func TestBareServiceAccountTree(t *testing.T) {
	for _, name := range []string{"sa", "a-b.c", "true", "1", "ünï", "tab\there", "line\nbreak", "q\"uote", "\u2028", "\x01"} {
		parsed := yaml.MustParse("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: " + strconv.Quote(name) + "\n  namespace: " + strconv.Quote(name+"-ns") + "\n")
		built := yamlnode.TreeOf(map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name, "namespace": name + "-ns"}})
		if d := yamlnodetest.NodeDiff(parsed.YNode(), built.YNode(), ""); d != "" {
			t.Errorf("%q: %s", name, d)
		}
		bare := map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name, "namespace": name + "-ns"}}
		js, err1 := yamlnodetest.ObjectJSON(parsed) // the body through JSON, as the contract writes one
		want, err3 := sigsyaml.JSONToYAML(js)
		err1 = errors.Join(err1, err3)
		got, err2 := sigsyaml.Marshal(bare)
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("%q: body %q (%v), the parse's %q (%v)", name, got, err2, want, err1)
		}
		if obj := yamlnode.Unstructured(parsed); obj == nil || !reflect.DeepEqual(obj.Object, bare) {
			t.Errorf("%q: object %v, the parse's %v", name, bare, obj)
		}
	}
}
