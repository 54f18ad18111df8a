package translate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// GuestIdentity configures RuleGuestIdentity. A nil *GuestIdentity (the standalone
// topology) changes nothing.
type GuestIdentity struct {
	// ManagementAPI selects the pod-bearing objects whose pods need the management API
	// server, or their service accounts (config topology.hosted.guestIdentity.managementAPI):
	// they keep their renamed service account's token, and the RBAC of that service account
	// stays in the HCP namespace. A match of serviceaccounts holds in every plan, also those
	// without the workload (the operator's RBAC may come in another run).
	ManagementAPI []routing.Match
}

// IsIdentityResource reports whether GuestIdentity.ManagementAPI may select resource: a
// pod-bearing one, or serviceaccounts.
func IsIdentityResource(resource string) bool {
	return podspec.IsPodBearing(resource) || resource == "serviceaccounts"
}

// needsManagementAPI reports whether a workload keeps its management identity.
func (g *GuestIdentity) needsManagementAPI(o routing.Object) bool {
	return slices.ContainsFunc(g.ManagementAPI, func(m routing.Match) bool { return m.Matches(o) })
}

// saKey is a standalone service account.
type saKey struct{ namespace, name string }

// placeGuestIdentities applies RuleGuestIdentity to the works placed so far. A service
// account of a standalone namespace that the management cluster simulates is a guest
// identity, unless a workload of the plan that needs the management API runs as it or
// GuestIdentity.ManagementAPI selects it: its pods run on the management cluster but act on
// the guest. So the pod-bearing objects placed on the management cluster are marked with
// the account they act as; the account's object, if the operator writes it, goes to the
// guest, and the bindings of guest identities with the roles they refer to follow (whether
// or not the plan holds the workload: the operator may write its RBAC in another run). It
// returns the entries it adds: the account on the guest when a workload of the plan acts as
// it and the operator does not write it, and the renamed, tokenless one on the management
// cluster that the pods run as.
func (e Engine) placeGuestIdentities(works []*work) []*work {
	if e.GuestIdentity == nil {
		return nil
	}
	var order []saKey
	acting := map[saKey]*work{}    // the first workload of the plan acting as each guest identity
	management := map[saKey]bool{} // the service accounts of workloads that need the management API
	for _, w := range works {
		src := w.entry.Source
		if !placedOn(w, routing.ClusterManagement) || w.src == nil || w.m.Metadata.Action.IsStatus() || src.Namespace == "" {
			continue
		}
		sa, ok := e.podServiceAccount(w)
		if !ok {
			continue
		}
		k := saKey{src.Namespace, sa}
		if e.GuestIdentity.needsManagementAPI(w.object()) {
			management[k] = true
			continue
		}
		w.guestSA = &k
		if acting[k] == nil {
			acting[k] = w
			order = append(order, k)
		}
	}
	// isGuest says whether a service account acts on the guest; class is the class of the
	// object that names it, for the configuration's matches.
	isGuest := func(k saKey, class contract.Class) bool {
		if k.namespace == "" || management[k] {
			return false
		}
		return !e.GuestIdentity.needsManagementAPI(routing.Object{Class: class, Identity: contract.Identity{Version: "v1", Resource: "serviceaccounts", Namespace: k.namespace, Name: k.name}})
	}
	for k := range acting {
		if !isGuest(k, acting[k].entry.Class) {
			management[k] = true // selected as a service account that needs the management API
		}
	}
	for _, w := range works {
		if w.guestSA != nil && management[*w.guestSA] {
			w.guestSA = nil // another workload acting as it needs the management API
		}
	}
	// A token Secret of a guest identity on the management cluster would be a management API
	// identity its pods do not need: not written, and the pods acting on the guest do not
	// mount it.
	dropped := map[string][]string{}   // standalone namespace: token Secrets not written
	var accounts map[contract.Key]bool // the service accounts the plan writes, once a token asks
	for _, w := range works {
		src := w.entry.Source
		if src.Group != "" || src.Resource != "secrets" || !placedOn(w, routing.ClusterManagement) || w.src == nil ||
			w.m.Metadata.Action.IsStatus() || w.src.Object["type"] != check.SecretTypeServiceAccountToken {
			continue
		}
		k := saKey{src.Namespace, w.src.GetAnnotations()[check.AnnotationServiceAccountName]}
		if accounts == nil {
			accounts = accountsWritten(works)
		}
		if k.name == "" || !isGuest(k, w.entry.Class) || !e.ownsAccount(accounts, k) {
			continue // another account's token is policy/service-account-token's to refuse
		}
		w.entry.Disposition, w.entry.Rule, w.entry.Target = routing.Dropped, guestidentity.Rule, plans.Target{}
		w.entry.Reason = fmt.Sprintf("a token of service account %s/%s, a guest identity: on the management cluster it would be a management API identity its operands do not need (they act on the guest as the account); not written, and not mounted into their pods", k.namespace, k.name)
		dropped[src.Namespace] = append(dropped[src.Namespace], src.Name)
	}
	tokens := map[string]*droppedSecrets{}
	for ns, names := range dropped {
		tokens[ns] = e.droppedSecrets(ns, names)
	}
	for _, w := range works {
		if w.guestSA != nil {
			w.droppedTokens = tokens[w.entry.Source.Namespace]
		}
	}

	// The service accounts the operator writes on the management side: to the guest.
	written := map[saKey]bool{}
	own := map[saKey]*work{}
	var ownOrder []saKey
	for _, w := range works {
		src := w.entry.Source
		if src.Group != "" || src.Resource != "serviceaccounts" || w.entry.Disposition != routing.Apply {
			continue
		}
		k := saKey{src.Namespace, src.Name}
		if w.entry.Target.Cluster == routing.ClusterGuest {
			written[k] = true
			continue
		}
		if !isGuest(k, w.entry.Class) || w.m.Metadata.Action.IsStatus() || !w.m.Metadata.Action.CarriesObject() || w.entry.Target.Cluster != routing.ClusterManagement {
			continue
		}
		own[k] = w
		ownOrder = append(ownOrder, k)
		e.moveToGuestAs(w, guestidentity.Rule, "a service account of a simulated namespace: its operands act on the guest as it")
		written[k] = true
	}
	var added []*work
	for _, k := range order {
		if management[k] {
			continue
		}
		if !written[k] {
			added = append(added, e.serviceAccountWork(acting[k], nil, k, routing.ClusterGuest, "the identity its operands act as on the guest"))
		}
	}
	// The renamed account the pods run as, on the management cluster, without a token: for
	// the workloads of the plan and for those of other runs that name an account it writes.
	seen := map[saKey]bool{}
	for _, k := range append(order, ownOrder...) {
		if seen[k] || management[k] {
			continue
		}
		seen[k] = true
		from := acting[k]
		if from == nil {
			from = own[k]
		}
		added = append(added, e.serviceAccountWork(from, own[k], k, routing.ClusterManagement, "its operands' pods run as it, without an API token"))
	}

	e.guestRBAC(works, isGuest)
	return added
}

