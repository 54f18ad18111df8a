package translate

import (
	"fmt"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/transform"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/routing"
)

// removesOwnerReferences reports whether the transform named by may remove ownerReferences
// (Transform.RemovesOwnerReferences).
func (e Engine) removesOwnerReferences(by string) bool {
	for _, s := range e.Stages {
		if t, ok := s.(TransformStage); ok && t.Transform.Name == by {
			return t.Transform.RemovesOwnerReferences
		}
	}
	return false
}

// checkIdentityFields rejects an applied entry whose identity fields a transform changed
// (RuleIdentityFields), and one that lands on the management cluster with ownerReferences
// (RuleOwnerReferences). It runs with the policy, on the final object and its changes.
func (e Engine) checkIdentityFields(w *work) {
	if e.Policy == nil || w.entry.Disposition != routing.Apply {
		return
	}
	for _, c := range w.entry.Changes {
		if c.Kind != plans.ChangeTransformed {
			continue
		}
		f := transform.IdentityField(c.Path)
		if f == "" {
			continue
		}
		if f == "/metadata/ownerReferences" && c.To == nil && e.removesOwnerReferences(c.By) {
			continue
		}
		w.reject(policy.RuleIdentityFields, fmt.Sprintf("%s: %s: transform %s changes it (%s), and the plan states the target from the identity the engine gave the object: a transform may not change what or whose an object is",
			w.entry.Source, transform.Dotted(f), c.By, transform.Dotted(c.Path)))
		return
	}
	if o := w.entry.Object; o != nil && w.entry.Target.Cluster == routing.ClusterManagement {
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "ownerReferences"); !found {
			return
		}
		w.reject(policy.RuleOwnerReferences, fmt.Sprintf("%s: metadata.ownerReferences: the operator's owners would land on the shared management cluster (the hypershift profile's drop-owner-references strips them)", w.entry.Source))
	}
}
