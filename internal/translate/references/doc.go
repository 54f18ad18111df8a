// Package references is the reference table of the translation (kustomize's name
// references: volumes, env sources, RBAC subjects and roles, ...) and the filter that
// renames the references it lists in an object, through a Renamer that answers where each
// referenced object lands.
//
//	renames := references.RenameMap{
//		{Kind: "ConfigMap", Namespace: "ns", Name: "config"}: {Namespace: "hcp", Name: "ns-config"},
//	}
//	changed, dangling, err := references.RewriteReferences(deployment, renames)
package references
