package apply

import (
	"fmt"
	"strings"

	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/yaml"
)

// writeOptions is what topolayer reads of a mutation's options file (CreateOptions,
// UpdateOptions, PatchOptions or ApplyOptions as the operator wrote them).
type writeOptions struct {
	// FieldManager overrides the metadata's field manager.
	FieldManager string `json:"fieldManager"`
	// Force makes a server-side apply take over conflicting fields.
	Force bool `json:"force"`
}

// decodeOptions reads an options file; nil or empty bytes are the zero options. Unknown
// keys (dryRun, fieldValidation, ...) are ignored: topolayer decides those.
func decodeOptions(data []byte) (writeOptions, error) {
	var o writeOptions
	if len(data) == 0 {
		return o, nil
	}
	if err := yaml.Unmarshal(data, &o); err != nil {
		return writeOptions{}, fmt.Errorf("decode the options: %w", err)
	}
	return o, nil
}

// ServiceAccountUser returns the user name of a service account given as NAMESPACE/NAME,
// for Options.Impersonate: system:serviceaccount:NAMESPACE:NAME (serviceaccount.MakeUsername).
func ServiceAccountUser(namespacedName string) (string, error) {
	ns, name, ok := strings.Cut(namespacedName, "/")
	if !ok || ns == "" || name == "" || strings.ContainsAny(name, "/:") || strings.Contains(ns, ":") {
		return "", fmt.Errorf("service account %q: must be NAMESPACE/NAME", namespacedName)
	}
	return serviceaccount.MakeUsername(ns, name), nil
}
