package references

import (
	"encoding/base64"
	"iter"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
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
	kindService = schema.GroupKind{Kind: "Service"}
	kindSecret  = schema.GroupKind{Kind: "Secret"}
)

// annotations are the annotations the engine follows like fields of the reference
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
var annotations = []AnnotationReference{
	{Referrer: kindService, Annotation: "service.beta.openshift.io/serving-cert-secret-name", To: kindSecret},
	{Referrer: kindService, Annotation: "service.alpha.openshift.io/serving-cert-secret-name", To: kindSecret},
	{Referrer: kindSecret, Annotation: "service.beta.openshift.io/originating-service-name", To: kindService},
	{Referrer: kindSecret, Annotation: "service.alpha.openshift.io/originating-service-name", To: kindService},
	{Referrer: kindSecret, Annotation: "kubernetes.io/service-account.name", To: schema.GroupKind{Kind: "ServiceAccount"}},
}

// everyNamespaceConfigMaps are the ConfigMaps that every namespace has: a reference to one
// means the copy in the namespace the referrer lands in, never a renamed object.
var everyNamespaceConfigMaps = []string{"kube-root-ca.crt", "openshift-service-ca.crt"}

// serviceDNS matches <service>.<namespace>.svc, with .cluster.local or not.
var serviceDNS = regexp.MustCompile(`[a-z0-9]([-a-z0-9]*[a-z0-9])?\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\.svc(\.cluster\.local)?`)

// ServiceDNSNames returns the Services, as namespace/name, that the in-cluster DNS names in
// text name.
func ServiceDNSNames(text string) []string {
	var out []string
	for _, m := range FindServiceDNS(text) {
		out = append(out, m.Namespace+"/"+m.Name)
	}
	return out
}

type DNSMatch struct {
	// Start and End are where the name is in the text.
	Start, End int
	// Name and Namespace are the Service's.
	Name, Namespace string
	// Suffix is what follows the namespace: .svc or .svc.cluster.local.
	Suffix string
}

func FindServiceDNS(text string) []DNSMatch {
	var out []DNSMatch
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
		out = append(out, DNSMatch{Start: start, End: end, Name: name, Namespace: namespace, Suffix: suffix})
	}
	return out
}

func isDNSChar(c byte, dot bool) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || dot && c == '.'
}

// ReplaceServiceDNS replaces each Service DNS name in text for which to names another
// Service (its name and namespace), keeping the name's suffix (.svc, .svc.cluster.local),
// and reports whether it replaced any.
func ReplaceServiceDNS(text string, to func(DNSMatch) (name, namespace string, ok bool)) (string, bool) {
	var b strings.Builder
	last, changed := 0, false
	for _, m := range FindServiceDNS(text) {
		name, namespace, ok := to(m)
		if !ok {
			continue
		}
		b.WriteString(text[last:m.Start])
		b.WriteString(name + "." + namespace + ".svc" + m.Suffix)
		last, changed = m.End, true
	}
	if !changed {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// RewriteDataRecorded is RewriteData that passes each change to record, with the path of
// its key and the stored values before and after.
func RewriteDataRecorded(obj *yaml.RNode, secret bool, f func(string) (string, bool), record func(path []string, from, to string)) error {
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

// RewriteData passes each value of a ConfigMap's or Secret's data and stringData (decoded)
// to f, and writes back what f changed.
func RewriteData(obj *yaml.RNode, secret bool, f func(string) (string, bool)) error {
	return RewriteDataRecorded(obj, secret, f, nil)
}

// AnnotationsOf returns the annotations of objects of kind gk that name another object
// (Service serving-certificate Secrets, token Secrets' service accounts), in a stable order.
func AnnotationsOf(gk schema.GroupKind) iter.Seq[AnnotationReference] {
	return func(yield func(AnnotationReference) bool) {
		for _, a := range annotations {
			if a.Referrer == gk && !yield(a) {
				return
			}
		}
	}
}

// InEveryNamespace reports whether name is a ConfigMap every namespace has
// (kube-root-ca.crt, openshift-service-ca.crt): a reference to one means the copy in the
// referrer's own namespace.
func InEveryNamespace(name string) bool { return slices.Contains(everyNamespaceConfigMaps, name) }

// HasAnnotations reports whether objects of kind gk have annotations that name another
// object (AnnotationsOf).
func HasAnnotations(gk schema.GroupKind) bool {
	return slices.ContainsFunc(annotations, func(a AnnotationReference) bool { return a.Referrer == gk })
}
