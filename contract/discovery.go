package contract

import (
	"embed"
	"fmt"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Discovery file names at the top of an input directory.
const (
	DiscoveryCoreFile   = "aggregated-discovery-api.yaml"
	DiscoveryGroupsFile = "aggregated-discovery-apis.yaml"
)

// DiscoveredResource is what discovery says of one resource.
type DiscoveredResource struct {
	// Kind is the kind of the objects the resource holds.
	Kind string
	// Namespaced is true for namespaced resources.
	Namespaced bool
}

// Discovery maps resources to kinds and scopes, from aggregated discovery documents
// (apidiscovery.k8s.io/v2 APIGroupDiscoveryList). It is read-only after construction.
type Discovery struct {
	byGVR  map[schema.GroupVersionResource]DiscoveredResource
	byGVK  map[schema.GroupVersionKind]string
	groups map[schema.GroupResource]bool   // namespaced, whatever the version
	kinds  map[schema.GroupKind]string     // resource, whatever the version
	byGR   map[schema.GroupResource]string // kind, whatever the version
	// versions is the first version that serves each resource, in the documents' order:
	// aggregated discovery lists a group's versions from the preferred one down.
	versions map[schema.GroupResource]string
}

// ParseDiscovery decodes one or more APIGroupDiscoveryList documents into a Discovery. Later
// documents add to earlier ones. A version or a resource without a name is an error naming
// the document and its place.
func ParseDiscovery(docs ...[]byte) (*Discovery, error) {
	d := &Discovery{
		byGVR:  map[schema.GroupVersionResource]DiscoveredResource{},
		byGVK:  map[schema.GroupVersionKind]string{},
		groups: map[schema.GroupResource]bool{},
		kinds:  map[schema.GroupKind]string{},
		byGR:   map[schema.GroupResource]string{},

		versions: map[schema.GroupResource]string{},
	}
	for i, doc := range docs {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := yaml.Unmarshal(doc, &list); err != nil {
			return nil, fmt.Errorf("discovery document %d: %w", i, err)
		}
		for gi, g := range list.Items {
			for vi, v := range g.Versions {
				if v.Version == "" {
					return nil, fmt.Errorf("discovery document %d: items[%d] (group %q): versions[%d].version: empty", i, gi, g.Name, vi)
				}
				for ri, r := range v.Resources {
					if r.Resource == "" {
						return nil, fmt.Errorf("discovery document %d: items[%d] (group %q): versions[%d] (%s): resources[%d].resource: empty", i, gi, g.Name, vi, v.Version, ri)
					}
					gvr := schema.GroupVersionResource{Group: g.Name, Version: v.Version, Resource: r.Resource}
					kind := ""
					if r.ResponseKind != nil {
						kind = r.ResponseKind.Kind
					}
					namespaced := r.Scope == apidiscoveryv2.ScopeNamespace
					d.byGVR[gvr] = DiscoveredResource{Kind: kind, Namespaced: namespaced}
					if kind != "" {
						d.byGVK[gvr.GroupVersion().WithKind(kind)] = r.Resource
						d.kinds[schema.GroupKind{Group: g.Name, Kind: kind}] = r.Resource
						d.byGR[gvr.GroupResource()] = kind
					}
					d.groups[gvr.GroupResource()] = namespaced
					if _, ok := d.versions[gvr.GroupResource()]; !ok {
						d.versions[gvr.GroupResource()] = v.Version
					}
				}
			}
		}
	}
	return d, nil
}

// KindFor returns the kind held by a resource, when discovery knows it.
func (d *Discovery) KindFor(gvr schema.GroupVersionResource) (string, bool) {
	if d == nil {
		return "", false
	}
	r, ok := d.byGVR[gvr]
	return r.Kind, ok && r.Kind != ""
}

// ResourceFor returns the plural resource of a kind, when discovery knows it.
func (d *Discovery) ResourceFor(gvk schema.GroupVersionKind) (string, bool) {
	if d == nil {
		return "", false
	}
	r, ok := d.byGVK[gvk]
	return r, ok
}

// KindForResource returns the kind of a resource in any version, when discovery knows it.
func (d *Discovery) KindForResource(gr schema.GroupResource) (string, bool) {
	if d == nil {
		return "", false
	}
	k, ok := d.byGR[gr]
	return k, ok
}

// GroupForKind returns the one group that has a kind, for references that name a kind without
// an apiVersion (an Event's involvedObject); ok is false when no group or several have it.
func (d *Discovery) GroupForKind(kind string) (string, bool) {
	if d == nil {
		return "", false
	}
	group, n := "", 0
	for gk := range d.kinds {
		if gk.Kind == kind {
			group, n = gk.Group, n+1
		}
	}
	return group, n == 1
}

// ResourceForKind returns the plural resource of a kind in any version, when discovery knows it.
func (d *Discovery) ResourceForKind(gk schema.GroupKind) (string, bool) {
	if d == nil {
		return "", false
	}
	r, ok := d.kinds[gk]
	return r, ok
}

// Namespaced says whether a resource is namespaced, in any version; known is false when
// discovery has never heard of it.
func (d *Discovery) Namespaced(gr schema.GroupResource) (namespaced, known bool) {
	if d == nil {
		return false, false
	}
	namespaced, known = d.groups[gr]
	return namespaced, known
}

// PreferredVersion returns the version a resource is served in first (the group's preferred
// version, as aggregated discovery lists them), when discovery knows the resource: what a
// request that names only the group and resource (an error message's "secrets",
// "deployments.apps") is taken to mean.
func (d *Discovery) PreferredVersion(gr schema.GroupResource) (string, bool) {
	if d == nil {
		return "", false
	}
	v, ok := d.versions[gr]
	return v, ok
}

// Len returns the number of group-version-resources discovery knows.
func (d *Discovery) Len() int {
	if d == nil {
		return 0
	}
	return len(d.byGVR)
}

//go:embed defaultdiscovery/*.yaml
var defaultDiscoveryFS embed.FS

// DefaultDiscovery returns the discovery used when an input directory carries none: the
// Kubernetes built-in APIs and the openshift/api CRDs, as a kube-apiserver of the version in
// go.mod serves them (regenerate with `make default-discovery`). It is parsed once and shared:
// callers do not change it.
func DefaultDiscovery() *Discovery { return defaultDiscovery() }

// defaultDiscovery parses the embedded discovery once.
var defaultDiscovery = sync.OnceValue(func() *Discovery {
	core, err1 := defaultDiscoveryFS.ReadFile("defaultdiscovery/" + DiscoveryCoreFile)
	groups, err2 := defaultDiscoveryFS.ReadFile("defaultdiscovery/" + DiscoveryGroupsFile)
	if err1 != nil || err2 != nil {
		panic(fmt.Sprintf("topolayer bug: embedded default discovery missing: %v %v", err1, err2))
	}
	d, err := ParseDiscovery(core, groups)
	if err != nil {
		panic(fmt.Sprintf("topolayer bug: embedded default discovery does not parse: %v", err))
	}
	return d
})
