package parity

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// CauseKind names what made a difference between the standalone and the hosted object.
type CauseKind string

// The causes of differences.
const (
	// CausePlaced: a routing rule put the object on another cluster (management, guest).
	CausePlaced CauseKind = "placed"
	// CauseRenamed: the name mapping moved the object into a simulated namespace
	// (`ns/name` becomes `<hcp-namespace>/ns--name`), or onto an alias.
	CauseRenamed CauseKind = "renamed"
	// CauseShadowed: a cluster-scoped kind became its namespaced shadow kind (group suffixed).
	CauseShadowed CauseKind = "shadowed"
	// CauseConverted: the kind became another kind (a ClusterRole placed as a Role).
	CauseConverted CauseKind = "converted"
	// CauseAbsorbed: the object is not written; the hosted control plane already has it (a
	// Namespace, simulated).
	CauseAbsorbed CauseKind = "absorbed"
	// CauseDropped: a rule dropped the mutation.
	CauseDropped CauseKind = "dropped"
	// CauseRejected: a rule or check rejected the mutation; a plan with one writes nothing.
	CauseRejected CauseKind = "rejected"
	// CauseRecorded: topolayer recorded the standalone identity and the operator on the
	// object (annotations topolayer.dev/standalone-*, label topolayer.dev/operator).
	CauseRecorded CauseKind = "identity-recorded"
	// CauseReference: a reference to a renamed object was rewritten.
	CauseReference CauseKind = "reference-rewritten"
	// CauseTransform: a transform (a profile's, or a configured patch) changed the body.
	CauseTransform CauseKind = "transformed"
	// CauseOwner: the applier added the ownerReference to the HostedControlPlane.
	CauseOwner CauseKind = "owner-added"
	// CauseAdded: a rule of the hosted plan adds an object the operator did not write: a
	// service account its operands act as (guestidentity.Rule), a namespace on the
	// guest (plans.RuleGuestNamespace).
	CauseAdded CauseKind = "added"
	// CauseUnexplained: no rule explains the difference. A report with one fails.
	CauseUnexplained CauseKind = "unexplained"
)

// Cause is why one difference exists.
type Cause struct {
	// Kind says what kind of rule made it.
	Kind CauseKind `json:"kind"`
	// By names the rule, transform or step: "hosted/management", "hypershift/pull-secret",
	// "namespaces", "reference-table".
	By string `json:"by,omitempty"`
	// Detail says more: the rename, the disposition's reason, what could not be explained.
	Detail string `json:"detail,omitempty"`
}

