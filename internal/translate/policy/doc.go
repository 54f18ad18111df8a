// Package policy holds what the configuration says an operator's outputs may grant, install
// and reach, and the names of the rules that refuse what goes beyond it: a Policy per
// operator (privileged objects, an RBAC ceiling, the Pod Security mode, widenings of the
// management cluster's allow-list) and the Containment of the shared management cluster.
// The engine (package translate) enforces them on the objects as they will be written; the
// applier (package apply) on the clusters as they will be.
//
//	p := &policy.Policy{PodSecurity: policy.PodSecurityReject}
//	if p.PodSecurityMode() == policy.PodSecurityReject { /* no stripping transform runs */ }
//	policy.IsPrivileged(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}) // true
package policy
