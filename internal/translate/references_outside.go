package translate

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"

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
	// ByAnnotationReferences rewrites the annotations of annotationReferences.
	ByAnnotationReferences = "annotation-references"
	// ByPayloadServiceDNS rewrites in-cluster Service DNS names inside ConfigMap and Secret
	// data.
	ByPayloadServiceDNS = "payload-service-dns"
)

// AnnotationReference is an annotation whose value names another object in the annotated
// object's namespace.
type AnnotationReference struct {
	// Referrer is the kind of the annotated object.
	Referrer schema.GroupKind
	// Annotation is the annotation's key.
	Annotation string
	// To is the kind of the object the value names.
	To schema.GroupKind
}

var (
	kindService   = schema.GroupKind{Kind: "Service"}
	kindSecret    = schema.GroupKind{Kind: "Secret"}
	kindConfigMap = schema.GroupKind{Kind: "ConfigMap"}
)

// annotationReferences are the annotations the engine follows like fields of the reference
// table: OpenShift's service-ca operator writes the serving certificate of a Service into the
// Secret its serving-cert-secret-name annotation names, and records on that Secret the
// Service it serves; Kubernetes' token controller fills a service-account-token Secret for
// the ServiceAccount its kubernetes.io/service-account.name annotation names, and deletes the
// Secret when that ServiceAccount does not exist.
//
// Not references, and left as they are: the service-ca operator's inject-cabundle and
// config.openshift.io/inject-trusted-cabundle (flags), serving-cert-signed-by (the signer's
// name), openshift.io/owning-component (a product component), and library-go's
// operator.openshift.io/dep-* keys on workloads (hashes of the objects they name: only
// compared, never read back as names).
var annotationReferences = []AnnotationReference{
	{Referrer: kindService, Annotation: "service.beta.openshift.io/serving-cert-secret-name", To: kindSecret},
	{Referrer: kindService, Annotation: "service.alpha.openshift.io/serving-cert-secret-name", To: kindSecret},
	{Referrer: kindSecret, Annotation: "service.beta.openshift.io/originating-service-name", To: kindService},
	{Referrer: kindSecret, Annotation: "service.alpha.openshift.io/originating-service-name", To: kindService},
	{Referrer: kindSecret, Annotation: "kubernetes.io/service-account.name", To: schema.GroupKind{Kind: "ServiceAccount"}},
}

// everyNamespaceConfigMaps are the ConfigMaps that every namespace has: a reference to one
// means the copy in the namespace the referrer lands in, never a renamed object.
var everyNamespaceConfigMaps = []string{"kube-root-ca.crt", "openshift-service-ca.crt"}

