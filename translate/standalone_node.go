package translate

import (
	"strings"

	"github.com/topolayer/topolayer/routing"
)

// RuleDropStandaloneNode drops, in the hosted topology, the machinery of static-pod operators
// that only has a meaning on a standalone cluster's own nodes: bare Pods bound to a node
// (spec.nodeName: installer, revision-pruner and guard pods) and the PodDisruptionBudgets of
// guard pods. A hosted control plane runs its components as Deployments in the HCP
// namespace; there are no control-plane nodes to install static pods on.
const RuleDropStandaloneNode = "hosted/drop-standalone-node"

// standaloneNodeMachinery says why the object of w is standalone-node machinery, or "".
func standaloneNodeMachinery(w *work) string {
	src := w.entry.Source
	switch {
	case src.Group == "" && src.Resource == "pods" && w.obj != nil:
		if node, ok := fieldOf(w.obj, "spec", "nodeName"); ok && node != "" {
			return "a Pod bound to node " + node + " of the standalone cluster (installer, pruner or guard pod); a hosted control plane has no such node"
		}
	case src.Group == "policy" && src.Resource == "poddisruptionbudgets" && strings.HasSuffix(src.Name, "-guard-pdb"):
		return "the PodDisruptionBudget of static-pod guard pods, which a hosted control plane does not run"
	}
	return ""
}

// dropStandaloneNode drops w when the engine places it on the management cluster of a
// hosted control plane and it is standalone-node machinery.
func (e Engine) dropStandaloneNode(w *work) bool {
	if e.HCPNamespace == "" || w.entry.Target.Cluster != routing.ClusterManagement || w.entry.Disposition != routing.Apply {
		return false
	}
	why := standaloneNodeMachinery(w)
	if why == "" {
		return false
	}
	w.entry.Disposition, w.entry.Rule, w.entry.Reason = routing.Dropped, RuleDropStandaloneNode, why
	w.entry.Target = Target{}
	return true
}
