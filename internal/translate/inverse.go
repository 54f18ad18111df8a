package translate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
)

// Inverse maps objects found on a target cluster back to the standalone form an operator
// wrote and expects to read: its identity (from the standalone-identity annotations, checked
// against the name mapping), its apiVersion and kind (shadow groups and converted RBAC undone),
// the references inside it, and without topolayer's own annotations and label. Transforms are
// not undone: what the hosted control plane needs (labels, tolerations, ...) stays. Pure.
type Inverse struct {
	// Names is the topology's name mapping.
	Names namespaces.Mapper
	// Discovery maps kinds and resources; nil means contract.DefaultDiscovery().
	Discovery *contract.Discovery
}

// topolayerAnnotations are removed from objects mapped back.
var topolayerAnnotations = []string{
	namespaces.AnnotationStandaloneGroup, namespaces.AnnotationStandaloneResource,
	namespaces.AnnotationStandaloneNamespace, namespaces.AnnotationStandaloneName,
	namespaces.AnnotationStandaloneGenerateName, namespaces.AnnotationOwnerHCP, transform.AnnotationWithheld,
}

// Object returns the standalone form of obj, an object read from cluster whose target
// identity is id, with its standalone identity and warnings about references it could not map
// back. obj is not modified.
func (inv Inverse) Object(cluster string, id contract.Identity, obj *yaml.RNode) (*yaml.RNode, contract.Identity, []string, error) {
	if inv.Discovery == nil {
		inv.Discovery = contract.DefaultDiscovery()
	}
	out := obj.Copy()
	src, err := inv.Names.ToSource(cluster, id, out.GetAnnotations())
	if err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := restoreWithheld(out); err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: %s: %w", id, transform.AnnotationWithheld, err)
	}
	r := &inverseRenamer{inv: inv, cluster: cluster}
	if _, _, err := references.RewriteReferences(out, r); err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: references: %w", id, err)
	}
	if src.IsEvent() {
		if err := inv.involvedObject(out, r); err != nil {
			return nil, contract.Identity{}, nil, err
		}
	}
	if err := r.outsideTable(out, id.Namespace); err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := r.statusReferences(out, id.Namespace); err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: status references: %w", id, err)
	}
	if err := inv.serviceAccountToken(out, cluster, id.Namespace, src.Namespace); err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: %w", id, err)
	}
	e := Engine{Discovery: inv.Discovery}
	if _, err := e.setIdentity(out, id, src, ""); err != nil {
		return nil, contract.Identity{}, nil, fmt.Errorf("%s: %w", id, err)
	}
	// Objects placed in the HCP namespace were scoped, also those whose standalone namespace
	// is the HCP namespace itself (Engine.scopes).
	if id.Namespace != "" && src.Namespace != "" && (src.Namespace != id.Namespace || cluster == routing.ClusterManagement) {
		if err := scope.Unscope(out, src.Group, src.Resource, id.Namespace); err != nil {
			return nil, contract.Identity{}, nil, fmt.Errorf("%s: %s: %w", id, scope.Rule, err)
		}
	}
	if src.Namespace == "" {
		if meta := out.Field("metadata"); meta != nil {
			_ = meta.Value.PipeE(yaml.Clear("namespace"))
		}
	}
	for _, a := range topolayerAnnotations {
		if err := removeMetadataKey(out, "annotations", a); err != nil {
			return nil, contract.Identity{}, nil, err
		}
	}
	if err := removeMetadataKey(out, "labels", namespaces.LabelOperator); err != nil {
		return nil, contract.Identity{}, nil, err
	}
	return out, src, r.warnings, nil
}