// everyNamespace returns the target of a reference to an object every namespace has, which
// the plan does not contain: the same name in the referrer's target namespace.
func (r *renamer) everyNamespace(src contract.Identity) (contract.Identity, bool) {
	if src.Group != "" || src.Resource != "configmaps" || src.Namespace == "" || !slices.Contains(everyNamespaceConfigMaps, src.Name) {
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
// table: the annotations of annotationReferences, and Service DNS names in the data of
// ConfigMaps and Secrets. obj is in standalone form. Each change is passed to record.
func (e Engine) rewriteOutsideTable(obj *yaml.RNode, r *renamer, record func([]plans.Change)) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if gk != kindService && gk != kindSecret && gk != kindConfigMap {
		return nil
	}
	ns := obj.GetNamespace()
	annotations := obj.GetAnnotations()
	for _, a := range annotationReferences {
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
	if gk == kindService {
		return nil
	}
	// Changes are recorded per key, as the JSON value of the key (base64 in a Secret's data).
	return rewriteDataRecorded(obj, gk == kindSecret, r.rewriteServiceDNS, func(path []string, from, to string) {
		record([]plans.Change{{Path: yamlnode.Pointer(path), From: from, To: to, By: ByPayloadServiceDNS, Kind: plans.ChangeReference}})
	})
}

// serviceDNS matches <service>.<namespace>.svc, with .cluster.local or not.
var serviceDNS = regexp.MustCompile(`[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\.svc(\.cluster\.local)?`)

// ServiceDNSNames returns the Services, as namespace/name, that the in-cluster DNS names in
// text name.
func ServiceDNSNames(text string) []string {
	var out []string
	for _, m := range findServiceDNS(text) {
		out = append(out, m.namespace+"/"+m.name)
	}
	return out
}

type dnsMatch struct {
	start, end      int
	name, namespace string
	suffix          string
}

func findServiceDNS(text string) []dnsMatch {
	var out []dnsMatch
	for _, loc := range serviceDNS.FindAllStringIndex(text, -1) {
		start, end := loc[0], loc[1]
		if start > 0 && isDNSChar(text[start-1], true) {
			continue // part of a longer name
		}
		if end < len(text) && (isDNSChar(text[end], false) || text[end] == '.' && end+1 < len(text) && isDNSChar(text[end+1], false)) {
			continue // svc.example.com: not an in-cluster name
		}
		host := text[start:end]
		suffix := ""
		if h, ok := strings.CutSuffix(host, ".cluster.local"); ok {
			host, suffix = h, ".cluster.local"
		}
		host = strings.TrimSuffix(host, ".svc")
		name, namespace, _ := strings.Cut(host, ".")
		out = append(out, dnsMatch{start: start, end: end, name: name, namespace: namespace, suffix: suffix})
	}
	return out
}

func isDNSChar(c byte, dot bool) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || dot && c == '.'
}

// rewriteServiceDNS renames the Service DNS names in text that name a Service the plan
// places in the referrer's cluster, or a Service of a namespace the plan simulates there
// (which another run of the operator writes: the renamer warns it is dangling). Names of
// other namespaces (kubernetes.default.svc) are left as they are.
func (r *renamer) rewriteServiceDNS(text string) (string, bool) {
	return replaceServiceDNS(text, func(m dnsMatch) (string, string, bool) {
		src := contract.Identity{Resource: "services", Namespace: m.namespace, Name: m.name}
		_, inPlan := r.index[keyOf("", src)]
		if !inPlan && !r.simulatesNamespace(m.namespace) {
			return "", "", false
		}
		target, _, ok := r.resolve(kindService, m.namespace, m.name)
		if !ok || (target.Name == m.name && target.Namespace == m.namespace) {
			return "", "", false
		}
		return target.Name, target.Namespace, true
	})
}

// replaceServiceDNS replaces each Service DNS name in text for which to names another
// Service (its name and namespace), keeping the name's suffix (.svc, .svc.cluster.local),
// and reports whether it replaced any.
func replaceServiceDNS(text string, to func(dnsMatch) (name, namespace string, ok bool)) (string, bool) {
	var b strings.Builder
	last, changed := 0, false
	for _, m := range findServiceDNS(text) {
		name, namespace, ok := to(m)
		if !ok {
			continue
		}
		b.WriteString(text[last:m.start])
		b.WriteString(name + "." + namespace + ".svc" + m.suffix)
		last, changed = m.end, true
	}
	if !changed {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
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
	if gk != kindService && gk != kindSecret && gk != kindConfigMap {
		return nil
	}
	annotations := obj.GetAnnotations()
	for _, a := range annotationReferences {
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
	if gk == kindService {
		return nil
	}
	return rewriteData(obj, gk == kindSecret, func(text string) (string, bool) {
		return replaceServiceDNS(text, func(m dnsMatch) (string, string, bool) {
			if m.namespace != ns {
				return "", "", false
			}
			src, ok := r.lookup(kindService, m.namespace, m.name)
			if !ok || src.Namespace == "" || (src.Namespace == m.namespace && src.Name == m.name) {
				return "", "", false
			}
			return src.Name, src.Namespace, true
		})
	})
}

// rewriteDataRecorded is rewriteData that passes each change to record, with the path of
// its key and the stored values before and after.
func rewriteDataRecorded(obj *yaml.RNode, secret bool, f func(string) (string, bool), record func(path []string, from, to string)) error {
	for _, field := range []string{"data", "stringData"} {
		data := obj.Field(field)
		if data == nil || data.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		encoded := secret && field == "data"
		c := data.Value.YNode().Content
		for i := 1; i < len(c); i += 2 {
			v := yamlnode.RefDeref(c[i])
			if v.Kind != yaml.ScalarNode {
				continue
			}
			text := v.Value
			if encoded {
				b, err := base64.StdEncoding.DecodeString(text)
				if err != nil {
					continue
				}
				text = string(b)
			} else if !strings.Contains(text, ".svc") {
				continue
			}
			out, changed := f(text)
			if !changed {
				continue
			}
			if encoded {
				out = base64.StdEncoding.EncodeToString([]byte(out))
			}
			from := v.Value
			yamlnode.RefSetString(v, out)
			if record != nil {
				record([]string{field, c[i-1].Value}, from, out)
			}
		}
	}
	return nil
}

// rewriteData passes each value of a ConfigMap's or Secret's data and stringData (decoded)
// to f, and writes back what f changed.
func rewriteData(obj *yaml.RNode, secret bool, f func(string) (string, bool)) error {
	return rewriteDataRecorded(obj, secret, f, nil)
}