// String prints "kind by (detail)".
func (c Cause) String() string {
	s := string(c.Kind)
	if c.By != "" {
		s += " by " + c.By
	}
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// Aspect is what part of an object a difference is in.
type Aspect string

// The aspects of an object.
const (
	// AspectDisposition: the hosted plan does not write the object (absorbed, dropped,
	// rejected), or one side lacks it.
	AspectDisposition Aspect = "disposition"
	// AspectCluster: the object is on another cluster.
	AspectCluster Aspect = "cluster"
	// AspectIdentity: the group, resource, namespace or name differ (Path names which).
	AspectIdentity Aspect = "identity"
	// AspectBody: a field of the body differs (Path is its field path).
	AspectBody Aspect = "body"
)

// Difference is one way the hosted object differs from the standalone one, with its causes.
type Difference struct {
	// Aspect is what differs; Path is where: a field path for the body, an identity field.
	Aspect Aspect `json:"aspect"`
	Path   string `json:"path,omitempty"`
	// Standalone and Hosted are the two values, printed ("(absent)" when a side lacks it).
	Standalone string `json:"standalone"`
	Hosted     string `json:"hosted"`
	// Causes are the rules that made the difference, in the order they acted.
	Causes []Cause `json:"causes"`
}

// Explained reports whether no cause of d is CauseUnexplained.
func (d Difference) Explained() bool {
	return !slices.ContainsFunc(d.Causes, func(c Cause) bool { return c.Kind == CauseUnexplained })
}

// Outcome sums up one object's differences.
type Outcome string

// The outcomes, from the most alike to the least.
const (
	// Identical: same identity and body, apart from topolayer's bookkeeping: the identity
	// annotations and operator label, and the owner reference to the HostedControlPlane. It
	// may be on another cluster (the guest, for the UserWorkload class).
	Identical Outcome = "identical"
	// RenamedOnly: besides the above, only the identity changed (simulated namespace, shadow
	// kind, converted kind) and the body fields that name it.
	RenamedOnly Outcome = "renamed"
	// Transformed: references were rewritten or transforms changed the body.
	Transformed Outcome = "transformed"
	// Absorbed: the hosted side does not write the object; its HCP counterpart exists.
	Absorbed Outcome = "absorbed"
	// Dropped: a rule dropped it on the hosted side.
	Dropped Outcome = "dropped"
	// Rejected: the hosted plan rejects it.
	Rejected Outcome = "rejected"
	// Unexplained: a difference that no rule explains.
	Unexplained Outcome = "unexplained"
)

// ObjectReport compares one object, matched by its standalone identity.
type ObjectReport struct {
	// Source is the standalone identity.
	Source contract.Identity `json:"source"`
	// Outcome sums up the differences.
	Outcome Outcome `json:"outcome"`
	// Standalone and Hosted are the final states; nil when a side has no object.
	Standalone *Object `json:"standalone,omitempty"`
	Hosted     *Object `json:"hosted,omitempty"`
	// Differences lists every difference with its causes.
	Differences []Difference `json:"differences"`
}

// Summary counts the objects per outcome.
type Summary struct {
	Objects     int `json:"objects"`
	Identical   int `json:"identical"`
	RenamedOnly int `json:"renamedOnly"`
	Transformed int `json:"transformed"`
	Absorbed    int `json:"absorbed"`
	Dropped     int `json:"dropped"`
	Rejected    int `json:"rejected"`
	Unexplained int `json:"unexplained"`
}

// String is the report's one-line count, e.g.
// "12 objects: 0 identical, 9 renamed only, 1 transformed, 2 absorbed, 0 unexplained".
// Dropped and rejected objects are counted only when there are some.
func (s Summary) String() string {
	parts := []string{
		fmt.Sprintf("%d identical", s.Identical),
		fmt.Sprintf("%d renamed only", s.RenamedOnly),
		fmt.Sprintf("%d transformed", s.Transformed),
		fmt.Sprintf("%d absorbed", s.Absorbed),
	}
	if s.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d dropped", s.Dropped))
	}
	if s.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%d rejected", s.Rejected))
	}
	parts = append(parts, fmt.Sprintf("%d unexplained", s.Unexplained))
	return fmt.Sprintf("%d objects: %s", s.Objects, strings.Join(parts, ", "))
}

func (s *Summary) add(o Outcome) {
	s.Objects++
	switch o {
	case Identical:
		s.Identical++
	case RenamedOnly:
		s.RenamedOnly++
	case Transformed:
		s.Transformed++
	case Absorbed:
		s.Absorbed++
	case Dropped:
		s.Dropped++
	case Rejected:
		s.Rejected++
	case Unexplained:
		s.Unexplained++
	}
}

// Report is the parity report of one operator's output: every object in its standalone and
// its hosted final state, each difference attributed to the rule that made it.
type Report struct {
	// Operator is the operator whose output was compared.
	Operator string `json:"operator"`
	// Objects are sorted by standalone identity.
	Objects []ObjectReport `json:"objects"`
	// Summary counts the objects per outcome.
	Summary Summary `json:"summary"`
}

// ErrUnexplained is wrapped by Report.Err when some difference has no cause.
var ErrUnexplained = errors.New("unexplained differences between the standalone and the hosted placement")