// guestRBAC moves to the guest the bindings placed on the management cluster that bind a
// guest identity (and none that needs the management API), and the roles they refer to that
// no binding left on the management cluster refers to.
func (e Engine) guestRBAC(works []*work, isGuest func(saKey, contract.Class) bool) {
	type roleKey struct{ kind, namespace, name string }
	refOf := func(w *work, tree *yaml.RNode) (roleKey, bool) {
		ref := tree.Field("roleRef")
		if ref == nil {
			return roleKey{}, false
		}
		kind, name := yamlnode.FieldString(ref.Value, "kind"), yamlnode.FieldString(ref.Value, "name")
		if kind == "ClusterRole" {
			return roleKey{kind, "", name}, true
		}
		return roleKey{kind, w.entry.Source.Namespace, name}, true
	}
	moved, kept := map[roleKey]bool{}, map[roleKey]bool{}
	for _, w := range works {
		if !placedOn(w, routing.ClusterManagement) || !isBinding(w.entry.Source) || w.src == nil {
			continue
		}
		tree := w.readTree()
		ref, hasRef := refOf(w, tree)
		anyGuest, anyManagement := false, false
		for _, k := range serviceAccountSubjects(tree, w.entry.Source.Namespace) {
			if isGuest(k, w.entry.Class) {
				anyGuest = true
			} else {
				anyManagement = true
			}
		}
		switch {
		case anyGuest && !anyManagement:
			e.moveToGuestAs(w, guestidentity.Rule, "its subjects act on the guest as their standalone service accounts")
			if hasRef {
				moved[ref] = true
			}
		case anyGuest:
			w.entry.Warnings = append(w.entry.Warnings, guestidentity.Rule+": it binds service accounts acting on the guest and one that needs the management API; it stays on the management cluster, and grants nothing on the guest")
			fallthrough
		default:
			if hasRef {
				kept[ref] = true
			}
		}
	}
	for _, w := range works {
		src := w.entry.Source
		if !placedOn(w, routing.ClusterManagement) || src.Group != policy.GroupRBAC || w.src == nil {
			continue
		}
		var k roleKey
		switch src.Resource {
		case "roles":
			k = roleKey{"Role", src.Namespace, src.Name}
		case "clusterroles":
			k = roleKey{"ClusterRole", "", src.Name}
		default:
			continue
		}
		switch {
		case moved[k] && kept[k]:
			w.entry.Warnings = append(w.entry.Warnings, guestidentity.Rule+": bindings on both clusters refer to it; it stays on the management cluster, and the bindings moved to the guest refer to a role the guest lacks")
		case moved[k]:
			e.moveToGuestAs(w, guestidentity.Rule, "a binding of service accounts acting on the guest refers to it")
		}
	}
}

