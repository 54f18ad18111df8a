package contract

import "slices"

// serverSetFields are the metadata fields the API server sets on every write: they record
// who wrote an object and when, not what it holds.
var serverSetFields = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}

// ServerSetFields returns the names of the metadata fields the API server sets on every
// write (uid, resourceVersion, generation, creationTimestamp, managedFields, selfLink): the
// one list gather, apply and the diffs leave out.
func ServerSetFields() []string { return slices.Clone(serverSetFields) }

// StripServerFields removes the server-set metadata fields (ServerSetFields) from an object
// held as a map, such as unstructured.Unstructured's Object. It leaves deletionTimestamp and
// the rest of the metadata alone.
func StripServerFields(obj map[string]any) { deleteMetadata(obj, serverSetFields) }

// inputDropFields are the server-set fields an input directory does not keep (see
// StripInputServerFields).
var inputDropFields = []string{"uid", "managedFields", "selfLink"}

// StripInputServerFields removes the server-set metadata fields an operator's input
// directory does not keep: uid (it names an object on the cluster it was read from, and
// topolayer may place what the operator writes from it on another), managedFields and
// selfLink. resourceVersion, generation and creationTimestamp stay, as a must-gather keeps
// them: operators hash the resourceVersions of what their pods mount to roll them when it
// changes, and compare generation with status.observedGeneration.
func StripInputServerFields(obj map[string]any) { deleteMetadata(obj, inputDropFields) }

// deleteMetadata removes fields from the metadata of obj, when it has metadata.
func deleteMetadata(obj map[string]any, fields []string) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, f := range fields {
		delete(md, f)
	}
}