// Err returns nil when every difference is explained, and otherwise an error wrapping
// ErrUnexplained that names each unexplained difference.
func (r *Report) Err() error {
	var errs []error
	for _, o := range r.Objects {
		for _, d := range o.Differences {
			if d.Explained() {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %s: %s -> %s", o.Source, where(d), d.Standalone, d.Hosted))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w (%d): %w", ErrUnexplained, len(errs), errors.Join(errs...))
}

// Options are what the comparison needs to know of the hosted engine besides its plan. The
// zero value checks identities against the plan only.
type Options struct {
	// Names is the hosted name mapping. When set, every hosted identity is checked against
	// it.
	Names namespaces.Mapper
}

// OptionsFor returns the options of a hosted engine.
func OptionsFor(e translate.Engine) Options {
	return Options{Names: e.Names}
}

// Compare builds the parity report of two plans of the same output directory: standalone
// and hosted. Each plan is folded into its final state (see FinalState) and the two are
// compared with CompareObjects.
func Compare(standalone, hosted *plans.Plan, opts Options) (*Report, error) {
	s, err := FinalState(standalone)
	if err != nil {
		return nil, fmt.Errorf("standalone plan: %w", err)
	}
	h, err := FinalState(hosted)
	if err != nil {
		return nil, fmt.Errorf("hosted plan: %w", err)
	}
	return CompareObjects(s, h, hosted.Entries, opts)
}

// CompareObjects compares the standalone and the hosted final states of one operator's
// objects, matched by standalone identity (Object.Source), and attributes every difference
// using the hosted plan's entries: their dispositions and rules, and the changes the engine
// recorded in them (Entry.Changes). The objects may
// come from FinalState or from live clusters (a live object's Source is read from its
// identity annotations; server-set metadata must be removed first). It returns an error only
// when an object cannot be processed; unexplained differences are in the report (see Err).
func CompareObjects(standalone, hosted []Object, entries []plans.Entry, opts Options) (*Report, error) {
	c := comparer{opts: opts, entries: map[objectKey][]plans.Entry{}}
	var keys []objectKey
	seen := map[objectKey]bool{}
	addKey := func(k objectKey) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	r := &Report{Objects: []ObjectReport{}}
	for _, e := range entries {
		if r.Operator == "" {
			r.Operator = e.Operator
		}
		k := keyOf(e.Source)
		c.entries[k] = append(c.entries[k], e)
		addKey(k)
	}
	sides := map[objectKey][2]*Object{}
	for i := range standalone {
		k := keyOf(standalone[i].Source)
		s := sides[k]
		s[0] = &standalone[i]
		sides[k] = s
		addKey(k)
	}
	for i := range hosted {
		k := keyOf(hosted[i].Source)
		s := sides[k]
		s[1] = &hosted[i]
		sides[k] = s
		addKey(k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		o, err := c.object(sides[k][0], sides[k][1], c.entries[k])
		if err != nil {
			return nil, err
		}
		if o == nil {
			continue
		}
		r.Summary.add(o.Outcome)
		r.Objects = append(r.Objects, *o)
	}
	return r, nil
}

type comparer struct {
	opts    Options
	entries map[objectKey][]plans.Entry
}

// object compares one object; nil when neither side has anything to say about it.
func (c *comparer) object(s, h *Object, entries []plans.Entry) (*ObjectReport, error) {
	o := &ObjectReport{Standalone: s, Hosted: h, Differences: []Difference{}}
	switch {
	case s != nil:
		o.Source = s.Source
	case h != nil:
		o.Source = h.Source
	case len(entries) > 0:
		o.Source = entries[0].Source
	}
	// A disposition other than apply explains why the hosted side has no object.
	for _, d := range []routing.Disposition{routing.Rejected, routing.Dropped, routing.Absorbed} {
		i := slices.IndexFunc(entries, func(e plans.Entry) bool { return e.Disposition == d })
		if i < 0 {
			continue
		}
		e := entries[i]
		if s == nil && d != routing.Rejected {
			return nil, nil // nothing written on either side
		}
		detail := e.Reason
		if d == routing.Absorbed && e.Target.Cluster != "" {
			detail = strings.TrimPrefix(detail+"; stands for "+e.Target.Cluster+" "+identityName(e.Target.Identity), "; ")
		}
		o.Differences = append(o.Differences, Difference{
			Aspect: AspectDisposition, Standalone: "written", Hosted: string(d),
			Causes: []Cause{{Kind: CauseKind(d), By: e.Rule, Detail: detail}},
		})
		written := slices.DeleteFunc(slices.Clone(entries), func(e plans.Entry) bool { return e.Disposition != routing.Apply })
		if d == routing.Absorbed && h != nil && len(written) > 0 {
			// Absorbed on one cluster and written on another (a namespace the guest needs
			// too): the written object is compared like any other.
			diffs, err := c.compare(s, h, written)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.Source, err)
			}
			o.Differences = append(o.Differences, diffs...)
			o.Outcome = outcome(o.Differences, Outcome(d))
			return o, nil
		}
		if d != routing.Rejected && h != nil {
			o.Differences = append(o.Differences, unexplained(AspectDisposition, "", string(d), "written", "the hosted plan does not write it, yet the hosted side has it"))
		}
		o.Outcome = outcome(o.Differences, Outcome(d))
		return o, nil
	}
	switch {
	case s == nil && h == nil:
		return nil, nil
	case h == nil:
		o.Differences = append(o.Differences, unexplained(AspectDisposition, "", "written", "(absent)", "the hosted side has no such object"))
	case s == nil && len(entries) > 0 && !slices.ContainsFunc(entries, func(e plans.Entry) bool { return !addedBy(e.Rule) }):
		o.Differences = append(o.Differences, Difference{Aspect: AspectDisposition, Standalone: "(absent)", Hosted: "written",
			Causes: []Cause{{Kind: CauseAdded, By: entries[0].Rule, Detail: entries[0].Reason}}})
	case s == nil:
		o.Differences = append(o.Differences, unexplained(AspectDisposition, "", "(absent)", "written", "only the hosted side has it"))
	default:
		diffs, err := c.compare(s, h, entries)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Source, err)
		}
		o.Differences = diffs
	}
	o.Outcome = outcome(o.Differences, "")
	return o, nil
}