// serviceAccountSubjects returns the ServiceAccount subjects of a binding in namespace ns
// (a subject without a namespace is in the binding's).
func serviceAccountSubjects(obj *yaml.RNode, ns string) []saKey {
	var out []saKey
	for _, s := range bindingSubjects(obj) {
		if yamlnode.FieldString(s, "kind") != "ServiceAccount" {
			continue
		}
		k := saKey{yamlnode.FieldString(s, "namespace"), yamlnode.FieldString(s, "name")}
		if k.namespace == "" {
			k.namespace = ns
		}
		out = append(out, k)
	}
	return out
}

// podServiceAccount returns the service account the pods of w's source object run as, and
// false when it has no pod spec. An object whose pod specs name different accounts, or that
// cannot be searched, is rejected: its pods cannot all act as one guest identity.
func (e Engine) podServiceAccount(w *work) (string, bool) {
	sites, err := podspec.SitesOf(w.src)
	if err != nil {
		w.reject(guestidentity.Rule, fmt.Sprintf("%s: %v", w.entry.Source, err))
		return "", false
	}
	sa := ""
	for i, site := range sites {
		spec, _ := site.Spec.Get(w.src.Object).(map[string]any)
		name := serviceAccountOf(spec)
		if i > 0 && name != sa {
			w.reject(guestidentity.Rule, fmt.Sprintf("%s: %s names service account %s, another pod spec of the object %s: its pods cannot all act on the guest as one identity", w.entry.Source, site.Spec, name, sa))
			return "", false
		}
		sa = name
	}
	return sa, len(sites) > 0
}

// serviceAccountOf returns the service account of a pod spec: serviceAccountName, else the
// deprecated serviceAccount, else "default".
func serviceAccountOf(spec map[string]any) string {
	for _, field := range []string{"serviceAccountName", "serviceAccount"} {
		if v, ok := spec[field].(string); ok && v != "" {
			return v
		}
	}
	return "default"
}

// moveToGuestAs places w on the guest under its standalone identity, by rule.
func (e Engine) moveToGuestAs(w *work, rule, why string) {
	e.moveToGuest(w, why)
	if w.entry.Disposition == routing.Apply {
		w.entry.Rule = rule
	}
}

// GuestIdentityFieldManager is the field manager of the service accounts the guest-identity
// rule applies when the operator does not write them itself in the run.
const GuestIdentityFieldManager = "topolayer-guest-identity"

