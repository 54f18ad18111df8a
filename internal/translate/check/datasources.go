package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// claimSpecPaths are where the claim specs of each kind are, as paths whose "[]" segments
// walk every element of a list.
var claimSpecPaths = map[string][][]string{
	"persistentvolumeclaims": {{"spec"}},
	"statefulsets":           {{"spec", "volumeClaimTemplates", "[]", "spec"}},
}

// ephemeralClaimPath is where a pod spec's ephemeral volumes' claim specs are.
var ephemeralClaimPath = []string{"volumes", "[]", "ephemeral", "volumeClaimTemplate", "spec"}

// clonesVolumes reports whether a claim spec of obj, an unstructured object of resource, has
// a dataSource or dataSourceRef mapping: what checkVolumeDataSources reads.
func clonesVolumes(obj map[string]any, resource string) bool {
	var walk func(v any, path []string) bool
	walk = func(v any, path []string) bool {
		if len(path) == 0 {
			m, _ := v.(map[string]any)
			_, source := m["dataSource"].(map[string]any)
			_, sourceRef := m["dataSourceRef"].(map[string]any)
			return source || sourceRef
		}
		if path[0] == "[]" {
			l, _ := v.([]any)
			return slices.ContainsFunc(l, func(e any) bool { return walk(e, path[1:]) })
		}
		m, _ := v.(map[string]any)
		return m != nil && walk(m[path[0]], path[1:])
	}
	if slices.ContainsFunc(claimSpecPaths[resource], func(p []string) bool { return walk(obj, p) }) {
		return true
	}
	sites, err := podspec.Find((&unstructured.Unstructured{Object: obj}).GroupVersionKind().GroupKind(), obj)
	return err != nil || slices.ContainsFunc(sites, func(s podspec.Site) bool { return walk(s.Spec.Get(obj), ephemeralClaimPath) })
}

// claimSpecs returns the claim specs in obj, a standalone-form object of resource, each with
// its field path ("spec.volumeClaimTemplates[0].spec",
// "spec.template.spec.volumes[name=scratch].ephemeral.volumeClaimTemplate.spec").
func claimSpecs(obj *yaml.RNode, resource string) map[string]*yaml.RNode {
	out := map[string]*yaml.RNode{}
	var walk func(n *yaml.RNode, path []string, at string)
	walk = func(n *yaml.RNode, path []string, at string) {
		if n == nil {
			return
		}
		if len(path) == 0 {
			out[strings.TrimPrefix(at, ".")] = n
			return
		}
		if path[0] == "[]" {
			elems, err := n.Elements()
			if err != nil {
				return
			}
			for i, e := range elems {
				// A named element (a volume) is keyed by its name: a transform may drop the
				// elements before it (host-path volumes).
				key := fmt.Sprintf("%s[%d]", at, i)
				if name := yamlnode.FieldString(e, "name"); name != "" {
					key = fmt.Sprintf("%s[name=%s]", at, name)
				}
				walk(e, path[1:], key)
			}
			return
		}
		f := n.Field(path[0])
		if f == nil {
			return
		}
		walk(f.Value, path[1:], at+"."+path[0])
	}
	for _, p := range claimSpecPaths[resource] {
		walk(obj, p, "")
	}
	sites, _ := podspec.SitesIn(obj) // the policy refuses an object beyond the search's bounds
	for _, s := range sites {
		if spec := s.Spec.Node(obj.YNode()); spec != nil {
			walk(yaml.NewRNode(spec), ephemeralClaimPath, "."+s.Spec.String())
		}
	}
	return out
}

// checkVolumeDataSources rejects a management entry whose claims clone a volume outside the
// operator's simulated namespace (RuleVolumeDataSource). The source is read in the object as
// the operator wrote it and as it lands: a source must stay in the claim's standalone
// namespace, be of a kind the engine maps, and land where the name mapping puts that object.
func (e *Checker) checkVolumeDataSources(w Write) {
	if e.Policy == nil || w.Entry().Disposition != routing.Apply || w.Entry().Target.Cluster != routing.ClusterManagement ||
		w.Source() == nil || w.Final() == nil || w.Mutation().Metadata.Action.IsStatus() {
		return
	}
	src := w.Entry().Source
	if !clonesVolumes(w.Source().Object, src.Resource) {
		return // no claim with a source: no tree to build
	}
	final := claimSpecs(w.Final(), src.Resource)
	for at, spec := range claimSpecs(w.Tree(), src.Resource) {
		for _, field := range []string{"dataSource", "dataSourceRef"} {
			ref := spec.Field(field)
			if ref == nil || ref.Value.YNode().Kind != yaml.MappingNode {
				continue
			}
			if why := e.dataSourceProblem(src, ref.Value, final[at]); why != "" {
				w.Reject(policy.RuleVolumeDataSource, fmt.Sprintf("%s: %s.%s: %s", src, at, field, why))
				return
			}
		}
	}
}

// dataSourceProblem returns why a claim's data source ref (as the operator wrote it) may not
// land on the management cluster, given the claim spec as it lands; "" when it may.
func (e *Checker) dataSourceProblem(src contract.Identity, ref, landed *yaml.RNode) string {
	kind, name, ns := yamlnode.FieldString(ref, "kind"), yamlnode.FieldString(ref, "name"), yamlnode.FieldString(ref, "namespace")
	gk := schema.GroupKind{Group: yamlnode.FieldString(ref, "apiGroup"), Kind: kind}
	if ns != "" && ns != src.Namespace {
		return fmt.Sprintf("clones from namespace %s, outside the claim's own (%s): on the management cluster that would reach another simulated namespace or the hosted control plane's own volumes", ns, src.Namespace)
	}
	resource, ok := e.Discovery.ResourceForKind(gk)
	if !ok {
		return fmt.Sprintf("clones a %s, a kind whose names the engine cannot map: its name %q would name an object of the hosted control plane's namespace", gk, name)
	}
	target, err := e.Names.ToTarget(routing.ClusterManagement, contract.Identity{Group: gk.Group, Resource: resource, Namespace: src.Namespace, Name: name})
	if err != nil {
		return fmt.Sprintf("%s %s/%s cannot be mapped: %v", gk, src.Namespace, name, err)
	}
	var got string
	if landed != nil {
		for _, f := range []string{"dataSource", "dataSourceRef"} {
			if r := landed.Field(f); r != nil && yamlnode.FieldString(r.Value, "kind") == kind {
				if got = yamlnode.FieldString(r.Value, "name"); got != "" {
					break
				}
			}
		}
	}
	if got != target.Name {
		return fmt.Sprintf("clones %s %q, which lands as %q, not as %s %s/%s of the claim's simulated namespace (%q)", gk, name, got, gk, src.Namespace, name, target.Name)
	}
	return ""
}
