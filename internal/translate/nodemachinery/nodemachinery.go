package nodemachinery

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
)

// Rule drops, in the hosted topology, the machinery of static-pod operators
// that only has a meaning on a standalone cluster's own nodes, as library-go's static-pod
// controllers write it:
//   - bare Pods bound to a node (spec.nodeName: installer, revision-pruner and guard pods);
//   - the PodDisruptionBudget of guard pods (the guard controller's "<prefix>-guard-pdb",
//     selecting app: guard);
//   - static-pod revisions (library-go's revision controller): the "revision-status-N"
//     ConfigMap, whose data.revision is N or which carries the
//     operator.openshift.io/revision-ready annotation, and the per-revision copies
//     "<name>-N" of ConfigMaps and Secrets, owned by the ConfigMap "revision-status-N";
//   - the identities of installer and guard pods (the backing-resource and guard
//     controllers' manifests): the ServiceAccount "installer-sa", the ClusterRoleBinding
//     "system:openshift:operator:<namespace>-installer" that grants it cluster-admin, and the
//     ServiceAccount "guard-sa" labelled app: guard.
//
// A hosted control plane runs its components as Deployments in the HCP namespace; there are
// no control-plane nodes to install static pods on, and no installer to read a revision.
// Other names that end in a number are not revisions and are placed as usual.
const Rule = "hosted/drop-standalone-node"

// Names and keys of library-go's static-pod revision controller.
const (
	revisionStatusPrefix     = "revision-status-"
	annotationRevisionReady  = "operator.openshift.io/revision-ready"
	guardPDBSuffix           = "-guard-pdb"
	guardPodLabel, guardPods = "app", "guard"
	installerSA, guardSA     = "installer-sa", "guard-sa"
	installerBindingPrefix   = "system:openshift:operator:"
	installerBindingSuffix   = "-installer"
)

// Object is what the rule reads of a mutation: its entry (the standalone identity), the
// mutation (its action), the object as the operator wrote it and as a YAML tree.
type Object interface {
	Entry() *plans.Entry
	Mutation() *contract.Mutation
	Source() *unstructured.Unstructured
	Tree() *yaml.RNode
}

// Why says why the object of w is standalone-node machinery, or "".
func Why(w Object) string {
	src := w.Entry().Source
	if w.Source() == nil {
		// The prune controller deletes old revisions by their status ConfigMap (the copies
		// it owns go with it).
		if n, ok := revisionStatus(src); ok && w.Mutation().Metadata.Action == contract.ActionDelete {
			return "the deletion of static-pod revision " + n + ", which a hosted control plane never had"
		}
		return ""
	}
	switch {
	case src.Group == "" && src.Resource == "pods":
		if node, ok := yamlnode.StringAt(w.Tree(), "spec", "nodeName"); ok && node != "" {
			return "a Pod bound to node " + node + " of the standalone cluster (installer, pruner or guard pod); a hosted control plane has no such node"
		}
	case src.Group == "policy" && src.Resource == "poddisruptionbudgets" && strings.HasSuffix(src.Name, guardPDBSuffix):
		if app, _ := yamlnode.StringAt(w.Tree(), "spec", "selector", "matchLabels", guardPodLabel); app == guardPods {
			return "the PodDisruptionBudget of static-pod guard pods, which a hosted control plane does not run"
		}
	case src.Group == "" && src.Resource == "configmaps" && strings.HasPrefix(src.Name, revisionStatusPrefix):
		n, ok := revisionStatus(src)
		if !ok {
			return ""
		}
		data, _ := yamlnode.StringAt(w.Tree(), "data", "revision")
		if _, ready := w.Tree().GetAnnotations()[annotationRevisionReady]; data == n || ready {
			return "static-pod revision " + n + " (the revision controller's status ConfigMap); a hosted control plane has no installer to read it"
		}
	case src.Group == "" && src.Resource == "serviceaccounts" && src.Name == installerSA:
		return "the ServiceAccount of static-pod installer and pruner pods, which a hosted control plane does not run"
	case src.Group == "" && src.Resource == "serviceaccounts" && src.Name == guardSA && w.Tree().GetLabels()[guardPodLabel] == guardPods:
		return "the ServiceAccount of static-pod guard pods, which a hosted control plane does not run"
	case src.Group == policy.GroupRBAC && src.Resource == "clusterrolebindings" && installerBinding(w.Tree(), src.Name):
		return "the cluster-admin binding of static-pod installer pods, which a hosted control plane does not run"
	case src.Group == "" && (src.Resource == "configmaps" || src.Resource == "secrets"):
		if n, ok := revisionCopy(w.Source().Object, src.Name); ok {
			return "a copy of " + strings.TrimSuffix(src.Name, "-"+n) + " for static-pod revision " + n + " (owned by " + revisionStatusPrefix + n + "); a hosted control plane has no installer to read it"
		}
	}
	return ""
}

// installerBinding says whether obj, the ClusterRoleBinding name, is the backing-resource
// controller's: "system:openshift:operator:<ns>-installer", binding cluster-admin to the
// ServiceAccount installer-sa of <ns>.
func installerBinding(obj *yaml.RNode, name string) bool {
	ns, ok := strings.CutPrefix(name, installerBindingPrefix)
	if !ok {
		return false
	}
	if ns, ok = strings.CutSuffix(ns, installerBindingSuffix); !ok || ns == "" {
		return false
	}
	if kind, _ := yamlnode.StringAt(obj, "roleRef", "kind"); kind != "ClusterRole" {
		return false
	}
	if role, _ := yamlnode.StringAt(obj, "roleRef", "name"); role != "cluster-admin" {
		return false
	}
	subjects, err := yamlnode.Lookup(obj, "subjects")
	if err != nil || subjects == nil {
		return false
	}
	els, _ := subjects.Elements()
	for _, sub := range els {
		if yamlnode.FieldString(sub, "kind") != "ServiceAccount" || yamlnode.FieldString(sub, "name") != installerSA || yamlnode.FieldString(sub, "namespace") != ns {
			return false
		}
	}
	return len(els) > 0
}

// revisionStatus says whether src is named like the revision controller's status ConfigMap
// ("revision-status-N"), and returns N.
func revisionStatus(src contract.Identity) (string, bool) {
	if src.Group != "" || src.Resource != "configmaps" || !strings.HasPrefix(src.Name, revisionStatusPrefix) {
		return "", false
	}
	n := strings.TrimPrefix(src.Name, revisionStatusPrefix)
	if _, err := strconv.ParseUint(n, 10, 31); err != nil {
		return "", false
	}
	return n, true
}

// revisionCopy says whether obj, named name, is a per-revision copy the revision controller
// made: name is "<name>-N" and a ConfigMap "revision-status-N" owns it. It returns N.
func revisionCopy(obj map[string]any, name string) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", false
	}
	n := name[i+1:]
	if _, err := strconv.ParseUint(n, 10, 31); err != nil {
		return "", false
	}
	v, _, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "ownerReferences")
	refs, _ := v.([]any)
	for _, ref := range refs {
		r, _ := ref.(map[string]any)
		if r["apiVersion"] == "v1" && r["kind"] == "ConfigMap" && r["name"] == revisionStatusPrefix+n {
			return n, true
		}
	}
	return "", false
}
