package translate

import (
	"fmt"

	"github.com/topolayer/topolayer/internal/translate/transform"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/routing"
)

// Rule names of the checks on the fields that say what and whose an object is.
const (
	// RuleIdentityFields rejects objects whose apiVersion, kind, metadata.name,
	// metadata.namespace, metadata.generateName or metadata.ownerReferences a transform
	// changed: the plan states the target from the identity the engine gave the object, so a
	// transform that changes it would write somewhere the plan does not say. The profile's
	// own drop-owner-references is the one transform that may remove ownerReferences.
	RuleIdentityFields = "policy/identity-fields"
	// RuleOwnerReferences rejects an object that would land on the shared management cluster
	// with ownerReferences: the operator's owners are its standalone objects, not the
	// management cluster's, and an owner there ties the object's lifetime to it (or, with
	// blockOwnerDeletion, the owner's to the object). The hypershift profile strips them
	// (drop-owner-references); without the profile they are refused. The management target
	// adds the HostedControlPlane's own at apply time.
	RuleOwnerReferences = "policy/owner-references"
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
		if c.Kind != ChangeTransformed {
			continue
		}
		f := transform.IdentityField(c.Path)
		if f == "" {
			continue
		}
		if f == "/metadata/ownerReferences" && c.To == nil && e.removesOwnerReferences(c.By) {
			continue
		}
		w.reject(RuleIdentityFields, fmt.Sprintf("%s: %s: transform %s changes it (%s), and the plan states the target from the identity the engine gave the object: a transform may not change what or whose an object is",
			w.entry.Source, transform.Dotted(f), c.By, transform.Dotted(c.Path)))
		return
	}
	if o := w.entry.Object; o != nil && w.entry.Target.Cluster == routing.ClusterManagement {
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "ownerReferences"); !found {
			return
		}
		w.reject(RuleOwnerReferences, fmt.Sprintf("%s: metadata.ownerReferences: the operator's owners would land on the shared management cluster (the hypershift profile's drop-owner-references strips them)", w.entry.Source))
	}
}
