package main

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// leftBehind asks the live clusters which objects earlier runs placed for the operator
// (its operator label) that are members of a family its declarations or the configuration's
// supplement name by a name pattern, and returns those the plan leaves behind
// (plans.Plan.LeftBehind), in standalone form.
func leftBehind(ctx context.Context, e translate.Engine, plan *plans.Plan, configs map[string]*rest.Config) ([]contract.Identity, error) {
	if e.Operator == "" {
		return nil, nil
	}
	selector := labels.SelectorFromSet(labels.Set{namespaces.LabelOperator: e.Operator}).String()
	readers := map[string]gather.Reader{}
	listed := map[string]bool{}
	var placed []contract.Identity
	for _, d := range []*contract.OutputResources{e.Declared, e.Supplement} {
		if d == nil {
			continue
		}
		for _, c := range contract.Classes()[:3] {
			for _, f := range d.ForClass(c).ExactResources {
				if !contract.IsNamePattern(f.Name) {
					continue
				}
				// Where the family lands: where one of its members would.
				member := contract.Identity{Group: f.Group, Version: f.Version, Resource: f.Resource, Namespace: f.Namespace, Name: strings.ReplaceAll(f.Name, contract.NameWildcard, "0")}
				route := e.Router.Route(routing.Object{Class: c, Identity: member})
				if route.Disposition != routing.Apply || configs[route.Cluster] == nil {
					continue
				}
				target, err := e.Names.ToTarget(route.Cluster, member)
				if err != nil {
					return nil, fmt.Errorf("family %s: %w", f.Name, err)
				}
				key := route.Cluster + "/" + target.GroupVersionResource().String() + "/" + target.Namespace
				if listed[key] {
					continue
				}
				listed[key] = true
				r := readers[route.Cluster]
				if r == nil {
					if r, err = gather.NewAPIReader(route.Cluster, configs[route.Cluster]); err != nil {
						return nil, err
					}
					readers[route.Cluster] = r
				}
				objs, err := r.List(ctx, target.GroupVersionResource(), target.Namespace, selector)
				if err != nil {
					return nil, fmt.Errorf("list %s in %s on %s: %w", target.Resource, target.Namespace, route.Cluster, err)
				}
				for _, o := range objs {
					at := contract.Identity{Group: target.Group, Version: target.Version, Resource: target.Resource, Namespace: o.GetNamespace(), Name: o.GetName()}
					src, err := e.Names.ToSource(route.Cluster, at, o.GetAnnotations())
					if err != nil {
						continue // not one of the standalone objects the operator writes
					}
					placed = append(placed, src)
				}
			}
		}
	}
	return plan.LeftBehind(placed, e.Declared, e.Supplement), nil
}
