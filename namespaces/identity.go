package namespaces

import (
	"strings"

	"github.com/topolayer/topolayer/contract"
)

// Annotations and the label that every object topolayer writes on a hosted target carries.
// The inverse mapping reads them; the name encoding is a second check, never the only source.
const (
	AnnotationStandaloneGroup     = "topolayer.dev/standalone-group"
	AnnotationStandaloneResource  = "topolayer.dev/standalone-resource"
	AnnotationStandaloneNamespace = "topolayer.dev/standalone-namespace"
	AnnotationStandaloneName      = "topolayer.dev/standalone-name"
	// AnnotationStandaloneGenerateName records the generateName of an object created from a
	// generateName request (its standalone name is then ""). It is absent otherwise.
	AnnotationStandaloneGenerateName = "topolayer.dev/standalone-generate-name"
	LabelOperator                    = "topolayer.dev/operator"
	// LabelNamespace names, on every pod (and pod template) placed in a hosted control
	// plane's namespace, the standalone namespace it belongs to: its simulated namespace.
	// The selectors of objects from that simulated namespace are narrowed by it.
	LabelNamespace = "topolayer.dev/namespace"
)

// AnnotationOwnerHCP is how plans made before the management target owned its objects
// asked the applier for an ownerReference to the named HostedControlPlane. Nothing sets it
// any more; the inverse placement and the applier strip it from old objects.
const AnnotationOwnerHCP = "topolayer.dev/owner-hosted-control-plane"

// ShadowGroupSuffix is appended to the API group of a cluster-scoped kind to name the group
// of its namespaced shadow kind on the management cluster.
const ShadowGroupSuffix = ".shadow.topolayer.dev"

// coreShadowGroup stands for the core group, which has no name to suffix.
const coreShadowGroup = "core"

// ShadowGroup returns the group of the shadow kind of a cluster-scoped kind in group, e.g.
// "operator.openshift.io" -> "operator.openshift.io.shadow.topolayer.dev", "" -> "core.shadow.topolayer.dev".
func ShadowGroup(group string) string {
	if group == "" {
		group = coreShadowGroup
	}
	return group + ShadowGroupSuffix
}

// IsShadowGroup reports whether group is a shadow group, and returns the original group.
func IsShadowGroup(group string) (original string, ok bool) {
	original, ok = strings.CutSuffix(group, ShadowGroupSuffix)
	if !ok || original == "" {
		return "", false
	}
	if original == coreShadowGroup {
		original = ""
	}
	return original, true
}

// SourceAnnotations returns the annotations that record a standalone identity on a hosted
// object: group, resource, namespace and name always (empty values included), and the
// generateName when src has one.
func SourceAnnotations(src contract.Identity) map[string]string {
	a := map[string]string{
		AnnotationStandaloneGroup:     src.Group,
		AnnotationStandaloneResource:  src.Resource,
		AnnotationStandaloneNamespace: src.Namespace,
		AnnotationStandaloneName:      src.Name,
	}
	if src.GenerateName != "" {
		a[AnnotationStandaloneGenerateName] = src.GenerateName
	}
	return a
}

// DescribeOwner says who wrote an object, from the value of its LabelOperator label, for a
// message that refuses the object as another's: "no operator label" (not written by
// topolayer) or "operator label <operator>".
func DescribeOwner(operator string) string {
	if operator == "" {
		return "no operator label"
	}
	return "operator label " + operator
}
