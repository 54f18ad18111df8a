package gather

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
)

// Projection fills one field of a config singleton from a field of the HostedControlPlane,
// when the operator declares the singleton as an exact input and the guest has none.
type Projection struct {
	// Target is the standalone object filled (its version gives the apiVersion written).
	Target contract.Identity
	// Kind is the Target's kind.
	Kind string
	// Field is the path filled in the Target, e.g. ["spec"].
	Field []string
	// From is the path read in the HostedControlPlane.
	From []string
}

// project applies the Projections (hosted only).
func (g *gatherer) project(ctx context.Context) error {
	projections := g.opts.Placement.Projections()
	hcpID, ok := g.opts.Placement.HostedControlPlane()
	if len(projections) == 0 || !ok {
		return nil
	}
	var hcp *unstructured.Unstructured
	read := false
	for _, p := range projections {
		if !g.declared(p.Target) {
			continue
		}
		if _, ok := g.seen[p.Target.Key()]; ok {
			continue
		}
		if !read {
			var err error
			if hcp, err = g.readers[g.opts.Placement.Home()].Get(ctx, hcpID); err != nil {
				return err
			}
			read = true
			if hcp == nil {
				g.res.Warnings = append(g.res.Warnings, fmt.Sprintf("HostedControlPlane %s/%s not found: no projection", hcpID.Namespace, hcpID.Name))
			}
		}
		if hcp == nil {
			return nil
		}
		v, ok, err := unstructured.NestedFieldNoCopy(hcp.Object, p.From...)
		if err != nil || !ok {
			continue
		}
		obj, err := ProjectValue(p, v)
		if err != nil {
			return err
		}
		g.add("", &contract.InputObject{Group: p.Target.Group, Resource: p.Target.Resource, Namespace: p.Target.Namespace, Object: obj})
		g.res.Projected = append(g.res.Projected, p.Target)
		g.res.Skipped = removeID(g.res.Skipped, p.Target)
	}
	return nil
}

// ProjectValue builds the projected object of p holding v at p.Field.
func ProjectValue(p Projection, v any) (*unstructured.Unstructured, error) {
	md := map[string]any{"name": p.Target.Name}
	if p.Target.Namespace != "" {
		md["namespace"] = p.Target.Namespace
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": schema.GroupVersion{Group: p.Target.Group, Version: p.Target.Version}.String(),
		"kind":       p.Kind,
		"metadata":   md,
	}}
	if err := unstructured.SetNestedField(obj.Object, runtime.DeepCopyJSONValue(v), p.Field...); err != nil {
		return nil, fmt.Errorf("projection to %s: %w", p.Target, err)
	}
	return obj, nil
}

// declared reports whether id is an exact applyConfigurationResources input.
func (g *gatherer) declared(id contract.Identity) bool {
	for _, e := range g.opts.Inputs.ApplyConfigurationResources.ExactResources {
		if exactID(e).Key() == id.Key() {
			return true
		}
	}
	return false
}

func removeID(ids []contract.Identity, id contract.Identity) []contract.Identity {
	out := ids[:0]
	for _, x := range ids {
		if x.Key() != id.Key() {
			out = append(out, x)
		}
	}
	return out
}
