package check

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// checkManagement rejects an entry placed on the management cluster that the allow-list does
// not allow: its kind, then its fields and labels as they will be written. A patch has no
// object of its own: it is judged on what it makes of the object it patches, the plan's
// earlier entry (checkPatchEffects) or the live object at apply time (AdmitPatched).
func (e *Checker) checkManagement(w Write) {
	c := e.Containment
	if c == nil || w.Entry().Disposition != routing.Apply || w.Entry().Target.Cluster != routing.ClusterManagement {
		return
	}
	action := w.Mutation().Metadata.Action
	target := w.Entry().Target.Identity
	if slices.ContainsFunc(c.ReadOnly, func(r contract.Identity) bool { return r.Key() == target.Key() }) {
		w.Reject(policy.RuleReadOnly, fmt.Sprintf("%s: %s %s is the environment's own object, which the operator reads through an alias (namespaces.aliases) and may not write (%s)",
			w.Entry().Source, target.GroupResource(), target.Name, action))
		return
	}
	if action == contract.ActionDelete {
		return // removing what the operator wrote reaches nothing new
	}
	allow := e.Policy.Allowance()
	o := routing.Object{Class: w.Entry().Class, Identity: target}
	if w.Entry().Object != nil {
		o.Labels = w.Entry().Object.GetLabels()
	}
	if _, shadow := namespaces.IsShadowGroup(target.Group); !shadow &&
		!slices.ContainsFunc(c.Kinds, func(m routing.Match) bool { return m.Matches(o) }) &&
		!slices.ContainsFunc(allow.Kinds, func(m routing.Match) bool { return m.Matches(o) }) {
		w.Reject(policy.RuleManagementKind, fmt.Sprintf("%s: %s is not on the management cluster's allow-list (what an operand may place in the HCP namespace; see docs/security.md); the configuration can add it for this operator (policy.operators[].management.kinds)",
			w.Entry().Source, target.GroupResource()))
		return
	}
	switch {
	case action.IsStatus():
		return // a status write changes no field the allow-list reads
	case action == contract.ActionPatch:
		return // judged on what it makes
	case w.Entry().Object == nil:
		w.Reject(policy.RuleManagementFields, fmt.Sprintf("%s: a %s without an object cannot be checked against the allow-list's fields", w.Entry().Source, action))
		return
	}
	if rule, why := e.managementObject(target, w.Entry().Object, routingObject(w)); why != "" {
		w.Reject(rule, fmt.Sprintf("%s: %s", w.Entry().Source, why))
	}
}

// managementObject returns the rule that refuses obj, an object of an allowed kind as it will
// be on the management cluster at target, and why, naming the field; "" when its fields and
// labels may land. o is the object the configuration's guest identity matches (its standalone
// identity and class).
func (e *Checker) managementObject(target contract.Identity, obj *unstructured.Unstructured, o routing.Object) (rule, why string) {
	c, allow := e.Containment, e.Policy.Allowance()
	max := c.MaxReplicas
	if allow.MaxReplicas > 0 {
		max = allow.MaxReplicas
	}
	maxScratch := c.MaxScratch
	if allow.MaxScratch != nil {
		maxScratch = allow.MaxScratch.Value()
	}
	// The pod specs the checks below read, found once.
	sites, sitesErr := podspec.SitesOf(obj)
	if why := managementFields(obj, sites, sitesErr, target, max, e.ManagementAPI, o); why != "" {
		return policy.RuleManagementFields, why
	}
	if why := volumeSources(obj, sites, target, e.Policy != nil); why != "" {
		return policy.RuleManagementFields, why
	}
	if why := scratch(obj, sites, target, maxScratch); why != "" {
		return policy.RuleManagementFields, why
	}
	maxClaim := c.MaxClaim
	if allow.MaxClaim != nil {
		maxClaim = allow.MaxClaim.Value()
	}
	if why := claims(obj, target, maxClaim); why != "" {
		return policy.RuleManagementFields, why
	}
	if why := e.monitorFields(obj, target); why != "" {
		return policy.RuleManagementFields, why
	}
	if why := requests(obj, c); why != "" {
		return policy.RuleManagementFields, why
	}
	if why := reservedLabels(obj, sites, c, allow.Labels); why != "" {
		return policy.RuleReservedLabels, why + "; the configuration can let this operator set it (policy.operators[].management.labels)"
	}
	return "", ""
}

