package check

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Write is one planned write as the checks read it: the engine's entry on its way to the
// plan. A check reads it and refuses it (Reject); only the token step changes its object
// (Edit).
type Write interface {
	// Entry is the plan entry: source and target, class, disposition, the changes so far
	// and, once rewritten, the final object.
	Entry() *plans.Entry
	// Mutation is the mutation as the operator recorded it: its action, patch type and body.
	Mutation() *contract.Mutation
	// Source is the object as the operator wrote it; nil for patches and deletes.
	Source() *unstructured.Unstructured
	// Tree is Source as a YAML tree, the operator's: never changed.
	Tree() *yaml.RNode
	// Final is the object as it will be written, as a YAML tree; nil when there is none.
	Final() *yaml.RNode
	// Edit returns Final to change in place, a copy of the operator's object when the entry
	// wrote it unchanged; the caller records its changes in Entry().Changes.
	Edit() *yaml.RNode
	// Reject refuses the write: the rule that refuses it and why.
	Reject(rule, reason string)
}

// Checker runs the policy's checks on the writes of one operator's plan. Its fields are
// what the engine knows of the operator and the topology; the engine makes one per plan.
type Checker struct {
	// Operator names the operator whose writes are checked.
	Operator string
	// Policy bounds what the operator may grant, install or reach; nil checks nothing but
	// the duplicate writes and the service-account tokens.
	Policy *policy.Policy
	// Containment is the management cluster's allow-list; nil checks nothing more.
	Containment *policy.Containment
	// Declared and Supplement are the operator's output-resources and the configuration's
	// supplement to them (nil: none).
	Declared, Supplement *contract.OutputResources
	// Names maps standalone identities to target identities.
	Names namespaces.Mapper
	// Discovery maps kinds to resources.
	Discovery *contract.Discovery
	// ManagementAPI reports whether the configuration lets the pods of an object reach the
	// management API server (a projected token); nil lets none.
	ManagementAPI func(routing.Object) bool
	// RemovesOwnerReferences reports whether the transform of that name may remove
	// ownerReferences (transform.Transform.RemovesOwnerReferences); nil: none may.
	RemovesOwnerReferences func(transform string) bool
}

// routingObject is the write as routing matches it: its class, standalone identity and the
// labels the operator gave it.
func routingObject(w Write) routing.Object {
	o := routing.Object{Class: w.Entry().Class, Identity: w.Entry().Source}
	if src := w.Source(); src != nil {
		o.Labels = src.GetLabels()
	}
	return o
}

// targetKey names an object on a cluster regardless of version.
type targetKey struct {
	cluster string
	key     contract.Key
}

// declaresAccount reports whether the operator's output-resources, or the configuration's
// supplement, declare the service account sa.
func (e *Checker) declaresAccount(sa contract.Identity) bool {
	return len(e.Declared.ClassesOf(sa)) > 0 || len(e.Supplement.ClassesOf(sa)) > 0
}

// Object runs the checks that read one write's final object, in order: the identity fields
// a transform changed, the volume data sources, privileged objects, the management
// cluster's allow-list and Pod Security. The first refusal stands.
func (e *Checker) Object(w Write) {
	e.checkIdentityFields(w)
	e.checkVolumeDataSources(w)
	e.checkPrivileged(w)
	e.checkManagement(w)
	e.checkPodSecurity(w)
}

// Plan runs the checks that read the whole plan, once every write's object is checked:
// what a patch makes of the object the plan writes before it, the RBAC containment (roles
// are the roles the plan writes, WrittenRoles) and the RBAC ceiling.
func (e *Checker) Plan(writes []Write, written map[contract.Key]bool, roles map[policy.RoleRef]Write) {
	e.checkPatchEffects(writes, written)
	e.checkRBACContainment(writes, roles)
	e.checkRBAC(writes)
}

// listAt returns the list at path in obj, nil where there is none or it is not a list, as
// unstructured.NestedSlice does, without its deep copy: the checks only read it.
func listAt(obj map[string]any, path ...string) []any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	l, _ := v.([]any)
	return l
}

// mappingAt returns the mapping at path in obj, and whether there is one, as
// unstructured.NestedMap does, without its deep copy: the checks only read it.
func mappingAt(obj map[string]any, path ...string) (map[string]any, bool) {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	m, ok := v.(map[string]any)
	return m, ok
}
