package gather

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// HostedControlPlaneGVR is HyperShift's HostedControlPlane, read by the projections.
var HostedControlPlaneGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedcontrolplanes"}

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

// Projections returns the configured projections (config.Gather.Projections; a hosted
// configuration that names none gets config.DefaultProjections).
func Projections(cfg *config.TopologyConfig) []Projection {
	out := make([]Projection, 0, len(cfg.Gather.Projections))
	for _, p := range cfg.Gather.Projections {
		out = append(out, Projection{
			Target: contract.Identity{Group: p.Group, Version: p.Version, Resource: p.Resource, Name: p.Name},
			Kind:   p.Kind,
			Field:  config.FieldPath(p.Field),
			From:   config.FieldPath(p.From),
		})
	}
	return out
}

// project applies the Projections (hosted only).
func (g *gatherer) project(ctx context.Context) error {
	if g.opts.Config.Topology.Type != config.Hosted {
		return nil
	}
	var hcp *unstructured.Unstructured
	read := false
	for _, p := range Projections(g.opts.Config) {
		if !g.declared(p.Target) {
			continue
		}
		if _, ok := g.seen[p.Target.Key()]; ok {
			continue
		}
		if !read {
			h := g.opts.Config.Topology.Hosted
			var err error
			hcp, err = g.readers[routing.ClusterManagement].Get(ctx, contract.Identity{
				Group: HostedControlPlaneGVR.Group, Version: HostedControlPlaneGVR.Version, Resource: HostedControlPlaneGVR.Resource,
				Namespace: h.Namespace, Name: h.HostedControlPlane,
			})
			if err != nil {
				return err
			}
			read = true
			if hcp == nil {
				g.res.Warnings = append(g.res.Warnings, fmt.Sprintf("HostedControlPlane %s/%s not found: no projection", h.Namespace, h.HostedControlPlane))
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
