package routing

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/contract"
)

// Match selects mutations. Every field that is set must match; an empty Match matches
// everything. Namespace, Name and GenerateName match exactly, or by prefix when they end in
// '*'. Group is a pointer because "" is the core group: nil matches any group.
type Match struct {
	// Class is Configuration, Management or UserWorkload; empty matches every class.
	Class contract.Class `json:"class,omitempty"`
	// Group is the API group; "" is the core group; absent matches any group.
	Group *string `json:"group,omitempty"`
	// Resource is the plural resource, e.g. "configmaps".
	Resource string `json:"resource,omitempty"`
	// Namespace is the standalone namespace, exact or with a trailing '*'.
	Namespace string `json:"namespace,omitempty"`
	// Name is the standalone name, exact or with a trailing '*'.
	Name string `json:"name,omitempty"`
	// GenerateName is the generateName of a create without a name, exact or with a trailing '*'.
	GenerateName string `json:"generateName,omitempty"`
	// Labels must all be present on the object with these values.
	Labels map[string]string `json:"labels,omitempty"`
}

// Object is what a Match looks at: the mutation's class, its standalone identity, and the
// labels of its body (nil for bodies that are not objects, such as patches).
type Object struct {
	Class    contract.Class
	Identity contract.Identity
	Labels   map[string]string
}

// Matches reports whether the match selects o.
func (m Match) Matches(o Object) bool {
	id := o.Identity
	if m.Class != "" && m.Class != o.Class {
		return false
	}
	if m.Group != nil && *m.Group != id.Group {
		return false
	}
	if m.Resource != "" && m.Resource != id.Resource {
		return false
	}
	if !matchPattern(m.Namespace, id.Namespace) || !matchPattern(m.Name, id.Name) || !matchPattern(m.GenerateName, id.GenerateName) {
		return false
	}
	for k, v := range m.Labels {
		if got, ok := o.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func matchPattern(pattern, value string) bool {
	if pattern == "" {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(value, prefix)
	}
	return pattern == value
}

// Specificity ranks matches: each exact field counts 2, each prefix pattern 1, each label 1;
// a more specific match wins over a less specific one.
func (m Match) Specificity() int {
	score := 0
	pattern := func(p string) {
		switch {
		case p == "":
		case strings.HasSuffix(p, "*"):
			score++
		default:
			score += 2
		}
	}
	if m.Class != "" {
		score += 2
	}
	if m.Group != nil {
		score += 2
	}
	if m.Resource != "" {
		score += 2
	}
	pattern(m.Namespace)
	pattern(m.Name)
	pattern(m.GenerateName)
	return score + len(m.Labels)
}

// String prints the match for plans and messages.
func (m Match) String() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if m.Class != "" {
		add("class", string(m.Class))
	}
	if m.Group != nil {
		g := *m.Group
		if g == "" {
			g = `""`
		}
		add("group", g)
	}
	for _, kv := range [][2]string{{"resource", m.Resource}, {"namespace", m.Namespace}, {"name", m.Name}, {"generateName", m.GenerateName}} {
		if kv[1] != "" {
			add(kv[0], kv[1])
		}
	}
	for _, k := range slices.Sorted(mapKeys(m.Labels)) {
		add("label:"+k, m.Labels[k])
	}
	if len(parts) == 0 {
		return "*"
	}
	return strings.Join(parts, ",")
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Rule places the mutations it matches.
type Rule struct {
	// Name identifies the rule in plans; unique within a Table.
	Name string `json:"name"`
	// Match selects the mutations.
	Match Match `json:"match"`
	// Priority breaks ties between equally specific rules: higher wins.
	Priority int `json:"priority,omitempty"`
	// Cluster is the target cluster of an apply or absorbed disposition.
	Cluster string `json:"cluster,omitempty"`
	// Disposition is what happens; apply when empty.
	Disposition Disposition `json:"disposition,omitempty"`
	// Reason explains the disposition in plans.
	Reason string `json:"reason,omitempty"`
}

// Table is an ordered set of rules. The rule that decides a mutation is the most specific
// matching rule; among equally specific ones the highest priority; then the first name in
// lexical order (the karmada convention), so the outcome never depends on rule order.
type Table struct {
	Rules []Rule
}

var _ Router = (*Table)(nil)

// Route places one mutation. A mutation no rule matches is rejected.
func (t *Table) Route(o Object) Decision {
	var best *Rule
	for i := range t.Rules {
		r := &t.Rules[i]
		if !r.Match.Matches(o) {
			continue
		}
		if best == nil || better(r, best) {
			best = r
		}
	}
	if best == nil {
		return Decision{Disposition: Rejected, Rule: NoRule, Reason: fmt.Sprintf("no routing rule matches %s in class %s", o.Identity, o.Class)}
	}
	d := Decision{Cluster: best.Cluster, Disposition: best.Disposition, Rule: best.Name, Reason: best.Reason}
	if d.Disposition == "" {
		d.Disposition = Apply
	}
	if d.Disposition != Apply && d.Disposition != Absorbed {
		d.Cluster = ""
	}
	return d
}

// NoRule is the rule name of a mutation that no rule matched.
const NoRule = "no-matching-rule"

func better(a, b *Rule) bool {
	if sa, sb := a.Match.Specificity(), b.Match.Specificity(); sa != sb {
		return sa > sb
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.Name < b.Name
}

// Validate checks that rule names are unique and present, clusters are among clusters, and
// dispositions are known. Problems are returned with the index of their rule.
func (t *Table) Validate(clusters []string) []error {
	var errs []error
	for _, e := range t.FieldErrors(field.NewPath("rules"), clusters) {
		errs = append(errs, e)
	}
	return errs
}

// FieldErrors checks the table as Validate does and returns each problem with its field path
// below rules, the path of the rule list in the file it was read from.
func (t *Table) FieldErrors(rules *field.Path, clusters []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, r := range t.Rules {
		p := rules.Index(i)
		if r.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "every rule has a name: plans show it"))
		} else if j, dup := seen[r.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (also the name of rules[%d])", r.Name, j)))
		} else {
			seen[r.Name] = i
		}
		switch r.Disposition {
		case "", Apply, Absorbed:
			if !slices.Contains(clusters, r.Cluster) {
				errs = append(errs, field.NotSupported(p.Child("cluster"), r.Cluster, clusters))
			}
		case Dropped, Rejected:
			if r.Cluster != "" {
				errs = append(errs, field.Forbidden(p.Child("cluster"), fmt.Sprintf("a %s rule places nothing", r.Disposition)))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("disposition"), r.Disposition, []Disposition{Apply, Absorbed, Dropped, Rejected}))
		}
		if r.Match.Class != "" && (!r.Match.Class.Valid() || r.Match.Class == contract.ClassUnspecified) {
			errs = append(errs, field.NotSupported(p.Child("match", "class"), r.Match.Class, contract.Classes()[:3]))
		}
		if r.Match.Resource != "" && strings.ToLower(r.Match.Resource) != r.Match.Resource {
			errs = append(errs, field.Invalid(p.Child("match", "resource"), r.Match.Resource, "resources are lower-case plurals"))
		}
		for _, f := range []struct{ name, pattern string }{{"namespace", r.Match.Namespace}, {"name", r.Match.Name}, {"generateName", r.Match.GenerateName}} {
			if strings.Contains(strings.TrimSuffix(f.pattern, "*"), "*") {
				errs = append(errs, field.Invalid(p.Child("match", f.name), f.pattern, "'*' is allowed only at the end"))
			}
		}
	}
	return errs
}

