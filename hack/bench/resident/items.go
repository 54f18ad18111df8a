package main

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// metaItems returns the annotations of every item of a typed list.
func metaItems(list client.ObjectList) ([]map[string]string, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("list items: %w", err)
	}
	out := make([]map[string]string, 0, len(objs))
	for _, o := range objs {
		a, err := meta.Accessor(o)
		if err != nil {
			return nil, fmt.Errorf("list item: %w", err)
		}
		out = append(out, a.GetAnnotations())
	}
	return out, nil
}