// serviceAccountWork returns an entry of service account k on cluster that the operator
// does not write there: on the guest its standalone identity, on the management cluster the
// renamed account its operands' pods run as, whose token is not mounted (the rewrite sets
// automountServiceAccountToken false and records it). The body is the operator's own
// service account object when it writes one (own), applied with its field manager, else a
// bare one applied with GuestIdentityFieldManager.
func (e Engine) serviceAccountWork(w, own *work, k saKey, cluster, why string) *work {
	id := contract.Identity{Version: "v1", Resource: "serviceaccounts", Namespace: k.namespace, Name: k.name}
	from := w
	var obj *yaml.RNode
	var bare map[string]any
	if own != nil && own.src != nil {
		from, obj = own, own.ownTree()
		id.Version = own.entry.Source.Version
	} else {
		// The tree a parse of the object's YAML gives, as the engine builds trees (keys in order).
		bare = map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": k.name, "namespace": k.namespace}}
		obj = yamlnode.TreeOf(bare)
	}
	class := contract.ClassUserWorkload
	if cluster == routing.ClusterManagement {
		class = w.entry.Class
	}
	m := &contract.Mutation{Class: class}
	m.Metadata.Action = contract.ActionApply
	m.Metadata.FieldManager = cmp.Or(from.m.Metadata.FieldManager, e.Operator)
	if bare != nil {
		// Not the operator's write: applied under a manager of its own, so that what the
		// operator applied to the account in an earlier run (its labels) stays; applied as
		// the operator, the bare account would remove it, and the operator would write it
		// again on its next run.
		m.Metadata.FieldManager = GuestIdentityFieldManager
	}
	m.Metadata.SetIdentity(id)
	reason := fmt.Sprintf("%s acts as it: %s", w.entry.Source, why)
	if w == own {
		reason = "the pods of workloads that name it run as it, without an API token"
	}
	sw := &work{m: m, obj: obj, tokenless: cluster == routing.ClusterManagement, entry: plans.Entry{
		Operator: e.Operator, Class: class, Action: m.Metadata.Action, Source: id,
		Disposition: routing.Apply, Rule: guestidentity.Rule,
		Reason:     reason,
		Transforms: []string{}, Warnings: []string{},
	}}
	if bare != nil {
		sw.src = &unstructured.Unstructured{Object: bare} // unstructuredOf's result for an object of strings
	} else if sw.src = yamlnode.Unstructured(obj); sw.src == nil {
		return sw.reject(plans.RuleBody, "the service account is not an object")
	}
	// The source mutation carries its object; its body is written from it if anyone asks
	// (contract.Mutation.Bytes): the engine rewrites the object and writes the target's.
	sw.m.Object = sw.src
	target, err := e.Names.ToTarget(cluster, id)
	if err != nil {
		return sw.reject(plans.RuleNameMapping, err.Error())
	}
	sw.entry.Target = plans.Target{Cluster: cluster, Identity: target}
	return sw
}

// disableToken sets a service account's automountServiceAccountToken to false.
func disableToken(obj *yaml.RNode) error {
	return obj.PipeE(yaml.SetField("automountServiceAccountToken", falseNode()))
}

func falseNode() *yaml.RNode {
	return yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: "false"})
}

// guestIdentities returns the guest identities of the works that are applied, in plan order.
func guestIdentities(works []*work) []plans.GuestServiceAccount {
	var out []plans.GuestServiceAccount
	at := map[saKey]int{}
	for _, w := range works {
		if w.guestSA == nil || w.entry.Disposition != routing.Apply {
			continue
		}
		k := *w.guestSA
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, plans.GuestServiceAccount{Namespace: k.namespace, Name: k.name, Secret: guestidentity.SecretName(k.namespace, k.name)})
		}
		out[i].Workloads = append(out[i].Workloads, w.entry.Source)
	}
	return out
}

// RuleServiceAccountToken sees it: the plan writes it (accounts, accountsWritten's), or the
// operator declares it.
func (e Engine) ownsAccount(accounts map[contract.Key]bool, k saKey) bool {
	sa := check.ServiceAccountID(k.namespace, k.name)
	return e.declaresAccount(sa) || accounts[sa.Key()]
}

// accountsWritten returns the service accounts the plan writes, so that each token Secret
// asks a set rather than every entry of the plan.
func accountsWritten(works []*work) map[contract.Key]bool {
	out := map[contract.Key]bool{}
	for _, w := range works {
		if src := w.entry.Source; src.Group == "" && src.Resource == "serviceaccounts" && check.Writes(w) {
			out[src.Key()] = true
		}
	}
	return out
}

// droppedSecrets are the token Secrets of one standalone namespace that RuleGuestIdentity does
// not write, by their names on the management cluster, where the workloads of the namespace
// run: mapped once for all of them. err is the first name that does not map.
type droppedSecrets struct {
	targets []string
	err     error
}

