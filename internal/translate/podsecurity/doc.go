// Package podsecurity holds the Kubernetes Pod Security "restricted" rules the engine shares
// between the strip and the check: the edits that bring a pod template to restricted (Edits,
// run by the hypershift profile as named transforms through Filter, and HostPathToEmptyDir),
// and the check of a template as it will be written (Reason, with the pod-security-admission
// library's own evaluator).
//
//	for _, e := range podsecurity.Edits() {
//		f := podsecurity.Filter{PodTemplatePath: []string{"spec", "template"}, Edit: e.Edit}
//		objs, _ = f.Filter(objs)
//	}
//	site, _ := podspec.Known(schema.GroupKind{Group: "apps", Kind: "Deployment"})
//	if reason := podsecurity.Reason(deployment.Object, site); reason != "" {
//		// refused: the template is not restricted
//	}
package podsecurity
