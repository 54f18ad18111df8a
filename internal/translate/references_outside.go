package translate

import (
	"fmt"
	"slices"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// The steps that rewrite references outside the kind/field table (Change.By).
const (
	// ByAnnotationReferences rewrites the annotations of references.Annotations.
	ByAnnotationReferences = "annotation-references"
	// ByPayloadServiceDNS rewrites in-cluster Service DNS names inside ConfigMap and Secret
	// data.
	ByPayloadServiceDNS = "payload-service-dns"
)

// everyNamespace returns the target of a reference to an object every namespace has, which
// the plan does not contain: the same name in the referrer's target namespace.
func (r *renamer) everyNamespace(src contract.Identity) (contract.Identity, bool) {
	if src.Group != "" || src.Resource != "configmaps" || src.Namespace == "" || !slices.Contains(references.EveryNamespaceConfigMaps, src.Name) {
		return contract.Identity{}, false
	}
	if r.from != routing.ClusterManagement {
		return contract.Identity{}, false
	}
	target, err := r.engine.Names.ToTarget(r.from, src)
	if err != nil {
		return contract.Identity{}, false
	}
	target.Name = src.Name
	return target, true
}

// rewriteOutsideTable rewrites, with r, the references obj holds outside the kind/field
// table: the annotations of references.Annotations, and Service DNS names in the data of
// ConfigMaps and Secrets. obj is in standalone form. Each change is passed to record.
func (e Engine) rewriteOutsideTable(obj *yaml.RNode, r *renamer, record func([]plans.Change)) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if gk != references.KindService && gk != references.KindSecret && gk != references.KindConfigMap {
		return nil
	}
	ns := obj.GetNamespace()
	annotations := obj.GetAnnotations()
	for _, a := range references.Annotations {
		name := annotations[a.Annotation]
		if a.Referrer != gk || name == "" {
			continue
		}
		renamed, ok := r.Rename(references.Reference{Kind: a.To, Namespace: ns, Name: name})
		if !ok || renamed.Name == "" || renamed.Name == name {
			continue
		}
		if err := obj.PipeE(yaml.SetAnnotation(a.Annotation, renamed.Name)); err != nil {
			return fmt.Errorf("rewrite annotation %s: %w", a.Annotation, err)
		}
		record([]plans.Change{{Path: yamlnode.Pointer([]string{"metadata", "annotations", a.Annotation}), From: name, To: renamed.Name, By: ByAnnotationReferences, Kind: plans.ChangeReference}})
	}
	if gk == references.KindService {
		return nil
	}
	// Changes are recorded per key, as the JSON value of the key (base64 in a Secret's data).
	return references.RewriteDataRecorded(obj, gk == references.KindSecret, r.rewriteServiceDNS, func(path []string, from, to string) {
		record([]plans.Change{{Path: yamlnode.Pointer(path), From: from, To: to, By: ByPayloadServiceDNS, Kind: plans.ChangeReference}})
	})
}

// rewriteServiceDNS renames the Service DNS names in text that name a Service the plan
// places in the referrer's cluster, or a Service of a namespace the plan simulates there
// (which another run of the operator writes: the renamer warns it is dangling). Names of
// other namespaces (kubernetes.default.svc) are left as they are.
func (r *renamer) rewriteServiceDNS(text string) (string, bool) {
	return references.ReplaceServiceDNS(text, func(m references.DNSMatch) (string, string, bool) {
		src := contract.Identity{Resource: "services", Namespace: m.Namespace, Name: m.Name}
		_, inPlan := r.index[keyOf("", src)]
		if !inPlan && !r.simulatesNamespace(m.Namespace) {
			return "", "", false
		}
		target, _, ok := r.resolve(references.KindService, m.Namespace, m.Name)
		if !ok || (target.Name == m.Name && target.Namespace == m.Namespace) {
			return "", "", false
		}
		return target.Name, target.Namespace, true
	})
}

// simulatesNamespace says whether the plan places objects of standalone namespace ns in the
// referrer's cluster under another namespace (a simulated namespace).
func (r *renamer) simulatesNamespace(ns string) bool {
	if r.simulated == nil {
		r.simulated = map[string]bool{}
		for k, p := range r.index {
			if k.namespace != "" && p.cluster == r.from && p.target.Namespace != k.namespace {
				r.simulated[k.namespace] = true
			}
		}
	}
	return r.simulated[ns]
}

// outsideTable maps back the references rewriteOutsideTable rewrote, in obj found in
// namespace ns of the target.
func (r *inverseRenamer) outsideTable(obj *yaml.RNode, ns string) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if gk != references.KindService && gk != references.KindSecret && gk != references.KindConfigMap {
		return nil
	}
	annotations := obj.GetAnnotations()
	for _, a := range references.Annotations {
		name := annotations[a.Annotation]
		if a.Referrer != gk || name == "" {
			continue
		}
		if renamed, ok := r.Rename(references.Reference{Kind: a.To, Namespace: ns, Name: name}); ok && renamed.Name != "" {
			if err := obj.PipeE(yaml.SetAnnotation(a.Annotation, renamed.Name)); err != nil {
				return err
			}
		}
	}
	if gk == references.KindService {
		return nil
	}
	return references.RewriteData(obj, gk == references.KindSecret, func(text string) (string, bool) {
		return references.ReplaceServiceDNS(text, func(m references.DNSMatch) (string, string, bool) {
			if m.Namespace != ns {
				return "", "", false
			}
			src, ok := r.lookup(references.KindService, m.Namespace, m.Name)
			if !ok || src.Namespace == "" || (src.Namespace == m.Namespace && src.Name == m.Name) {
				return "", "", false
			}
			return src.Name, src.Namespace, true
		})
	})
}
