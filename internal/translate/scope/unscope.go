package scope

import (
	"slices"

	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/namespaces"
)

// Unscope undoes Scoper.Scope on an object mapped back from the HCP namespace hcp: the
// namespace and operator labels of its pods go, selectors lose the namespace requirement,
// and peers and affinity terms rewritten to the HCP namespace name their standalone
// namespaces again.
func Unscope(obj *yaml.RNode, group, resource, hcp string) error {
	sites, err := podspec.SitesIn(obj)
	if err != nil {
		return err
	}
	metas, err := podMetadataOf(obj, sites, false)
	if err != nil {
		return err
	}
	for _, meta := range metas {
		labels := meta.Field("labels")
		if labels == nil || labels.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		for _, k := range []string{namespaces.LabelNamespace, namespaces.LabelOperator} {
			if _, err := labels.Value.Pipe(yaml.Clear(k)); err != nil {
				return err
			}
		}
		if len(labels.Value.YNode().Content) == 0 {
			if _, err := meta.Pipe(yaml.Clear("labels")); err != nil {
				return err
			}
		}
	}
	for _, site := range selectorSites(obj, group, resource) {
		v := site.parent.Field(site.field)
		if v == nil || v.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		if site.plain {
			if _, err := v.Value.Pipe(yaml.Clear(namespaces.LabelNamespace)); err != nil {
				return err
			}
			continue
		}
		nss := removeNamespaceRequirement(v.Value)
		if !site.peer || len(nss) == 0 {
			continue
		}
		nsSel, nsList := site.parent.Field("namespaceSelector"), site.parent.Field("namespaces")
		switch {
		case nsSel != nil && slices.Equal(mustNames(nsSel.Value.YNode()), []string{hcp}):
			sel := yaml.NewMapRNode(nil)
			if len(nss) == 1 {
				if err := sel.PipeE(yaml.SetField("matchLabels", yaml.NewMapRNode(&map[string]string{labelNamespaceName: nss[0]}))); err != nil {
					return err
				}
			} else {
				req := yaml.NewMapRNode(&map[string]string{"key": labelNamespaceName, "operator": "In"})
				if err := req.PipeE(yaml.SetField("values", yaml.NewListRNode(nss...))); err != nil {
					return err
				}
				if err := sel.PipeE(yaml.SetField("matchExpressions", yaml.NewListRNode())); err != nil {
					return err
				}
				if err := sel.Field("matchExpressions").Value.PipeE(yaml.Append(req.YNode())); err != nil {
					return err
				}
			}
			if err := site.parent.PipeE(yaml.SetField("namespaceSelector", sel)); err != nil {
				return err
			}
			if len(v.Value.YNode().Content) == 0 && site.field == "podSelector" {
				if _, err := site.parent.Pipe(yaml.Clear(site.field)); err != nil {
					return err
				}
			}
		case nsList != nil && slices.Equal(mustNames(nsList.Value.YNode()), []string{hcp}):
			if err := site.parent.PipeE(yaml.SetField("namespaces", yaml.NewListRNode(nss...))); err != nil {
				return err
			}
		}
	}
	return nil
}

func mustNames(n *yaml.Node) []string {
	if n = yamlnode.RefDeref(n); n != nil && n.Kind == yaml.SequenceNode {
		out, _ := scalarList(n)
		return out
	}
	out, _ := namespaceNames(n)
	return out
}

// removeNamespaceRequirement removes the namespace label's requirement from a LabelSelector
// and returns the namespaces it required.
func removeNamespaceRequirement(sel *yaml.RNode) []string {
	var nss []string
	if ml := sel.Field("matchLabels"); ml != nil && ml.Value.YNode().Kind == yaml.MappingNode {
		if v := ml.Value.Field(namespaces.LabelNamespace); v != nil {
			nss = append(nss, v.Value.YNode().Value)
			_, _ = ml.Value.Pipe(yaml.Clear(namespaces.LabelNamespace))
		}
		if len(ml.Value.YNode().Content) == 0 {
			_, _ = sel.Pipe(yaml.Clear("matchLabels"))
		}
	}
	if me := sel.Field("matchExpressions"); me != nil && me.Value.YNode().Kind == yaml.SequenceNode {
		n := me.Value.YNode()
		kept := n.Content[:0]
		for _, e := range n.Content {
			if k := yamlnode.RefScalar(yamlnode.RefLookup(e, "key")); k != nil && k.Value == namespaces.LabelNamespace {
				vals, _ := scalarList(yamlnode.RefLookup(e, "values"))
				nss = append(nss, vals...)
				continue
			}
			kept = append(kept, e)
		}
		n.Content = kept
		if len(kept) == 0 {
			_, _ = sel.Pipe(yaml.Clear("matchExpressions"))
		}
	}
	return nss
}