// managementFields returns why an allowed object may not land as it is: "" when it may.
// sites are obj's pod specs (podspec.SitesOf), err why they could not be found.
func managementFields(obj *unstructured.Unstructured, sites []podspec.Site, err error, target contract.Identity, maxReplicas int64, managementAPI func(routing.Object) bool, o routing.Object) string {
	u := obj.Object
	switch {
	case target.Group == "" && target.Resource == "services":
		typ, _, _ := unstructured.NestedString(u, "spec", "type")
		if typ != "" && typ != "ClusterIP" {
			return fmt.Sprintf("spec.type: %s reaches beyond the HCP namespace; only ClusterIP Services are allowed", typ)
		}
		if ips := listAt(u, "spec", "externalIPs"); len(ips) > 0 {
			return "spec.externalIPs: a Service may not claim external addresses"
		}
		if ip, _, _ := unstructured.NestedString(u, "spec", "clusterIP"); ip != "" && ip != "None" {
			return fmt.Sprintf("spec.clusterIP: %s fixes an address of the shared cluster; leave it to the API server (or None)", ip)
		}
		ports := listAt(u, "spec", "ports")
		for i, p := range ports {
			if m, ok := p.(map[string]any); ok && m["nodePort"] != nil {
				return fmt.Sprintf("spec.ports[%d].nodePort: a Service may not open a port on the management cluster's nodes", i)
			}
		}
	case target.Group == "" && target.Resource == "persistentvolumeclaims":
		if v, _, _ := unstructured.NestedString(u, "spec", "volumeName"); v != "" {
			return fmt.Sprintf("spec.volumeName: binds the named volume %s, which may be another tenant's", v)
		}
	}
	if err != nil {
		return err.Error()
	}
	for _, site := range sites {
		if !site.HasTemplate || len(site.Template) == 0 {
			continue // a Pod (or a pod spec outside a template) has no replicas beside it
		}
		for _, f := range []string{"replicas", "parallelism"} {
			at := site.Template[:len(site.Template)-1].Child(f)
			if n, ok := at.Get(u).(int64); ok && n > maxReplicas {
				return fmt.Sprintf("%s: %d is over the management cluster's bound of %d (policy.operators[].management.maxReplicas)", at, n, maxReplicas)
			}
		}
	}
	if len(sites) == 0 || managementAPI != nil && managementAPI(o) {
		return "" // no pods, or the configuration lets these pods reach the management API
	}
	for _, site := range sites {
		spec, _ := site.Spec.Get(u).(map[string]any)
		volumes := listAt(spec, "volumes")
		for i, v := range volumes {
			m, _ := v.(map[string]any)
			sources := listAt(m, "projected", "sources")
			for j, s := range sources {
				if sm, ok := s.(map[string]any); ok && sm["serviceAccountToken"] != nil {
					return fmt.Sprintf("%s.volumes[%d].projected.sources[%d].serviceAccountToken: a pod on the management cluster may not mount a management API token unless the configuration lists its workload (topology.hosted.guestIdentity.managementAPI)",
						site.Spec, i, j)
				}
			}
		}
	}
	return ""
}

// requests returns why obj asks the management cluster's own controllers to act for it (a
// key of c.RequestLabels or c.RequestAnnotations in its metadata), "" when it asks nothing.
func requests(obj *unstructured.Unstructured, c *policy.Containment) string {
	for _, m := range []struct {
		field string
		keys  []string
		has   map[string]string
	}{{"labels", c.RequestLabels, obj.GetLabels()}, {"annotations", c.RequestAnnotations, obj.GetAnnotations()}} {
		for _, k := range m.keys {
			if v, ok := m.has[k]; ok {
				return fmt.Sprintf("metadata.%s[%s]: %q asks the management cluster's own controllers to act for the object with the management cluster's CAs (the hypershift profile withholds it from what it places)", m.field, k, v)
			}
		}
	}
	return ""
}

// reservedLabels returns the first reserved label obj sets on itself or its pods (sites, its
// pod specs), as "" when none, skipping the topology's own and those allowed.
func reservedLabels(obj *unstructured.Unstructured, sites []podspec.Site, c *policy.Containment, allowed []policy.Label) string {
	check := func(at string, labels map[string]any) string {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v, _ := labels[k].(string)
			matches := func(l policy.Label) bool { return l.Matches(k, v) }
			if slices.ContainsFunc(allowed, matches) {
				continue
			}
			// A reserved value (app=kube-apiserver) is refused even where the topology sets
			// the key itself; a reserved key or prefix only where it does not.
			value := slices.ContainsFunc(c.Reserved, func(l policy.Label) bool { return l.Value != "" && matches(l) })
			key := slices.ContainsFunc(c.Reserved, func(l policy.Label) bool { return l.Value == "" && matches(l) })
			if !value && (!key || slices.ContainsFunc(c.Own, matches)) {
				continue
			}
			return fmt.Sprintf("%s[%s]: %s=%s is reserved: the environment's own Services, selectors and NetworkPolicies in the HCP namespace use it", at, k, k, v)
		}
		return ""
	}
	labels, _ := mappingAt(obj.Object, "metadata", "labels")
	if why := check("metadata.labels", labels); why != "" {
		return why
	}
	for _, site := range sites { // an object beyond the search's bounds is refused by managementFields
		meta, ok := site.Metadata()
		if !ok || len(site.Template) == 0 {
			continue // a Pod's labels are its own
		}
		labels, _ := meta.Child("labels").Get(obj.Object).(map[string]any)
		if why := check(meta.Child("labels").String(), labels); why != "" {
			return why
		}
	}
	return ""
}