// restoreWithheld puts back the labels and annotations a transform withheld from the cluster
// (transform.Withhold), where the object does not set them itself: the operator wrote them.
// Its references are mapped back after, like the object's own.
func restoreWithheld(obj *yaml.RNode) error {
	labels, annotations, ok := transform.Withheld(obj.GetAnnotations())
	if !ok {
		return nil
	}
	for _, kept := range []struct {
		field  string
		values map[string]string
	}{{"labels", labels}, {"annotations", annotations}} {
		for _, k := range slices.Sorted(maps.Keys(kept.values)) {
			if _, set := yamlnode.MetadataString(obj, kept.field, k); set {
				continue
			}
			if err := yamlnode.SetMetadataString(obj, kept.field, k, kept.values[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeMetadataKey deletes one key of metadata.labels or metadata.annotations, and the map
// itself when it becomes empty.
func removeMetadataKey(obj *yaml.RNode, field, key string) error {
	m, err := obj.Pipe(yaml.Lookup("metadata", field))
	if err != nil || m == nil {
		return err
	}
	if _, err := m.Pipe(yaml.Clear(key)); err != nil {
		return err
	}
	if len(m.YNode().Content) == 0 {
		_, err = obj.Pipe(yaml.Lookup("metadata"), yaml.Clear(field))
	}
	return err
}

// inverseRenamer maps references on a target back to the standalone objects they name.
type inverseRenamer struct {
	inv      Inverse
	cluster  string
	warnings []string
}

var _ references.Renamer = (*inverseRenamer)(nil)

func (r *inverseRenamer) lookup(gk schema.GroupKind, namespace, name string) (contract.Identity, bool) {
	known := gk
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		known.Group = original // a shadow kind has the resources of its original
	}
	resource, ok := r.inv.Discovery.ResourceForKind(known)
	if !ok {
		return contract.Identity{}, false
	}
	target := contract.Identity{Group: gk.Group, Resource: resource, Namespace: namespace, Name: name}
	if namespace == "" {
		return contract.Identity{}, false // cluster-scoped objects outside the HCP namespace keep their names
	}
	src, err := r.inv.Names.ToSource(r.cluster, target, nil)
	if err != nil {
		r.warn(fmt.Sprintf("reference to %s cannot be mapped back: %v", target, err))
		return contract.Identity{}, false
	}
	return src, true
}

func (r *inverseRenamer) warn(msg string) {
	if !slices.Contains(r.warnings, msg) {
		r.warnings = append(r.warnings, msg)
	}
}

// Rename implements Renamer in the inverse direction.
func (r *inverseRenamer) Rename(ref references.Reference) (references.Renamed, bool) {
	src, ok := r.lookup(ref.Kind, ref.Namespace, ref.Name)
	if !ok || (src.Namespace == ref.Namespace && src.Name == ref.Name && src.Group == ref.Kind.Group) {
		return references.Renamed{}, false
	}
	return renamedAs(r.inv.Discovery, ref.Kind, src), true
}

// involvedObject maps an event's involvedObject back.
func (inv Inverse) involvedObject(obj *yaml.RNode, r *inverseRenamer) error {
	for _, field := range []string{"involvedObject", "regarding", "related"} {
		ref := obj.Field(field)
		if ref == nil || ref.Value == nil || ref.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		apiVersion := yamlnode.FieldString(ref.Value, "apiVersion")
		gv, _ := schema.ParseGroupVersion(apiVersion)
		if apiVersion == "" {
			gv.Group, _ = inv.Discovery.GroupForKind(yamlnode.FieldString(ref.Value, "kind"))
		}
		kind, name, ns := yamlnode.FieldString(ref.Value, "kind"), yamlnode.FieldString(ref.Value, "name"), yamlnode.FieldString(ref.Value, "namespace")
		if kind == "" || name == "" {
			continue
		}
		src, ok := r.lookup(schema.GroupKind{Group: gv.Group, Kind: kind}, ns, name)
		if !ok {
			continue
		}
		if err := ref.Value.PipeE(yaml.SetField("name", yaml.NewStringRNode(src.Name))); err != nil {
			return err
		}
		if src.Namespace == "" {
			if _, err := ref.Value.Pipe(yaml.Clear("namespace")); err != nil {
				return err
			}
		} else if err := ref.Value.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(src.Namespace))); err != nil {
			return err
		}
		if apiVersion != "" && src.Group != gv.Group {
			v := schema.GroupVersion{Group: src.Group, Version: gv.Version}.String()
			if err := ref.Value.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(v))); err != nil {
				return err
			}
		}
	}
	return nil
}

// serviceAccountToken maps the account annotation of a service-account-token Secret read on
// cluster, in namespace, back to the account's standalone name. A name that does not map back
// to an account of the Secret's own standalone namespace (srcNamespace) is left as it is.
func (inv Inverse) serviceAccountToken(obj *yaml.RNode, cluster, namespace, srcNamespace string) error {
	name, ok := check.ServiceAccountTokenOf(obj)
	if !ok || name == "" {
		return nil
	}
	src, err := inv.Names.ToSource(cluster, check.ServiceAccountID(namespace, name), nil)
	if err != nil || src.Namespace != srcNamespace || src.Name == name {
		return nil
	}
	return obj.PipeE(yaml.SetAnnotation(check.AnnotationServiceAccountName, src.Name))
}
