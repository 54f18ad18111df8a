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
func StripServerFields(obj map[string]any) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, f := range serverSetFields {
		delete(md, f)
	}
}