// addedBy reports whether a rule adds objects of its own to a hosted plan.
func addedBy(rule string) bool {
	return rule == guestidentity.Rule || rule == plans.RuleGuestNamespace
}

func unexplained(a Aspect, path, s, h, detail string) Difference {
	return Difference{Aspect: a, Path: path, Standalone: s, Hosted: h, Causes: []Cause{{Kind: CauseUnexplained, Detail: detail}}}
}

// outcome sums up the differences; fixed is the outcome a disposition decided.
func outcome(diffs []Difference, fixed Outcome) Outcome {
	o := Identical
	if fixed != "" {
		o = fixed
	}
	for _, d := range diffs {
		for _, c := range d.Causes {
			switch c.Kind {
			case CauseUnexplained:
				return Unexplained
			case CauseReference, CauseTransform, CauseAdded:
				if o == Identical || o == RenamedOnly {
					o = Transformed
				}
			case CauseRenamed, CauseShadowed, CauseConverted:
				if o == Identical {
					o = RenamedOnly
				}
			}
		}
	}
	return o
}

// compare lists the differences of two written objects.
func (c *comparer) compare(s, h *Object, entries []plans.Entry) ([]Difference, error) {
	var out []Difference
	rule := rulesOf(entries)
	if len(entries) == 0 {
		rule = ""
	}
	if s.Cluster != h.Cluster {
		d := Difference{Aspect: AspectCluster, Standalone: s.Cluster, Hosted: h.Cluster}
		if rule == "" {
			d.Causes = []Cause{{Kind: CauseUnexplained, Detail: "no hosted plan entry places it"}}
		} else {
			d.Causes = []Cause{{Kind: CausePlaced, By: rule, Detail: string(entries[0].Class) + " class on the " + h.Cluster + " cluster"}}
		}
		out = append(out, d)
	}
	out = append(out, c.identity(s, h, rule)...)
	if s.Deleted || h.Deleted {
		if s.Deleted != h.Deleted {
			out = append(out, unexplained(AspectDisposition, "", deletedWord(s.Deleted), deletedWord(h.Deleted), "one side deletes the object, the other does not"))
		}
		return out, nil
	}
	if !reflect.DeepEqual(s.PendingPatches, h.PendingPatches) {
		out = append(out, unexplained(AspectBody, "(pending patches)", strings.Join(s.PendingPatches, "\n"), strings.Join(h.PendingPatches, "\n"), "patch bodies differ; they are not rewritten"))
	}
	changes := diff(s.Body, h.Body)
	if len(changes) == 0 {
		return out, nil
	}
	if len(entries) == 0 {
		for _, ch := range changes {
			out = append(out, unexplained(AspectBody, ch.fieldPath, render(ch.old, ch.hasOld), render(ch.new, ch.hasNew), "no hosted plan entry to explain it"))
		}
		return out, nil
	}
	predicted, steps, err := predict(s.Body, h.Body, entries)
	if err != nil {
		return nil, fmt.Errorf("apply the recorded changes: %w", err)
	}
	for _, ch := range changes {
		d := Difference{Aspect: AspectBody, Path: ch.fieldPath, Standalone: render(ch.old, ch.hasOld), Hosted: render(ch.new, ch.hasNew)}
		if explains(predicted, h.Body, ch.path) {
			for _, st := range steps {
				if overlaps(st.path, ch.path) && !slices.Contains(d.Causes, st.cause) {
					d.Causes = append(d.Causes, st.cause)
				}
			}
		}
		if len(d.Causes) == 0 {
			pv, pok := lookup(predicted, ch.path)
			d.Causes = []Cause{{Kind: CauseUnexplained, Detail: "the recorded changes predict " + render(pv, pok)}}
		}
		out = append(out, d)
	}
	return out, nil
}