// Overlaps reports whether some object could match both m and o: no field that both set
// differs (exact values, or patterns neither of which extends the other), and no label
// that both require has two values.
func (m Match) Overlaps(o Match) bool {
	if m.Class != "" && o.Class != "" && m.Class != o.Class {
		return false
	}
	if m.Group != nil && o.Group != nil && *m.Group != *o.Group {
		return false
	}
	if m.Resource != "" && o.Resource != "" && m.Resource != o.Resource {
		return false
	}
	for _, p := range [][2]string{{m.Namespace, o.Namespace}, {m.Name, o.Name}, {m.GenerateName, o.GenerateName}} {
		if !patternsOverlap(p[0], p[1]) {
			return false
		}
	}
	for k, v := range m.Labels {
		if w, ok := o.Labels[k]; ok && w != v {
			return false
		}
	}
	return true
}

// patternsOverlap reports whether some value matches both patterns of matchPattern.
func patternsOverlap(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	pa, wa := strings.CutSuffix(a, "*")
	pb, wb := strings.CutSuffix(b, "*")
	switch {
	case wa && wb:
		return strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
	case wa:
		return strings.HasPrefix(b, pa)
	case wb:
		return strings.HasPrefix(a, pb)
	}
	return a == b
}

// Shadows reports whether rule a ties with rule b (equally specific matches that overlap)
// and wins the tie (a higher priority, or an equal priority and the first name), so that b
// decides nothing where both match.
func (a Rule) Shadows(b Rule) bool {
	return a.Match.Specificity() == b.Match.Specificity() && a.Match.Overlaps(b.Match) && better(&a, &b)
}
