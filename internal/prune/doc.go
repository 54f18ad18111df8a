// Package prune cuts a must-gather down to the input directory an operator reads, as the
// multi-operator-manager's pruner does (`multi-operator-manager create-input-resources
// from-must-gather`), byte for byte.
//
// Prune reads the applyConfigurationResources of an input-resources document from a
// contract.InputDir the way the upstream pruner reads them through the contract's fake API
// server:
//
//   - exactResources: the named object; a missing one is skipped;
//   - labelSelectedResources: every object of the resource, in one namespace or all, whose
//     labels match, in the order the directory holds them (list files win over per-object
//     files, as for a LIST);
//   - resourceReferences: the referring object and, for ImplicitNamespacedReference, every
//     object its nameJSONPath names in the reference's namespace (filters with && select
//     among list entries); a missing referring object skips the reference, missing targets
//     are skipped; other reference types keep only the referring object;
//   - generatedNameResources are not read.
//
// Each object is kept once (by group, resource, namespace and name), in the order it was
// first found, with every field it had: managedFields, resourceVersion, status, and no
// sorting. The result is one List per kind and namespace, written in list form as
// `cluster-scoped-resources/<group>/<resource>.yaml` or
// `namespaces/<ns>/<group>/<resource>.yaml` (group `core` for the empty group): apiVersion,
// items and kind `<Kind>List`, no metadata, as sigs.k8s.io/yaml writes them. One kind found in
// two versions cannot be written and is an error.
//
// What the package does not do: it does not read live clusters (package gather does, and
// normalizes what it reads) and it does not decide where a topology keeps an object.
//
//	in, err := contract.ReadInputDir("must-gather", contract.ReadOptions{})
//	declared, err := contract.ParseInputResources(data)
//	lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
//	err = prune.Write("input-dir", lists)
//
// Known differences from upstream, all outside what its tests exercise: a nameJSONPath that
// reaches a missing field names nothing (upstream fails the whole run), non-string values it
// yields are ignored (upstream formats them with %v), and a list file item's kind is its own
// (upstream answers a GET with the list's kind less "List"), a label selector on namespaces is
// applied (upstream's fake server ignores it there), and integers beyond 2^53 lose precision
// (the objects are decoded as JSON numbers, float64). The must-gather is read whole
// with contract.ReadInputDir, whose rules are strict: a file out of place is an error.
package prune