func deletedWord(deleted bool) string {
	if deleted {
		return "deleted"
	}
	return "written"
}

// identity compares group, resource, namespace, name and generateName, and checks the
// hosted identity against the name mapping when there is one.
func (c *comparer) identity(s, h *Object, rule string) []Difference {
	var out []Difference
	var want *contract.Identity
	var mapErr error
	if c.opts.Names != nil {
		t, err := c.opts.Names.ToTarget(h.Cluster, s.Source)
		want, mapErr = &t, err
	}
	field := func(name, sv, hv string, kind CauseKind, by, detail string) {
		if sv == hv {
			return
		}
		d := Difference{Aspect: AspectIdentity, Path: name, Standalone: orNone(sv), Hosted: orNone(hv), Causes: []Cause{{Kind: kind, By: by, Detail: detail}}}
		switch {
		case mapErr != nil:
			d.Causes = []Cause{{Kind: CauseUnexplained, Detail: "the name mapping fails: " + mapErr.Error()}}
		case want != nil && keyOf(*want) != keyOf(h.Identity):
			d.Causes = []Cause{{Kind: CauseUnexplained, Detail: "the name mapping gives " + want.String()}}
		}
		out = append(out, d)
	}
	si, hi := s.Identity, h.Identity
	groupKind := CauseShadowed
	if orig, ok := namespaces.IsShadowGroup(hi.Group); !ok || orig != si.Group {
		groupKind = CauseConverted
	}
	field("group", si.Group, hi.Group, groupKind, "namespaces", "cluster-scoped kinds become namespaced shadow kinds in the HCP namespace")
	field("resource", si.Resource, hi.Resource, CauseConverted, rule, "")
	const renamed = "simulated namespace"
	field("namespace", si.Namespace, hi.Namespace, CauseRenamed, "namespaces", renamed)
	field("name", si.Name, hi.Name, CauseRenamed, "namespaces", renamed)
	field("generateName", si.GenerateName, hi.GenerateName, CauseRenamed, "namespaces", renamed)
	slices.SortStableFunc(out, func(a, b Difference) int { return cmp.Compare(a.Aspect, b.Aspect) })
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func rulesOf(entries []plans.Entry) string {
	var rules []string
	for _, e := range entries {
		if !slices.Contains(rules, e.Rule) {
			rules = append(rules, e.Rule)
		}
	}
	if len(rules) == 1 {
		return rules[0]
	}
	data, _ := json.Marshal(rules)
	return string(data)
}

func identityName(id contract.Identity) string {
	name := id.Name
	if name == "" {
		name = id.GenerateName + "*"
	}
	if id.Namespace == "" {
		return name
	}
	return id.Namespace + "/" + name
}