// droppedSecrets maps the token Secrets names of namespace ns to the management cluster.
func (e Engine) droppedSecrets(ns string, names []string) *droppedSecrets {
	d := &droppedSecrets{}
	for _, name := range names {
		secret, err := e.Names.ToTarget(routing.ClusterManagement, contract.Identity{Version: "v1", Resource: "secrets", Namespace: ns, Name: name})
		if err != nil {
			d.err = fmt.Errorf("%s: secret %s: %w", guestidentity.Rule, name, err)
			return d
		}
		d.targets = append(d.targets, secret.Name)
	}
	return d
}

// declaresAccount reports whether the operator declares service account sa among its
// outputs, in its output-resources or the configuration's supplement.
func (e Engine) declaresAccount(sa contract.Identity) bool {
	return len(e.Declared.ClassesOf(sa)) > 0 || len(e.Supplement.ClassesOf(sa)) > 0
}

// RuleGuestSubjects places on the guest the RoleBindings, ClusterRoleBindings and the Roles
// they bind that the routing table put on the management cluster but whose subjects are
// users or groups: those are the guest's users (the real cluster-authentication-operator
// lets system:authenticated read its serving-cert CA), never the shared management
// cluster's. RBAC lands where its subjects act.
const RuleGuestSubjects = "hosted/rbac-follows-subjects"

// placeGuestSubjects moves to the guest the bindings placed on the management cluster whose
// subjects include a user or a group, and the Roles of the plan they bind.
func (e Engine) placeGuestSubjects(works []*work) {
	type roleKey struct{ namespace, name string }
	moved := map[roleKey]bool{}
	for _, w := range works {
		if !placedOn(w, routing.ClusterManagement) || !isBinding(w.entry.Source) || w.src == nil {
			continue
		}
		tree := w.readTree()
		if !bindsUsersOrGroups(tree) {
			continue
		}
		e.moveToGuest(w, "its subjects are users or groups, who act on the guest")
		if ref := tree.Field("roleRef"); ref != nil && yaml.GetValue(ref.Value.Field("kind").Value) == "Role" {
			moved[roleKey{w.entry.Source.Namespace, yaml.GetValue(ref.Value.Field("name").Value)}] = true
		}
	}
	for _, w := range works {
		src := w.entry.Source
		if placedOn(w, routing.ClusterManagement) && src.Group == policy.GroupRBAC && src.Resource == "roles" && moved[roleKey{src.Namespace, src.Name}] {
			e.moveToGuest(w, "a binding of users or groups on the guest refers to it")
		}
	}
}

func placedOn(w *work, cluster string) bool {
	return w.entry.Disposition == routing.Apply && w.entry.Target.Cluster == cluster
}

func isBinding(id contract.Identity) bool {
	return id.Group == policy.GroupRBAC && (id.Resource == "rolebindings" || id.Resource == "clusterrolebindings")
}

// bindingSubjects returns the elements of a binding's subjects: none when the field is
// absent or not a list.
func bindingSubjects(obj *yaml.RNode) []*yaml.RNode {
	subjects := obj.Field("subjects")
	if subjects == nil {
		return nil
	}
	elems, err := subjects.Value.Elements()
	if err != nil {
		return nil
	}
	return elems
}

// bindsUsersOrGroups reports whether a binding's subjects include a User or a Group.
func bindsUsersOrGroups(obj *yaml.RNode) bool {
	for _, s := range bindingSubjects(obj) {
		if k := s.Field("kind"); k != nil {
			if kind := yaml.GetValue(k.Value); kind == "User" || kind == "Group" {
				return true
			}
		}
	}
	return false
}

// moveToGuest places w on the guest under its standalone identity.
func (e Engine) moveToGuest(w *work, why string) {
	target, err := e.Names.ToTarget(routing.ClusterGuest, w.entry.Source)
	if err != nil {
		w.reject(plans.RuleNameMapping, err.Error())
		return
	}
	w.entry.Target = plans.Target{Cluster: routing.ClusterGuest, Identity: target}
	w.entry.Rule = RuleGuestSubjects
	w.entry.Reason = fmt.Sprintf("placed on the guest instead of the management cluster: %s", why)
}
