package check

import (
	"fmt"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/transform"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/routing"
)

// checkIdentityFields rejects an applied entry whose identity fields a transform changed
// (RuleIdentityFields), and one that lands on the management cluster with ownerReferences
// (RuleOwnerReferences). It runs with the policy, on the final object and its changes.
func (e *Checker) checkIdentityFields(w Write) {
	if e.Policy == nil || w.Entry().Disposition != routing.Apply {
		return
	}
	for _, c := range w.Entry().Changes {
		if c.Kind != plans.ChangeTransformed {
			continue
		}
		f := transform.IdentityField(c.Path)
		if f == "" {
			continue
		}
		if f == "/metadata/ownerReferences" && c.To == nil && e.RemovesOwnerReferences != nil && e.RemovesOwnerReferences(c.By) {
			continue
		}
		w.Reject(policy.RuleIdentityFields, fmt.Sprintf("%s: %s: transform %s changes it (%s), and the plan states the target from the identity the engine gave the object: a transform may not change what or whose an object is",
			w.Entry().Source, transform.Dotted(f), c.By, transform.Dotted(c.Path)))
		return
	}
	if o := w.Entry().Object; o != nil && w.Entry().Target.Cluster == routing.ClusterManagement {
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "ownerReferences"); !found {
			return
		}
		w.Reject(policy.RuleOwnerReferences, fmt.Sprintf("%s: metadata.ownerReferences: the operator's owners would land on the shared management cluster (the hypershift profile's drop-owner-references strips them)", w.Entry().Source))
	}
}
